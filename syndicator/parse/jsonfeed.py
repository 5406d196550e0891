"""JSON Feed 1.0 and 1.1 (https://www.jsonfeed.org/version/1.1/) -> entry drafts.

A helper of :mod:`parse`, which turns drafts into entries. Rules:

* ``title`` is plain text; one that looks like HTML (it holds an entity or
  an end tag, as many real JSON feeds write ``&amp;`` or ``&#8217;``) has
  its entities decoded once and any markup stripped;
* ``content_html`` is sanitized, ``content_text`` and ``summary`` are
  plain text, their character references decoded once (``&hellip;`` is an
  ellipsis; ``&amp;lt;`` shows as ``&lt;``); a ``summary`` holding an
  element with its end tag is HTML in practice and is sanitized as HTML;
  author names have their references decoded once too;
* ``date_published``, else ``date_modified`` (RFC 3339) is the date;
* relative URLs resolve against the item's ``url``, the feed's
  ``home_page_url``, then the fetch URL;
* ``attachments`` count as enclosures for identity, and are kept as the
  entry's enclosures (:mod:`media`);
* an item without ``authors`` (1.0: ``author``) takes the feed's;
* an item's ``tags`` (a list of strings) are its categories, normalised by
  :mod:`categories`;
* an item's language is its ``language``, else the feed's top-level
  ``language`` (JSON Feed 1.1 defines both), when it is a well-formed BCP 47
  tag (:func:`language.language_tag`);
* the WebSub hubs are the ``hubs`` objects whose ``type`` is ``WebSub``
  (in any case) and the self URL is ``feed_url``, resolved against the fetch
  URL and kept as :func:`hubs.collect` keeps them; anything else in
  ``hubs`` is ignored.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import datetime
from typing import Any

from syndicator import dates
from syndicator.dates import DATE_MAX_CHARS
from syndicator.errors import ParseError
from syndicator.feedtypes import Entry
from syndicator.language import language_tag
from syndicator.parse import media
from syndicator.parse.authors import author_name
from syndicator.parse.categories import normalised
from syndicator.parse.hubs import MAX_CANDIDATES, Advertised, collect
from syndicator.parse.identity import Candidate, Draft
from syndicator.parse.limits import RAW_FIELD_FACTOR, TITLE_MAX_CHARS, Budget
from syndicator.parse.markup import holds_element
from syndicator.parse.sanitize import clean_html, decode_references, html_to_text, one_line, text_to_html
from syndicator.urls import absolute

_LOOKS_LIKE_HTML = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]+\d*);|</[A-Za-z][A-Za-z0-9]*\s*>")


def plain_title(value: str) -> str:
    """A title that should be plain text but may carry HTML entities (str -> str),
    at most :data:`limits.TITLE_MAX_CHARS` characters."""
    value = value[: TITLE_MAX_CHARS * RAW_FIELD_FACTOR]
    text = html_to_text(value) if _LOOKS_LIKE_HTML.search(value) else one_line(value)
    return text[:TITLE_MAX_CHARS].rstrip()


def read_json_feed(
    text: str, url: str, now: datetime, budget: Budget | None = None
) -> tuple[str, str | None, list[Draft], str, Advertised]:
    """Read a JSON Feed document.

    Args:
        text: the decoded document (str).
        url: the fetch URL, the last-resort base.
        now: the build's clock (UTC), for :func:`dates.trusted`.
        budget: the parse budget, checked for every item (None: no budget).
    Returns:
        (feed title, feed home page or None, drafts in document order, format
        such as "json11", the WebSub hubs and self URL).
    Raises:
        ParseError: invalid JSON, or not a JSON Feed; kind ``too_complex``
            past the budget.
        RecursionError: JSON nested beyond Python's recursion limit (the
            caller, :func:`parse.parse_feed`, makes it ``too_complex``).
    """
    try:
        document = json.loads(text, strict=False)
    except ValueError as e:
        raise ParseError(url, f"invalid JSON Feed: {one_line(str(e))[:160]}") from e
    if not isinstance(document, dict) or "jsonfeed.org/version/" not in str(document.get("version", "")):
        raise ParseError(url, "not a JSON Feed: missing jsonfeed.org version")
    if not isinstance(document.get("items"), list):
        raise ParseError(url, "invalid JSON Feed: no items list")
    version = str(document["version"])
    feed_link = absolute(document.get("home_page_url"), url)
    feed_author = _author(document)
    feed_language = language_tag(document.get("language"))
    drafts = []
    for item in document["items"]:
        if budget is not None:
            budget.check("reading items")
        if isinstance(item, dict):
            draft = _with_media(_item(item, feed_link, url, now, feed_author), item, feed_link or url)
            language = language_tag(item.get("language")) or feed_language
            drafts.append(replace(draft, entry=replace(draft.entry, language=language)) if language else draft)
    return (
        plain_title(_str(document.get("title"))),
        feed_link,
        drafts,
        "json" + version.rstrip("/").rsplit("/", 1)[-1].replace(".", ""),
        _websub(document, url),
    )


def _websub(document: dict[str, Any], url: str) -> Advertised:
    """JSON Feed 1.1 ``hubs`` of type WebSub and ``feed_url``, resolved against the fetch URL."""
    hubs = document.get("hubs")
    hubs = hubs[:MAX_CANDIDATES] if isinstance(hubs, list) else []
    links = [("self", document.get("feed_url"))]
    links += [
        ("hub", hub.get("url"))
        for hub in hubs
        if isinstance(hub, dict) and _str(hub.get("type")).strip().lower() == "websub"
    ]
    return collect(links, url)


def _item(item: dict[str, Any], feed_link: str | None, url: str, now: datetime, feed_author: str | None) -> Draft:
    link = absolute(item.get("url"), feed_link or url) or absolute(item.get("external_url"), feed_link or url)
    base = link or feed_link or url
    if isinstance(item.get("content_html"), str):
        content = clean_html(item["content_html"], base)
    else:
        content = text_to_html(decode_references(_str(item.get("content_text"))))
    summary = _str(item.get("summary"))
    summary = clean_html(summary, base) if holds_element(summary) else text_to_html(decode_references(summary))
    notes: list[str] = []
    chosen: list[datetime | None] = []
    raws = [one_line(_str(item.get(key))) for key in ("date_published", "date_modified")]
    for raw in raws:
        value = dates.parse_date(raw) if raw else None
        if raw and value is None:
            notes.append(f"unreadable date {raw[:DATE_MAX_CHARS]!r}")
        trusted, why = dates.trusted(value, now)
        if why:
            notes.append(why)
        chosen.append(trusted)
    date = chosen[0] or chosen[1]
    item_id = item.get("id")
    guid = one_line(str(item_id)) if isinstance(item_id, str | int) and not isinstance(item_id, bool) else ""
    title = plain_title(_str(item.get("title")))
    attachments = item.get("attachments")
    attachments = attachments if isinstance(attachments, list) else []
    enclosures = tuple(filter(None, (absolute(a.get("url"), base) for a in attachments if isinstance(a, dict))))
    entry = Entry(
        id="",
        title=title,
        link=link,
        author=_author(item) or feed_author,
        date=date,
        updated=chosen[1],
        summary=summary,
        content=content,
        date_note=None if date else "; ".join(notes) or None,
        categories=normalised(tags) if isinstance(tags := item.get("tags"), list) else (),
    )
    candidate = Candidate(
        guid or None, link, title, (raws[0] or raws[1])[:DATE_MAX_CHARS], enclosures, summary or content
    )
    return Draft(entry, candidate)


def _with_media(draft: Draft, item: dict[str, Any], base: str) -> Draft:
    """``draft`` with its item's ``attachments`` as enclosures and its image (:mod:`media`); relative
    URLs resolve against the item's URL, else ``base`` (the feed's home page, else the fetch URL)."""
    enclosures = media.json_enclosures(item.get("attachments"), draft.entry.link or base)
    image = media.json_image(item, draft.entry.link or base)
    return replace(draft, entry=replace(draft.entry, enclosures=enclosures, image=image))


def _author(item: dict[str, Any]) -> str | None:
    """The authors' names of an item or of the feed (``authors``, JSON Feed 1.0 ``author``)
    joined with ", ", e-mail addresses removed; None if no name is left."""
    authors = item.get("authors")
    if not isinstance(authors, list):
        authors = [item.get("author")]  # JSON Feed 1.0
    names = [author_name(decode_references(_str(a.get("name")))) for a in authors if isinstance(a, dict)]
    return ", ".join(name for name in names if name) or None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
