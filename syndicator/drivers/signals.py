"""Signals: for the long-running commands (``serve``, ``worker``), handled on a thread of their own;
for ``build``, SIGTERM raised as Ctrl-C is (:func:`terminate_as_interrupt`).

A Python signal handler runs in the main thread between two of its steps, whatever the main thread
holds: a handler that puts on a :class:`queue.Queue` or sets a :class:`threading.Event` while the main
thread is inside that queue's or event's lock waits for itself forever (their locks are not
reentrant; the Python documentation only calls :class:`queue.SimpleQueue` safe there). So the signals
are blocked in every thread (``pthread_sigmask``, inherited by the threads started later) and one
thread takes them with ``sigwait`` and runs the action as ordinary code. Where the platform has no
``pthread_sigmask`` (Windows), the actions are plain handlers.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import FrameType


def handle_on_a_thread(actions: Mapping[signal.Signals, Callable[[], None]]) -> None:
    """Run ``actions[number]`` (no arguments) each time the process receives that signal.

    Call it before any other thread starts: a thread started earlier keeps the signals unblocked and
    may take one with the default action.
    """
    if not hasattr(signal, "pthread_sigmask"):
        for number, action in actions.items():
            signal.signal(number, lambda *_, act=action: act())
        return
    numbers = set(actions)
    signal.pthread_sigmask(signal.SIG_BLOCK, numbers)

    def take() -> None:
        while True:
            actions[signal.Signals(signal.sigwait(numbers))]()

    threading.Thread(target=take, name="signals", daemon=True).start()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread where Ctrl-C raises KeyboardInterrupt (a subclass of it, so
    everything that unwinds on Ctrl-C unwinds the same way on SIGTERM)."""

    #: The exit code a shell gives a command ended by SIGTERM (128 + 15).
    exit_code = 128 + signal.SIGTERM


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread, between two of its steps,
    as Ctrl-C raises KeyboardInterrupt: a one-shot command (``build``) ends as it does on Ctrl-C (every
    transaction open is rolled back, a publish not yet swapped in is removed, the locks are released).
    The handler before is put back at the end. Call it from the main thread.
    """

    def raise_terminated(_number: int, _frame: FrameType | None) -> None:
        raise Terminated

    before = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
