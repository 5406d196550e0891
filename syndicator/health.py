"""The health rule of the sites page and ``syndicator status``: :class:`SiteStatus` (what is shown of
one site), its health word, and the order that puts sites in trouble first.

It holds no I/O: ``drivers/status.py`` and ``site/render.py`` build and show these from the state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from syndicator.configtypes import Site
from syndicator.model import SourceState


@dataclass(frozen=True)
class SiteStatus:
    """What the sites page shows about one site.

    Attributes:
        site: the subscription.
        state: its source's durable state, or None if never attempted.
        stale: True when the last success is older than ``stale_after``
            (or there never was one while attempts were made); never for a
            paused site, which is not checked.
        entries: number of entries its snapshot holds.
        last_post: the date of its newest entry (its first-seen time when
            undated; UTC), or None when it holds none.
        inactive: True when its newest entry is older than ``activity_threshold``.
    """

    site: Site
    state: SourceState | None
    stale: bool
    entries: int
    last_post: datetime | None = None
    inactive: bool = False

    @property
    def health(self) -> str:
        """The site's health as ``syndicator status`` names it (str): ``paused`` (``enabled: false``),
        ``new`` (never attempted), ``gone`` (410, on hold), ``denied`` (401 or 403, a private feed's
        credentials refused included), ``failing``
        (another failure) or ``ok``."""
        if not self.site.enabled:
            return "paused"
        if self.state is None or self.state.last_attempt is None:
            return "new"
        kind = self.state.error_kind
        if kind is None:
            return "ok"
        gone = "gone" if self.state.hold is not None else "failing"
        return {"http_410": gone, "http_401": "denied", "credentials": "denied"}.get(kind, "failing")


def by_health(statuses: Sequence[SiteStatus]) -> list[SiteStatus]:
    """The sites page's order: sites in trouble (failing, denied, gone) first, then stale ones, then
    inactive ones, then the rest, each in sites.yaml order."""
    return sorted(
        statuses,
        key=lambda status: 0 if status.health in TROUBLE else 1 if status.stale else 2 if status.inactive else 3,
    )


#: The healths of a site in trouble: shown first, and by ``status --failing``.
TROUBLE = ("failing", "denied", "gone")
