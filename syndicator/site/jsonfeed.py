"""The merged stream as JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/), written in pieces.

The Atom feed (feed.xml) is a template like the pages; this one is built
here, from the same page entries (:mod:`pageentry`), so its ids, titles,
dates, content and categories (``tags``) are the Atom feed's.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from typing import Any

from syndicator.configtypes import Config
from syndicator.site.pageentry import PageEntry


def _attachments(e: PageEntry) -> dict[str, Any]:
    """JSON Feed 1.1 ``attachments`` of an entry ({} when it has none); ``mime_type`` is required there."""
    attachments = []
    for m in e.enclosures:
        attachment: dict[str, Any] = {"url": m.url, "mime_type": m.mime_type or "application/octet-stream"}
        if m.length:
            attachment["size_in_bytes"] = m.length
        if m.duration:
            attachment["duration_in_seconds"] = m.duration
        attachments.append(attachment)
    return {"attachments": attachments} if attachments else {}


def json_feed(
    config: Config,
    base: str,
    entries: Sequence[PageEntry],
    *,
    path: str = "feed.json",
    title: str | None = None,
    home: str | None = None,
    next_url: str | None = None,
) -> Iterable[str]:
    """The merged stream as JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/); with ``config.hubs``,
    its ``hubs`` name them (type ``WebSub``) beside its absolute ``feed_url``, the topic they are told of.

    ``base`` is the planet's link ending in "/"; ``entries`` are the page entries feed.xml carries.
    A site's or category's feed of the archive (:mod:`archivepages`) gives its own ``path`` in the site,
    ``title``, ``home`` page and ``next_url`` (its older page, JSON Feed 1.1 pagination), and names no hub.
    Returns the document in pieces of text, a newline last (Iterable[str]).
    """
    own = path != "feed.json"
    items: list[dict[str, Any]] = []
    for e in entries:
        item: dict[str, Any] = {"id": e.atom_id, "title": e.title}
        if e.link:
            item["url"] = e.link
        item.update(
            {
                "content_html": str(e.summary if config.feed_content == "summary" else e.content),
                "date_published": e.published,
                "date_modified": e.updated,
                **({"authors": [{"name": e.author}]} if e.author_known else {}),
                **_attachments(e),
                **({"image": e.image_url} if e.image_url else {}),
                **({"language": e.language} if e.language else {}),
                **({"tags": list(e.categories)} if e.categories else {}),
                "_source": {"title": e.site_name, "feed_url": e.site_feed, "home_page_url": e.site_link},
            }
        )
        items.append(item)
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": title or config.title,
        **({"description": config.description} if config.description else {}),
        **({"authors": [{"name": config.owner}]} if config.owner else {}),
        "home_page_url": home or config.link,
        "feed_url": base + path,
        **({"next_url": next_url} if next_url else {}),
        # JSON Feed 1.1 "hubs": the WebSub hubs announce.py notifies of a change to this file.
        **({"hubs": [{"type": "WebSub", "url": hub} for hub in config.hubs]} if config.hubs and not own else {}),
        **_feed_language(config, entries),
        "items": items,
    }
    return itertools.chain(json.JSONEncoder(ensure_ascii=False, indent=1).iterencode(document), ("\n",))


def _feed_language(config: Config, entries: Sequence[PageEntry]) -> dict[str, str]:
    """JSON Feed 1.1 top-level ``language`` ("the primary language for the feed"): the one every item
    states when they all state the same, else the planet's ``language`` if it sets one, else {}; each
    item states its own."""
    languages = {e.language for e in entries}
    only = next(iter(languages)) if len(languages) == 1 else None
    chosen = only or config.language
    return {"language": chosen} if chosen else {}
