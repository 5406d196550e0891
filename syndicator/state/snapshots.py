"""Reading the stored snapshots: each source's entries of its last good document, with their
first-seen and change times, in full or light (id, link and dates alone) for selection.

Functions on a connection (``sqlite3.Connection`` or :class:`pgstate.Connection`), called by
:class:`state.store.Store`. It reads only; what a save writes is :mod:`state.entries`'.
"""

from __future__ import annotations

import json
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


#: The Entry fields a light snapshot may carry beyond id, link and dates (:func:`light_snapshots`): what
#: filters read (site/filters.py).
LIGHT_FIELDS = ("title", "author", "summary", "content", "language", "categories")


def light_snapshots(
    db: Any, sources: Iterable[str], fields: Iterable[str] = ()
) -> Iterator[tuple[str, list[StoredEntry]]]:
    """(url, snapshot) of each of ``sources`` that has entries, one source at a time, entries
    in document order with their id, link and dates alone (title, text and media empty), and the
    ``fields`` named, of :data:`LIGHT_FIELDS` (what the planet's filters read).

    One query, read as it goes: a caller that keeps only what it needs of
    each snapshot never holds them all. Finish iterating before writing.

    Raises:
        ValueError: a field not in :data:`LIGHT_FIELDS`.
    """
    wanted = set(sources)
    extra = [name for name in LIGHT_FIELDS if name in set(fields)]
    if set(fields) - set(extra):
        raise ValueError(f"not a light snapshot's field: {sorted(set(fields) - set(extra))}")
    columns = "".join(f", json_extract(e.data, '$.{name}')" for name in extra)
    rows = db.execute(
        "SELECT e.source, e.id, json_extract(e.data, '$.link'), json_extract(e.data, '$.date'), "
        f"s.first_seen, s.changed, s.backlog{columns} FROM entries e "
        "JOIN seen s ON s.source = e.source AND s.id = e.id ORDER BY e.source, e.position"
    )
    current: str | None = None
    stored: list[StoredEntry] = []
    for source, entry_id, link, date, first_seen, changed, backlog, *more in rows:
        if source != current:
            if current in wanted and stored:
                yield current, stored
            current, stored = source, []
        if source in wanted:
            entry = Entry(id=entry_id, link=link if isinstance(link, str) else None, date=moment(date))
            if extra:
                entry = replace(entry, **_light_fields(dict(zip(extra, more, strict=True))))
            stored.append(StoredEntry(source, entry, datetime.fromisoformat(first_seen), moment(changed), backlog))
    if current in wanted and stored:
        yield current, stored


def _light_fields(values: dict[str, Any]) -> dict[str, Any]:
    """The extra fields of a light entry as Entry holds them: text ("" or None when missing), categories a
    tuple of text (the column holds the JSON list as text)."""
    if "categories" in values:
        try:
            listed = json.loads(values["categories"] or "[]")
        except (TypeError, ValueError):
            listed = []
        values["categories"] = tuple(c for c in listed if isinstance(c, str)) if isinstance(listed, list) else ()
    for name in ("author", "language"):
        if name in values and not isinstance(values[name], str):
            values[name] = None
    for name in ("title", "summary", "content"):
        if name in values and not isinstance(values[name], str):
            values[name] = ""
    return values


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
