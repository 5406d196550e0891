"""Feeds and their entries, the vocabulary every stage shares: a parsed feed (:class:`ParsedFeed`, its
:class:`Entry` values with their :class:`Enclosure` files, the publisher's :class:`FeedHints`), an entry as
stored (:class:`StoredEntry`) and as chosen for the pages (:class:`SelectedEntry`).

Frozen dataclasses; what the pipeline does with them per source (fetches, observations, decisions, the
durable state) is in ``model``. Every datetime is timezone-aware UTC; sizes are bytes (int).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from syndicator.configtypes import Site


def content_hash(*fields: str | None) -> str:
    """Hash of an entry's visible content, to tell an edit from a new post (hex str)."""
    joined = "\x1f".join(field or "" for field in fields)
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class Enclosure:
    """A file published with an entry: a podcast's audio, a video, a document.

    From RSS ``<enclosure>``, Atom ``link rel="enclosure"`` (RFC 4287
    section 4.2.7.2), Media RSS ``media:content`` of an audio or video type,
    and JSON Feed ``attachments`` (see media.py).

    Attributes:
        url: absolute http(s) URL.
        mime_type: a media type such as "audio/mpeg", lower case, or "" when
            neither the feed nor the file name tells.
        length: size in bytes, or None when unknown (feeds often write 0).
        duration: playing time in whole seconds, or None when unknown.
    """

    url: str
    mime_type: str = ""
    length: int | None = None
    duration: int | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """One item of a feed, normalized.

    Attributes:
        id: identity within its source: the feed's guid/id, else the link,
            else a fingerprint of stable fields (see parse/feed.py).
        title: plain text (may be empty).
        link: absolute http(s) URL or None.
        author: a name as plain text, without e-mail addresses, or None.
        date: publication date (UTC) from the first usable field of the
            fallback order, or None when the feed gives no usable date.
        updated: last-modified date (UTC) or None.
        summary: sanitized HTML fragment (may be empty).
        content: sanitized HTML fragment of the full content (may be empty).
        date_note: why a date the feed gave was not used, or None.
        aliases: other names of the same post (see identity.alias_keys),
            strongest first; the store uses them to keep one identity when
            the publisher changes identifier style.
        enclosures: files published with the entry, each URL once, in
            document order (see media.py).
        image: absolute http(s) URL of an image given beside the text
            (media:content or media:thumbnail, an image enclosure,
            itunes:image, JSON Feed image or banner_image), or None.
        language: the language of the entry's text, a well-formed BCP 47 tag
            in canonical case (:func:`language.language_tag`), or None when
            the feed gives none (see parse/feed.py for where it comes from).
        content_src: the absolute http(s) URL of content published out of
            line (Atom ``<content src>``, RFC 4287 section 4.1.3.2), or None.
        content_type: the media type that ``content`` element gives for it
            (``application/pdf``), lower case, or "" when it gives none usable.
        categories: the entry's categories (tags), normalised plain text, each once, in
            document order (see parse/categories.py); () when the feed gives none.
    """

    id: str
    title: str = ""
    link: str | None = None
    author: str | None = None
    date: datetime | None = None
    updated: datetime | None = None
    summary: str = ""
    content: str = ""
    date_note: str | None = None
    aliases: tuple[str, ...] = ()
    enclosures: tuple[Enclosure, ...] = ()
    image: str | None = None
    language: str | None = None
    content_src: str | None = None
    content_type: str = ""
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class FeedHints:
    """What a feed document says about its own schedule (see hints.py).

    Values are as the publisher wrote them, lightly normalized; the
    schedule compares them with observed behaviour and caps them.

    Attributes:
        ttl: RSS 2.0 ``<ttl>``, seconds (the spec writes minutes).
        update_period: sy:updatePeriod / sy:updateFrequency, seconds
            between updates (period divided by frequency).
        rrule: podcast:updateFrequency ``rrule`` attribute, as written.
        dtstart: its ``dtstart`` attribute, as written.
        complete: podcast:updateFrequency ``complete="true"``: no more releases.
        skip_hours: RSS ``<skipHours>``, hours 0-23 (UTC) not to fetch in.
        skip_days: RSS ``<skipDays>``, weekdays (0 = Monday) not to fetch on.
    """

    ttl: float | None = None
    update_period: float | None = None
    rrule: str | None = None
    dtstart: str | None = None
    complete: bool = False
    skip_hours: tuple[int, ...] = ()
    skip_days: tuple[int, ...] = ()


@dataclass(frozen=True)
class ParsedFeed:
    """A parsed feed document.

    Attributes:
        title, link: the feed's own metadata (plain text, absolute URL).
        entries: entries in document order.
        format: a short name such as "rss20", "atom10" or "json11".
        hints: the publisher's scheduling hints (empty FeedHints if none).
        hubs: the WebSub hubs the document advertises (feed-level
            ``rel="hub"`` links; JSON Feed 1.1 ``hubs`` of type WebSub):
            absolute http(s) URLs in document order, each once, at most
            ``hubs.MAX_HUBS`` (see :func:`parse.hubs.collect`).
        self_url: the document's own URL as it states it (feed-level
            ``rel="self"`` link; JSON Feed ``feed_url``), absolute http(s),
            or None; the WebSub topic (WebSub section 4).
    """

    title: str
    link: str | None
    entries: tuple[Entry, ...]
    format: str = ""
    hints: FeedHints = field(default_factory=FeedHints)
    hubs: tuple[str, ...] = ()
    self_url: str | None = None


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """An entry of a stored snapshot.

    Attributes:
        source: the configured URL of its source.
        entry: the entry itself.
        first_seen: when syndicator first saw this entry id (UTC).
        changed: when syndicator last saw its content change (UTC), or
            None if it never changed since first seen.
        backlog: for an entry of its source's first fetch, ``shown`` (one of
            the ``new_feed_items`` newest, published) or ``held`` (stored,
            never published); None for one that came later, or was stored
            before syndicator kept this (poll.known.backlog).
    """

    source: str
    entry: Entry
    first_seen: datetime
    changed: datetime | None = None
    backlog: str | None = None

    @property
    def date(self) -> datetime:
        """The date used for sorting: the entry's date, else first seen (UTC)."""
        return self.entry.date or self.first_seen

    @property
    def held(self) -> bool:
        """True for an entry of its source's first fetch that is never published (bool)."""
        return self.backlog == "held"

    @property
    def dated(self) -> bool:
        """False for an undated entry of its source's first fetch (bool): its first-seen time is only
        when the planet took the site in, not when it was posted, so it ranks below every dated entry
        (docs/first-fetch.md). An undated entry first seen in a later fetch is dated by that time: it
        is new."""
        return self.entry.date is not None or self.backlog is None


def rank(stored: StoredEntry) -> tuple[bool, float]:
    """The sort key of an entry, newest first: dated entries (:attr:`StoredEntry.dated`) by date, then
    the undated ones of a first fetch (tuple; smaller is newer)."""
    return (not stored.dated, -stored.date.timestamp())


def newest(stored: Sequence[StoredEntry], count: int) -> list[int]:
    """Positions of the ``count`` newest entries of one snapshot that may be published, newest first.

    Newest by :func:`rank`; among equals the earlier in the document first;
    entries held back from the source's first fetch (:attr:`StoredEntry.held`)
    are never among them. The one ranking the store (which loads these entries
    in full, :meth:`store.Store.snapshots`) and selection (which shows them) share.
    """
    shown = (i for i in range(len(stored)) if not stored[i].held)
    return sorted(shown, key=lambda i: (*rank(stored[i]), i))[: max(count, 0)]


@dataclass(frozen=True, slots=True)
class SelectedEntry:
    """An entry chosen for output, with the site it is credited to.

    ``shown`` is the date it is published with when that is not its own
    (:attr:`StoredEntry.date`): an undated entry of a first fetch is shown
    just below the oldest dated entry selected (site.selection), else None.
    """

    site: Site
    stored: StoredEntry
    shown: datetime | None = None

    @property
    def entry(self) -> Entry:
        """The entry (Entry)."""
        return self.stored.entry

    @property
    def date(self) -> datetime:
        """Sort and publication date, UTC (datetime)."""
        return self.shown or self.stored.date
