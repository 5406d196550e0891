"""The plain data of a save: what the store knows of a source's entries (Known) and what a save
writes for a new snapshot (Intents, with its Seen rows and Events).

The rules that turn one into the other are :mod:`poll.known`'s; :mod:`state.store` reads a Known
and writes Intents, and decides nothing (DESIGN.md, "Layout": the store stores). Times are ISO 8601
text in UTC, as the rows hold them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from syndicator.feedtypes import Entry, StoredEntry

__all__ = ["Event", "Intents", "Known", "Router", "Seen"]

#: Who is sent an event: the webhook URLs (each once) of the planets that publish the entry as it is
#: stored (its source, first-seen time, backlog mark) at the save's ``now`` (UTC); () for none. Made by
#: the drivers from sites.yaml (:class:`push.routes.Routes`), called by the store for each event it writes.
Router = Callable[[StoredEntry, datetime], Sequence[str]]


@dataclass(frozen=True)
class Known:
    """What the store knows of a source, for the ids and alias keys of the entries being saved
    (read by :meth:`state.store.Store.read_known`; the rules that use it are :mod:`poll.known`'s).

    Attributes:
        seen: {entry id: (first date as ISO 8601 text or None, content hash or None)}.
        aliases: {alias key: the seen entry id it names}.
        has_history: the source has a seen entry (any, not only these): False for its first snapshot.
    """

    seen: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    has_history: bool = True


@dataclass(frozen=True)
class Seen:
    """A ``seen`` row of a new id: first seen ``now``, its content hash and first date (ISO 8601 or None),
    and for an entry of its source's first fetch its ``backlog``: ``shown`` (published) or ``held``
    (stored, never published); None for an entry that came later (:func:`poll.known.backlog`)."""

    id: str
    first_seen: str
    content_hash: str
    first_date: str | None
    backlog: str | None = None


@dataclass(frozen=True)
class Event:
    """A new or changed entry to announce (an ``outbox`` row): ``kind`` "new" or "changed", ``version``
    its content hash."""

    entry: Entry
    kind: str
    version: str


@dataclass(frozen=True)
class Intents:
    """What a save writes for a new snapshot, besides the source's row (decided by
    :func:`poll.known.intents`, written by :meth:`state.store.Store.write_intents`).

    Attributes:
        snapshot: the entries, each under the id it resolves to, in document order.
        new: the ``seen`` rows of ids never seen.
        first_dates: (id, ISO 8601 date) of seen entries dated earlier than their first date.
        edits: (id, content hash, change time or None) of seen entries whose hash differs; None
            for an entry stored before hashes were kept (its hash recorded, not an edit).
        aliases: (alias key, id) to record (a key already recorded keeps its id).
        events: the entries to announce, empty without deliveries or for a baseline.
    """

    snapshot: list[Entry]
    new: list[Seen]
    first_dates: list[tuple[str, str]]
    edits: list[tuple[str, str, str | None]]
    aliases: list[tuple[str, str]]
    events: list[Event]
