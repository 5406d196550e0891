"""The same feed listed under two names in sites.yaml: allowed, but likely a mistake, so said as a warning.

Two sites have the same feed when their feed URLs are equal as :func:`urls.canonical` compares them
(RFC 3986 section 6.2: case of scheme and host, default port, fragment, tracking parameters), as
``syndicator import`` and ``add`` compare a new feed with those listed. Such sites share one copy
of the feed, and each post shows once, under one of the names (``site/selection.py``, rule 2 and 3).
A private feed (``credentials:``) is another feed than the same URL without those credentials.
"""

from __future__ import annotations

from syndicator.configtypes import Config
from syndicator.urls import canonical

__all__ = ["duplicate_feeds"]


def duplicate_feeds(config: Config) -> list[str]:
    """One warning line per site whose feed an earlier site of ``config`` already lists, in file order,
    naming both sites and their lines in sites.yaml (list of str; empty when every feed is listed once).

    A site of the same feed URL that gives another ``user_agent`` or other ``headers`` than the first
    gets one more line: the feed is fetched once, with the first site's (:meth:`Config.request_for`).

    For example: ``sites.yaml:12: sites[3] 'Beta' lists the feed of sites[0] 'Alpha' (line 5),
    <https://a.example.org/feed>; each post shows once, under one of the names: keep one (syndicator
    remove 'Beta')``.
    """
    first: dict[tuple[str, str | None], int] = {}
    lines = []
    for index, site in enumerate(config.sites):
        key = (canonical(site.url), site.credential.name if site.credential else None)
        if key not in first:
            first[key] = index
            continue
        earlier = config.sites[first[key]]
        if site.feed == earlier.feed and (site.user_agent, site.headers) != (earlier.user_agent, earlier.headers):
            lines.append(
                f"{config.path}:{site.line}: sites[{index}] {site.name!r} asks for another user_agent or other "
                f"request headers than sites[{first[key]}] {earlier.name!r} (line {earlier.line}) for the same feed; "
                f"the feed is fetched once, with those of sites[{first[key]}]"
            )
        lines.append(
            f"{config.path}:{site.line}: sites[{index}] {site.name!r} lists the feed of sites[{first[key]}] "
            f"{earlier.name!r} (line {earlier.line}), <{site.public_feed or site.feed}>; each post shows once, "
            f"under one of the names: keep one (syndicator remove {site.name!r})"
        )
    return lines
