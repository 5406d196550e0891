"""Which stored entries a planet publishes: its ``filters`` and its sites' (keep and drop rules).

A filter never changes what is stored, only what a planet publishes: selection asks
:func:`passes` of every stored entry before it takes a feed's newest, so a changed filter applies to
the stored history at the next build, without a fetch.
"""

from __future__ import annotations

from datetime import datetime

from syndicator.configtypes import Config, Site
from syndicator.feedtypes import StoredEntry


def passes(config: Config, site: Site, stored: StoredEntry, now: datetime) -> bool:
    """True when the planet ``config`` publishes ``stored``, an entry of ``site``'s feed, at ``now`` (UTC)."""
    return True
