"""A save's two ends for a new snapshot: reading what is known of its entries, writing what was decided.

:func:`read_known` reads the ``seen`` rows and ``aliases`` of the ids and alias
keys it is given (those the entries being saved could resolve to; a query or
two for the whole snapshot, not several per entry) as a :class:`saves.Known`;
:func:`write` writes the :class:`saves.Intents` decided from it: the snapshot
(``entries``), new and updated ``seen`` rows, new ``aliases``, and the
``outbox`` events with one pending delivery per destination the router names
for the entry as stored, all in the caller's transaction ("commit before
fan-out"). Which keys to read and what
they mean (aliases, first dates, new vs changed, the baseline) are
:mod:`poll.known`'s rules, not here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from syndicator.feedtypes import StoredEntry
from syndicator.saves import Event, Intents, Known, Router
from syndicator.state.rows import chunks, entry_to_json, moment

__all__ = ["outbox_time", "read_known", "write"]


def read_known(db: Any, source: str, keys: Iterable[str], ids: Iterable[str]) -> Known:
    """What ``source``'s ``seen`` and ``aliases`` rows hold of the alias ``keys`` and entry ``ids``
    (str each), and of the ids those keys name, and whether ``source`` has any seen entry."""
    wanted = set(ids)
    aliases: dict[str, str] = {}
    for chunk in chunks(sorted(set(keys))):
        rows = db.execute(
            f"SELECT key, id FROM aliases WHERE source = ? AND key IN ({', '.join('?' * len(chunk))})",
            (source, *chunk),
        )
        aliases.update((key, str(entry_id)) for key, entry_id in rows)
    wanted.update(aliases.values())
    seen: dict[str, tuple[str | None, str | None]] = {}
    for chunk in chunks(sorted(wanted)):
        rows = db.execute(
            f"SELECT id, first_date, content_hash FROM seen WHERE source = ? AND id IN ({', '.join('?' * len(chunk))})",
            (source, *chunk),
        )
        seen.update((entry_id, (first_date, digest)) for entry_id, first_date, digest in rows)
    history = bool(seen) or db.execute("SELECT 1 FROM seen WHERE source = ? LIMIT 1", (source,)).fetchone() is not None
    return Known(seen, aliases, history)


def write(db: Any, source: str, intents: Intents, outbox: Router | None, now: datetime) -> None:
    """Replace ``source``'s snapshot and record ``intents``, in the caller's transaction; each event
    gets a pending delivery to every URL ``outbox`` names for its entry as stored (:data:`saves.Router`),
    and no ``outbox`` row when it names none (nor without a router)."""
    db.execute("DELETE FROM entries WHERE source = ?", (source,))
    db.executemany(
        "INSERT INTO entries (source, id, position, data) VALUES (?, ?, ?, ?)",
        [(source, entry.id, position, entry_to_json(entry)) for position, entry in enumerate(intents.snapshot)],
    )
    for entry_id, date in intents.first_dates:
        db.execute("UPDATE seen SET first_date = ? WHERE source = ? AND id = ?", (date, source, entry_id))
    for entry_id, digest, changed in intents.edits:
        db.execute(
            "UPDATE seen SET content_hash = ?, changed = COALESCE(?, changed) WHERE source = ? AND id = ?",
            (digest, changed, source, entry_id),
        )
    db.executemany(
        "INSERT INTO seen (source, id, first_seen, content_hash, first_date, backlog) VALUES (?, ?, ?, ?, ?, ?)",
        [(source, seen.id, seen.first_seen, seen.content_hash, seen.first_date, seen.backlog) for seen in intents.new],
    )
    db.executemany(
        "INSERT INTO aliases (source, key, id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        [(source, key, entry_id) for key, entry_id in intents.aliases],
    )
    if outbox is None:
        return
    for event in intents.events:
        urls = list(dict.fromkeys(outbox(_as_stored(db, source, event), now)))
        if not urls:
            continue
        row = _outbox_row(source, event, now)
        (outbox_id,) = db.execute(
            "INSERT INTO outbox (source, entry_id, version, kind, payload, created) VALUES (?, ?, ?, ?, ?, ?) "
            "RETURNING id",
            row,
        ).fetchone()
        db.executemany(
            "INSERT INTO deliveries (outbox_id, url, state, attempts, next_try) VALUES (?, ?, 'pending', 0, ?)",
            [(outbox_id, url, row[5]) for url in urls],
        )


def _as_stored(db: Any, source: str, event: Event) -> StoredEntry:
    """The entry of ``event`` as the save just stored it, with its ``seen`` row's first-seen time, change
    time and backlog mark: what a planet's selection sees of it."""
    first_seen, changed, backlog = db.execute(
        "SELECT first_seen, changed, backlog FROM seen WHERE source = ? AND id = ?", (source, event.entry.id)
    ).fetchone()
    return StoredEntry(source, event.entry, datetime.fromisoformat(first_seen), moment(changed), backlog)


def _outbox_row(source: str, event: Event, now: datetime) -> tuple[str, str, str, str, str, str]:
    """An ``outbox`` row (source, entry id, version, kind, payload, created) of one new or changed entry;
    the payload is the JSON body every webhook is sent, byte for byte (:mod:`push.deliveries`)."""
    entry = event.entry
    payload = {
        "source": source,
        "id": entry.id,
        "title": entry.title,
        "link": entry.link,
        "date": entry.date.isoformat() if entry.date else None,
        "version": event.version,
        "kind": event.kind,
    }
    return (
        source,
        entry.id,
        event.version,
        event.kind,
        json.dumps(payload, ensure_ascii=False, separators=(",", ":")),
        outbox_time(now),
    )


def outbox_time(moment: datetime) -> str:
    """A time of the outbox and deliveries tables: UTC ISO 8601 with microseconds, fixed width, so
    that their text order is time order in both databases."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")
