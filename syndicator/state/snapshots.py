"""Reading the stored snapshots: each source's entries of its last good document, with their
first-seen and change times, in full or light (id, link and dates alone) for selection.

Functions on a connection (``sqlite3.Connection`` or :class:`pgstate.Connection`), called by
:class:`state.store.Store`. It reads only; what a save writes is :mod:`state.entries`'.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from syndicator.feedtypes import Entry, StoredEntry, newest
from syndicator.state.rows import ROWS_PER_QUERY, chunks, entry_from_json, moment


def snapshots(db: Any, sources: Iterable[str], complete: int | None = None) -> dict[str, list[StoredEntry]]:
    """The stored snapshot of each source, entries in document order.

    Args:
        sources: configured URLs; unknown ones map to an empty list.
        complete: load in full only the ``complete`` newest entries of
            each snapshot (:func:`feedtypes.newest`, the ranking selection
            uses); the others come with their id, link and date alone
            (title, text and media empty). None: every entry in full.
    Returns:
        {url: [StoredEntry, ...]}, each with its first-seen time (UTC) and its backlog mark.
    """
    result: dict[str, list[StoredEntry]] = {url: [] for url in sources}
    if complete is None:
        rows = db.execute(
            "SELECT e.source, e.data, s.first_seen, s.changed, s.backlog FROM entries e "
            "JOIN seen s ON s.source = e.source AND s.id = e.id "
            "ORDER BY e.source, e.position"
        )
        for source, data, first_seen, changed, backlog in rows:
            if source in result:
                entry = entry_from_json(data)
                result[source].append(
                    StoredEntry(source, entry, datetime.fromisoformat(first_seen), moment(changed), backlog)
                )
        return result
    result.update(light_snapshots(db, result))
    chosen = [(source, position) for source, stored in result.items() for position in newest(stored, complete)]
    full = in_full(db, [result[source][position] for source, position in chosen])
    for (source, position), stored_entry in zip(chosen, full, strict=True):
        result[source][position] = stored_entry
    return result


def light_snapshots(db: Any, sources: Iterable[str]) -> Iterator[tuple[str, list[StoredEntry]]]:
    """(url, snapshot) of each of ``sources`` that has entries, one source at a time, entries
    in document order with their id, link and dates alone (title, text and media empty).

    One query, read as it goes: a caller that keeps only what it needs of
    each snapshot never holds them all. Finish iterating before writing.
    """
    wanted = set(sources)
    rows = db.execute(
        "SELECT e.source, e.id, json_extract(e.data, '$.link'), json_extract(e.data, '$.date'), "
        "s.first_seen, s.changed, s.backlog FROM entries e JOIN seen s ON s.source = e.source AND s.id = e.id "
        "ORDER BY e.source, e.position"
    )
    current: str | None = None
    stored: list[StoredEntry] = []
    for source, entry_id, link, date, first_seen, changed, backlog in rows:
        if source != current:
            if current in wanted and stored:
                yield current, stored
            current, stored = source, []
        if source in wanted:
            entry = Entry(id=entry_id, link=link if isinstance(link, str) else None, date=moment(date))
            stored.append(StoredEntry(source, entry, datetime.fromisoformat(first_seen), moment(changed), backlog))
    if current in wanted and stored:
        yield current, stored


def in_full(db: Any, chosen: Sequence[StoredEntry]) -> list[StoredEntry]:
    """``chosen`` (light entries of :func:`light_snapshots`) with each entry read in full, in the same order.

    A build reads every snapshot light, selects, then reads in full only
    the entries it publishes. An entry no longer stored is returned as it was.
    """
    pairs = sorted({(stored.source, stored.entry.id) for stored in chosen})
    full: dict[tuple[str, str], Entry] = {}
    for chunk in chunks(pairs, ROWS_PER_QUERY // 2):  # two parameters a row
        rows = db.execute(
            f"SELECT source, id, data FROM entries WHERE (source, id) IN (VALUES {', '.join(['(?, ?)'] * len(chunk))})",
            [value for pair in chunk for value in pair],
        )
        for source, entry_id, data in rows:
            full[(source, entry_id)] = entry_from_json(data)
    return [replace(stored, entry=full.get((stored.source, stored.entry.id), stored.entry)) for stored in chosen]
