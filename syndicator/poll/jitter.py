"""The jitter that keeps due times off round clock times. Pure: no I/O, no clock.

A planned interval (:func:`syndicator.poll.intervals.plan`) is shortened by
a stable share from the source URL, a small random share from the URL and
``now`` (so a replayed build, ``--now``, plans the same times) and 1-59 s
(seed 001). The budget's model of requests (:mod:`syndicator.poll.schedule`)
counts its mean share, :data:`MEAN_JITTER`. What the intervals are is not
here: see :mod:`syndicator.poll.intervals`.
"""

from __future__ import annotations

import hashlib
import random
from datetime import datetime

#: Share of the interval used for jitter (stable part 80 %, random part 20 %).
JITTER_FRACTION = 0.1


def jitter(url: str, now: datetime, interval: float, floor: float, ceiling: float) -> float:
    """Seconds to wait: ``interval`` less a stable and a small random offset, never below ``floor``.

    The offset is ``interval * JITTER_FRACTION * (0.8 * stable + 0.2 * random)``
    plus 1-59 s, where ``stable`` comes from the URL and ``random`` from the
    URL and ``now``. It is subtracted: a check is never later than its
    interval says (with builds every ``min_interval``, a later due time
    would wait a whole extra build), and never sooner than ``floor``, so a
    feed at ``min_interval`` is checked exactly that often. ``ceiling``
    bounds ``interval`` itself.
    """
    stable = _unit(url)
    noise = random.Random(f"{url} {now.isoformat()}").random()
    offset = interval * JITTER_FRACTION * (0.8 * stable + 0.2 * noise) + 1 + 58 * _unit(url + "#s")
    return max(floor, min(interval, ceiling) - offset)


#: The mean share of an interval :func:`jitter` takes off (its stable and random parts average one half).
MEAN_JITTER = JITTER_FRACTION / 2


def _unit(text: str) -> float:
    """A stable number in [0, 1) from ``text``."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2.0**64
