"""bytes + headers -> ParsedFeed. The only module that imports feedparser.

RSS 0.9x/1.0/2.0 and Atom go through feedparser; JSON Feed 1.0/1.1 is read
with :mod:`json` (feedparser 6.0 does not read it) into the same model.
Everything feed-specific is normalized here, once:

* a 200 whose body is an HTML page raises :class:`NotAFeedError` naming the
  feeds the page advertises; a bozo document with no entries raises
  :class:`ParseError` (seed 002). A bozo document that yielded entries (an
  undefined ``&nbsp;``, say) is accepted.
* dates follow the seed 004 order (pubDate, published, updated, date,
  dc:date, issued; JSON Feed date_published, date_modified), in UTC; an
  untrusted date (unreadable, more than a day ahead, before 1995) becomes
  None with a ``date_note``, and the store supplies first-seen instead.
* identity per :mod:`identity`; titles are plain text; summaries and
  content are sanitized by :mod:`sanitize`; relative URLs are resolved
  against xml:base (by feedparser), then the entry link, the feed link,
  then the fetch URL.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import feedparser

from . import dates, hints, identity
from .discover import find_alternates, looks_like_html
from .errors import NotAFeedError, ParseError
from .model import Entry, ParsedFeed
from .sanitize import clean_html, html_to_text, one_line, text_to_html


def parse_feed(body: bytes, url: str, headers: Mapping[str, str], now: datetime) -> ParsedFeed:
    """Parse one fetched document.

    Args:
        body: the response body (bytes, already decompressed).
        url: the URL that answered; the last-resort base for relative URLs.
        headers: response headers with lower-case names (content-type is used).
        now: the build's clock (UTC), to reject dates far in the future.
    Returns:
        the ParsedFeed, entries in document order.
    Raises:
        NotAFeedError: the body is an HTML page.
        ParseError: the body is not a feed syndicator can read.
    """
    content_type = headers.get("content-type", "").lower()
    stripped = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"{") or ("json" in content_type and not stripped.startswith(b"<")):
        return _parse_json(body, url, now)
    return _parse_xml(body, url, content_type, now)


# --- XML feeds (feedparser) ---------------------------------------------------


def _parse_xml(body: bytes, url: str, content_type: str, now: datetime) -> ParsedFeed:
    headers = {"content-type": content_type} if content_type else {}
    # A stream, never bytes or str: feedparser treats a str as a URL or path to open.
    document = feedparser.parse(io.BytesIO(body), response_headers=headers, sanitize_html=False,
                                resolve_relative_uris=True)
    if not document.entries:
        if not document.get("version") and looks_like_html(body):
            raise NotAFeedError(url, find_alternates(body, url))
        if document.bozo:
            reason = one_line(str(document.get("bozo_exception", "")))[:160] or "malformed"
            raise ParseError(url, f"not a readable feed: {reason}")
        if not document.get("version"):
            raise ParseError(url, "not a feed: no RSS, Atom or JSON Feed document found")
    feed = document.feed
    feed_link = _absolute(dict.get(feed, "link"), url)
    base = feed_link or url
    raw_entries = [_xml_entry(item, base, now) for item in document.entries]
    return ParsedFeed(
        title=_text_field(feed, "title"),
        link=feed_link,
        entries=_identify(raw_entries),
        format=document.get("version") or "unknown",
        hints=hints.from_document(body),
    )


def _xml_entry(item: Any, base: str, now: datetime) -> dict[str, Any]:
    link = _absolute(dict.get(item, "link"), base)
    content_base = link or base
    content = ""
    if "content" in item and item["content"]:
        content = "".join(_html_value(part, content_base) for part in item["content"])
    summary = _html_value(item["summary_detail"], content_base) if "summary_detail" in item else ""
    date, updated, note, raw_date = _xml_dates(item, now)
    author = one_line(dict.get(item, "author")) or None
    return {
        "id": one_line(dict.get(item, "id")) or None,
        "title": _text_field(item, "title"),
        "link": link,
        "author": author,
        "date": date,
        "updated": updated,
        "summary": summary,
        "content": content,
        "date_note": note,
        "raw_date": raw_date,
    }


def _xml_dates(item: Any, now: datetime) -> tuple[datetime | None, datetime | None, str | None, str]:
    """(date, updated, note, raw) from feedparser's published and updated fields.

    feedparser files pubDate, published and issued under ``published`` and
    updated, modified, dc:date under ``updated``; ``dict.get`` is used because
    its mapping silently answers ``updated`` with ``published``.
    """
    found: list[tuple[datetime | None, str]] = []
    for key in ("published", "updated"):
        raw = one_line(dict.get(item, key))
        if raw:
            found.append((dates.from_struct(dict.get(item, f"{key}_parsed")) or dates.parse_date(raw), raw))
    notes: list[str] = []
    chosen: list[datetime | None] = []
    for value, raw in found:
        if value is None:
            notes.append(f"unreadable date {raw!r}")
        trusted, why = dates.trusted(value, now)
        if why:
            notes.append(why)
        chosen.append(trusted)
    date = next((value for value in chosen if value is not None), None)
    updated = chosen[-1] if len(found) == 2 and chosen[-1] is not None else None
    raw_date = found[0][1] if found else ""
    return date, updated, (None if date else "; ".join(notes) or None), raw_date


def _text_field(container: Any, key: str) -> str:
    """A title-like field as plain text; HTML-typed values are stripped of markup."""
    detail = dict.get(container, f"{key}_detail")
    value = dict.get(container, key) or ""
    if detail and "html" in str(detail.get("type", "")):
        return html_to_text(value)
    return one_line(value)


def _html_value(detail: Mapping[str, Any], base: str) -> str:
    value = str(detail.get("value") or "")
    if "html" not in str(detail.get("type", "text/html")):
        return text_to_html(value)
    return clean_html(value, base)


def _absolute(link: Any, base: str) -> str | None:
    """An absolute http(s) URL from ``link`` resolved against ``base``, else None."""
    if not isinstance(link, str) or not link.strip():
        return None
    try:
        absolute = urljoin(base, one_line(link))
        scheme = urlsplit(absolute).scheme
    except ValueError:
        return None
    return absolute if scheme in ("http", "https") else None


# --- JSON Feed (https://www.jsonfeed.org/version/1.1/) -----------------------


def _parse_json(body: bytes, url: str, now: datetime) -> ParsedFeed:
    try:
        document = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ParseError(url, f"invalid JSON Feed: {one_line(str(e))[:160]}") from e
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise ParseError(url, "invalid JSON Feed: no items list")
    version = str(document.get("version", ""))
    if "jsonfeed.org/version/" not in version:
        raise ParseError(url, "not a JSON Feed: missing jsonfeed.org version")
    feed_link = _absolute(document.get("home_page_url"), url)
    base = feed_link or url
    raw_entries = [_json_entry(item, base, now) for item in document["items"] if isinstance(item, dict)]
    return ParsedFeed(
        title=one_line(_str(document.get("title"))),
        link=feed_link,
        entries=_identify(raw_entries),
        format="json" + version.rstrip("/").rsplit("/", 1)[-1].replace(".", ""),
    )


def _json_entry(item: dict[str, Any], base: str, now: datetime) -> dict[str, Any]:
    link = _absolute(item.get("url"), base) or _absolute(item.get("external_url"), base)
    content_base = link or base
    if isinstance(item.get("content_html"), str):
        content = clean_html(item["content_html"], content_base)
    else:
        content = text_to_html(_str(item.get("content_text")))
    summary = text_to_html(_str(item.get("summary")))
    notes: list[str] = []
    chosen: list[datetime | None] = []
    raws = [_str(item.get(key)) for key in ("date_published", "date_modified")]
    for raw in raws:
        value = dates.parse_date(raw) if raw else None
        if raw and value is None:
            notes.append(f"unreadable date {raw!r}")
        trusted, why = dates.trusted(value, now)
        if why:
            notes.append(why)
        chosen.append(trusted)
    date = chosen[0] or chosen[1]
    item_id = item.get("id")
    return {
        "id": one_line(str(item_id)) if isinstance(item_id, str | int) and not isinstance(item_id, bool) else None,
        "title": html_to_text(_str(item.get("title"))) if item.get("title") else "",
        "link": link,
        "author": _json_author(item),
        "date": date,
        "updated": chosen[1],
        "summary": summary,
        "content": content,
        "date_note": None if date else "; ".join(notes) or None,
        "raw_date": raws[0] or raws[1],
    }


def _json_author(item: dict[str, Any]) -> str | None:
    authors = item.get("authors")
    if not isinstance(authors, list):
        authors = [item.get("author")]  # JSON Feed 1.0
    names = [one_line(_str(a.get("name"))) for a in authors if isinstance(a, dict)]
    return ", ".join(name for name in names if name) or None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- identity -----------------------------------------------------------------


def _identify(raw_entries: Iterable[dict[str, Any]]) -> tuple[Entry, ...]:
    """Give every entry its identity (see :mod:`identity`) and build Entry values.

    Ids that repeat inside the document are not trusted for those entries:
    they fall back to the canonical link, then to a fingerprint. Entries that
    still share an identity are the same post written twice; the first wins.
    """
    raw_entries = list(raw_entries)
    id_counts = Counter(raw["id"] for raw in raw_entries if raw["id"])
    link_counts = Counter(identity.canonical_url(raw["link"]) for raw in raw_entries if raw["link"])
    entries: list[Entry] = []
    taken: set[str] = set()
    for raw in raw_entries:
        key = _identity(raw, id_counts, link_counts)
        if key in taken:
            continue
        taken.add(key)
        raw.pop("raw_date")
        raw["id"] = key
        entries.append(Entry(**raw))
    return tuple(entries)


def _identity(raw: dict[str, Any], id_counts: Counter[str], link_counts: Counter[str]) -> str:
    if raw["id"] and id_counts[raw["id"]] == 1:
        return str(raw["id"])
    if raw["link"] and link_counts[identity.canonical_url(raw["link"])] == 1:
        return identity.canonical_url(raw["link"])
    return identity.fingerprint(raw["title"], raw["raw_date"], html_to_text(raw["summary"] or raw["content"]))
