"""Make ``time.sleep`` work under libfaketime with ``FAKETIME_DONT_FAKE_MONOTONIC=1``.

Debian 12's libfaketime (0.9.10) turns the absolute monotonic deadline of
``clock_nanosleep``, which CPython's ``time.sleep`` uses, into an invalid
one, so every sleep fails with ``OSError: [Errno 22]`` (while ``select`` and
the timed waits of locks and conditions work). The suite is run that way
to prove that no test depends on the real date (README, Development), so
under such a clock, and only then, ``time.sleep`` waits in ``select``
instead. tests/conftest.py applies this to the test process and, through
PYTHONPATH, to the Python processes the tests start.
"""

from __future__ import annotations

import select
import time


def _sleep_in_select(seconds: float) -> None:
    """time.sleep(seconds) as a select() timeout, to the same monotonic deadline."""
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        select.select([], [], [], left)


def sleep_is_broken() -> bool:
    """Whether time.sleep fails here with EINVAL (libfaketime's clock_nanosleep)."""
    try:
        time.sleep(1e-6)
    except OSError:
        return True
    return False


def apply() -> bool:
    """Replace time.sleep when it is broken; True when it is replaced (now or before)."""
    if time.sleep is not _sleep_in_select and sleep_is_broken():
        time.sleep = _sleep_in_select
    return time.sleep is _sleep_in_select


apply()
