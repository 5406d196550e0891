"""The archive: every entry a planet has published, kept after it leaves its feed (the ``archive`` table).

A source's snapshot (``entries``) is its feed as last read, replaced on every save; an entry that falls
off the end of the feed is gone from it. The archive keeps, per planet (its :meth:`Config.state_key`),
each entry the planet published (its feed.xml carried it at least once) as it was last published: its
source, id, an append-only sequence number (the order the planet first published it: stable, so an
archive document chunked by it never changes, RFC 5005 section 4), the date it is shown with (RFC 3339,
UTC), a digest of what was stored, and the stored entry itself (:func:`rows.entry_to_json`).

:func:`record` adds the entries of one publication (new ones appended, changed ones rewritten in place
with their number kept, the others untouched: a build that published the same entries writes no row),
:func:`archived` reads a planet's archive in order, :func:`prune` drops the entries older than a date
(the ``archive_days`` setting). The store's generation is not moved: the archive follows from what was
published, which the generation already counts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from syndicator.dates import isoformat
from syndicator.feedtypes import StoredEntry
from syndicator.state.rows import entry_from_json, entry_to_json

__all__ = ["Archived", "archived", "prune", "record"]


@dataclass(frozen=True)
class Archived:
    """One entry of a planet's archive: ``seq`` its place in the order the planet first published
    entries (int, from 1), ``date`` the date it was shown with (UTC), ``stored`` the entry as last
    published (its ``first_seen`` is when it was first archived), ``digest`` of its row (hex str:
    changes when the entry does)."""

    seq: int
    date: datetime
    stored: StoredEntry
    digest: str = ""


def record(db: Any, planet: str, published: Sequence[tuple[StoredEntry, datetime]]) -> int:
    """Add the entries of one publication of ``planet`` ((stored entry, date shown), newest first) to its
    archive, in the caller's transaction: an entry not archived yet gets the next number, one whose
    stored data changed is rewritten with its number kept, the rest are left as they are.

    Returns:
        the number of rows written (0 when every entry was archived as it is).
    """
    known = {
        (source, entry_id): digest
        for source, entry_id, digest in db.execute("SELECT source, id, digest FROM archive WHERE planet = ?", (planet,))
    }
    row = db.execute("SELECT MAX(seq) FROM archive WHERE planet = ?", (planet,)).fetchone()
    seq = int(row[0] or 0) if row else 0
    written = 0
    for stored, date in reversed(published):  # the oldest first: numbers follow publication order
        data = entry_to_json(stored.entry)
        digest = hashlib.sha256(f"{isoformat(date)}\n{data}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
        key = (stored.source, stored.entry.id)
        if key not in known:
            seq += 1
            db.execute(
                "INSERT INTO archive (planet, source, id, seq, date, digest, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (planet, *key, seq, isoformat(date), digest, data),
            )
        elif known[key] != digest:
            db.execute(
                "UPDATE archive SET date = ?, digest = ?, data = ? WHERE planet = ? AND source = ? AND id = ?",
                (isoformat(date), digest, data, planet, *key),
            )
        else:
            continue
        known[key] = digest
        written += 1
    return written


def archived(db: Any, planet: str, sources: frozenset[str] | None = None) -> Iterator[Archived]:
    """``planet``'s archive in publication order (:class:`Archived` each), only the entries of ``sources``
    (feed URLs) when given: a site removed from sites.yaml keeps its rows but is not shown."""
    rows = db.execute("SELECT source, seq, date, digest, data FROM archive WHERE planet = ? ORDER BY seq", (planet,))
    for source, seq, date, digest, data in rows:
        if sources is None or source in sources:
            when = datetime.fromisoformat(date)
            stored = StoredEntry(source=source, entry=entry_from_json(data), first_seen=when)
            yield Archived(int(seq), when, stored, digest)


def prune(db: Any, planet: str, before: datetime) -> int:
    """Drop ``planet``'s archived entries shown with a date before ``before`` (UTC), in the caller's
    transaction; returns how many were dropped."""
    cursor = db.execute("DELETE FROM archive WHERE planet = ? AND date < ?", (planet, isoformat(before)))
    return int(cursor.rowcount or 0)
