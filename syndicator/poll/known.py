"""What a new snapshot means against what is known of its source: the pure rules of a save.

:func:`poll.path.save` reads, in one transaction of the store, what it knows
of the entries being saved (a :class:`saves.Known`: the seen ids with their
first date and content hash, the recorded aliases, whether the source has any
history; :func:`lookups` names the keys and ids to read), calls :func:`intents`
and writes the :class:`saves.Intents` it returns. The rules are here, as plain
functions on values (no SQL, no clock); the values are :mod:`model`'s:

* aliases (:func:`resolve`, :func:`alias`): an entry whose id is new but one of whose alias
  keys (identity.alias_keys, or an id a publisher switched to) names a seen
  entry is stored under that entry's id; the first id wins;
* first dates (:func:`keep_first_date`): a seen entry whose only date moved
  forward keeps its first date (docs/reference/entries.md, "Edits");
* new vs changed (:func:`intents`): an unseen id is new; a seen id whose
  content hash differs is changed (an edit, updated in place). The hash is
  of what a reader reads: title, link, summary and content. Categories are
  not in it: a publisher re-filing a post (WordPress re-tagging, a feed that
  reorders or renames its tags) has not edited it, and an edit event would
  tell every webhook of a change no reader can see. The new categories are
  still stored (the snapshot is stored when any field of an entry differs,
  ``decide.snapshot_hash``), so the pages, the feeds and the planets'
  filters use them from the next build;
* the baseline: a source's first snapshot is not news, so it has no events,
  and only its ``new_feed_items`` newest entries are published (:func:`backlog`);
* events: one per new or changed entry, when the planet has deliveries.

It does not read or write the database, nor build the outbox's payload (the
store writes each :class:`saves.Event` as its row).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from syndicator.feedtypes import Entry, content_hash
from syndicator.saves import Event, Intents, Known, Seen

__all__ = ["alias", "backlog", "intents", "keep_first_date", "lookups", "resolve"]

#: The alias key kinds whose value is a URL without its scheme (seen ids may hold it under either).
_URL_KEYS = ("uri", "link")


def alias(known: Known, key: str) -> str | None:
    """The seen id an alias key names: recorded, or for a URL key, a seen id equal
    to that URL under either scheme (entries stored before aliases were kept)."""
    if key in known.aliases:
        return known.aliases[key]
    kind, _, bare = key.partition(":")
    if kind in _URL_KEYS:
        return next((f"{scheme}:{bare}" for scheme in ("https", "http") if f"{scheme}:{bare}" in known.seen), None)
    return None


def lookups(entries: Sequence[Entry]) -> tuple[set[str], set[str]]:
    """The alias keys and the ids the store must read to know ``entries``: each entry's ``id:`` key and
    alias keys, its id, and for a URL key the URL under either scheme (the ids the keys name are read
    after them)."""
    keys = {key for entry in entries for key in (f"id:{entry.id}", *entry.aliases)}
    ids = {entry.id for entry in entries}
    for key in keys:
        kind, _, bare = key.partition(":")
        if kind in _URL_KEYS:
            ids.update((f"https:{bare}", f"http:{bare}"))
    return keys, ids


def resolve(known: Known, entries: Sequence[Entry]) -> list[Entry]:
    """Each entry under the id of the seen entry it is an alias of, else as it is.

    Exact ids claim first, then ids a publisher switched to, then alias
    keys in order; a seen entry is claimed by one entry at most.
    """
    resolved: list[Entry | None] = [e if e.id in known.seen else None for e in entries]
    claimed = {e.id for e in resolved if e is not None}
    for keys_of in (lambda e: (f"id:{e.id}",), lambda e: e.aliases):
        for index, entry in enumerate(entries):
            if resolved[index] is not None:
                continue
            for key in keys_of(entry):
                target = alias(known, key)
                if target is not None and target not in claimed:
                    resolved[index] = replace(entry, id=target)
                    claimed.add(target)
                    break
    return [r if r is not None else e for r, e in zip(resolved, entries, strict=True)]


def keep_first_date(known: Known, entry: Entry) -> Entry:
    """A seen entry whose only date moved forward, with its first date back (docs/reference/entries.md, "Edits").

    Sites that regenerate their feed rewrite the one date of every entry
    (an Atom ``updated``, a JSON Feed ``date_modified``, a pubDate) to
    the time of the rewrite; taken at its word, every old post would
    float to the top. An entry already seen keeps its first date and the
    new one becomes its ``updated`` time, as an edit's does. An entry
    with a publication date apart from its updated date, or whose date
    moved back (a correction), is stored as the feed gives it; a new
    entry is dated by its own date. The first date is the earliest date
    stored for the entry (``seen.first_date``).
    """
    if entry.date is None or (entry.updated is not None and entry.updated != entry.date):
        return entry
    first_date = known.seen.get(entry.id, (None, None))[0]
    if first_date is None:
        return entry
    first = datetime.fromisoformat(first_date)
    return replace(entry, date=first, updated=entry.date) if entry.date > first else entry


def backlog(entries: Sequence[Entry], new_items: int) -> list[str]:
    """The mark of each entry of a source's first snapshot, in order: ``shown`` for its ``new_items``
    newest, ``held`` for the others (stored, never published); every one ``shown`` for 0.

    Like Planet Venus's ``new_feed_items``: a site taken in (a new planet, a site just added, a planet
    moved in) contributes its newest few posts, not its whole archive. Newest by date; an undated entry
    ranks below every dated one (its age is unknown), and among equals the earlier in the document
    (feeds list their newest first) is the newer.
    """
    if new_items <= 0:
        return ["shown"] * len(entries)
    ranked = sorted(range(len(entries)), key=lambda i: (_undated_last(entries[i]), i))
    shown = set(ranked[:new_items])
    return ["shown" if index in shown else "held" for index in range(len(entries))]


def _undated_last(entry: Entry) -> tuple[bool, float]:
    return (entry.date is None, -entry.date.timestamp() if entry.date else 0.0)


def intents(known: Known, entries: Sequence[Entry], now: datetime, announce: bool, new_items: int = 0) -> Intents:
    """What to write for the new snapshot ``entries`` of a source, given what is ``known`` of it.

    Args:
        known: what the store read (:func:`lookups` names what to read).
        entries: the new snapshot, in document order, ids unique.
        now: the build's clock (UTC): first-seen of new ids, change time of edited ones.
        announce: the planet has deliveries (sites.yaml's ``deliveries``): new and changed
            entries become events, except in a source's first snapshot (its baseline: a new
            planet, or a site just added, does not send its whole backlog to every destination).
        new_items: the source's ``new_feed_items``: how many entries of its first snapshot are
            published (:func:`backlog`; 0: all). A later snapshot's new entries are all published.
    """
    result = Intents([], [], [], [], [], [])
    announce = announce and known.has_history
    resolved = [keep_first_date(known, entry) for entry in resolve(known, entries)]
    marks = [None] * len(resolved) if known.has_history else backlog(resolved, new_items)
    for entry, resolved_entry, mark in zip(entries, resolved, marks, strict=True):
        result.snapshot.append(resolved_entry)
        event = _remember(known, resolved_entry, now, result, mark)
        if event is not None and announce:
            result.events.append(Event(resolved_entry, *event))
        keys = entry.aliases + ((f"id:{entry.id}",) if entry.id != resolved_entry.id else ())
        result.aliases.extend((key, resolved_entry.id) for key in keys)
    return result


def _remember(known: Known, entry: Entry, now: datetime, result: Intents, mark: str | None) -> tuple[str, str] | None:
    """Add to ``result`` first-seen, first date and backlog ``mark`` (:func:`backlog`) for a new id, an
    edit when the content hash changes, and the earliest date as the first date.

    Returns:
        the entry's event, ("new" or "changed", its content hash), or None (unchanged; or a
        hash recorded for the first time on an entry stored before hashes were kept).
    """
    digest = content_hash(entry.title, entry.link, entry.summary, entry.content)
    date = entry.date.isoformat() if entry.date else None
    if entry.id not in known.seen:
        result.new.append(Seen(entry.id, now.isoformat(), digest, date, mark))
        return "new", digest
    first_date, stored_digest = known.seen[entry.id]
    earlier = entry.date is not None and (first_date is None or entry.date < datetime.fromisoformat(first_date))
    if earlier and date is not None:
        result.first_dates.append((entry.id, date))
    if stored_digest == digest:
        return None
    result.edits.append((entry.id, digest, now.isoformat() if stored_digest is not None else None))
    return ("changed", digest) if stored_digest is not None else None
