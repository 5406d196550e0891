"""Which sources are due, and when each is next attempted. Pure: no I/O, no clock.

Every function takes ``now`` (UTC) from its caller; one ``now`` per build.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from .model import SourceState


def due_sources(urls: Iterable[str], states: Mapping[str, SourceState], now: datetime,
                force: bool = False) -> list[str]:
    """The configured URLs to fetch in this build, most overdue first.

    Args:
        urls: configured feed URLs.
        states: stored state per URL (a missing URL was never attempted).
        now: the build's clock (UTC).
        force: fetch every source now.
    Returns:
        the due URLs; never-attempted sources come first, then by how long
        they are overdue, then in the order given.
    """
    urls = list(urls)
    due = [url for url in urls if force or is_due(states.get(url), now)]
    position = {url: index for index, url in enumerate(urls)}

    def overdue(url: str) -> tuple[int, float, int]:
        state = states.get(url)
        if state is None or state.next_attempt is None:
            return (0, 0.0, position[url])
        return (1, state.next_attempt.timestamp(), position[url])

    return sorted(due, key=overdue)


def is_due(state: SourceState | None, now: datetime) -> bool:
    """True if a source should be fetched at ``now`` (never attempted, or its time has come)."""
    return state is None or state.next_attempt is None or state.next_attempt <= now
