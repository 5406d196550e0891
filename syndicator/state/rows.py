"""How the store's values become rows and back: a SourceState as a ``sources`` row, an Entry as its
stored JSON object, stored times as datetimes; and the chunking of long ``IN`` lists.

Pure conversions shared by the SQLite and PostgreSQL backends (both store the same text). It runs
no statement (:mod:`state.store` and :mod:`state.snapshots` do).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import fields
from datetime import datetime
from typing import Any, TypeVar

from syndicator.feedtypes import Enclosure, Entry, FeedHints
from syndicator.model import Check, Habits, SourceState

#: Rows asked for by one query (SQLite allows 32,766 parameters since 3.32, 999 before).
ROWS_PER_QUERY = 900
_Value = TypeVar("_Value")
_DATETIME_FIELDS = {"last_attempt", "last_success", "last_change", "next_attempt"}
STATE_FIELDS = [f.name for f in fields(SourceState)]
#: The columns of ``sources`` quoted (``interval`` is a keyword of PostgreSQL's).
STATE_COLUMNS = ", ".join(f'"{name}"' for name in STATE_FIELDS)
UPDATE_SET = ", ".join(f'"{name}" = excluded."{name}"' for name in STATE_FIELDS if name != "url")


def chunks(values: list[_Value], size: int = ROWS_PER_QUERY) -> Iterator[list[_Value]]:
    """``values`` in lists of at most ``size`` (one query's parameters)."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def to_db(value: Any, name: str) -> Any:
    """One SourceState field ``name`` as its column value: None stays None, a time is ISO 8601 text
    (UTC), ``history`` and the other structured fields are JSON text, anything else as it is."""
    if value is None:
        return None
    if name in _DATETIME_FIELDS:
        return value.isoformat()
    if name == "history":
        return json.dumps(
            [[c.at.isoformat(), c.elapsed, int(c.changed), c.new_entries, int(c.overflowed)] for c in value]
        )
    if name == "hints":
        return json.dumps(_flat(value), separators=(",", ":"))
    if name == "habits":
        data = _flat(value)
        for key in ("at", "newest", "oldest"):
            data[key] = data[key] and data[key].isoformat()
        return json.dumps(data, separators=(",", ":"))
    return value


def _flat(value: Any) -> dict[str, Any]:
    """A flat dataclass (fields of numbers, strings, tuples of numbers) as a dict, without asdict's deep copy."""
    return {f.name: getattr(value, f.name) for f in fields(value)}


def _history_from_db(value: str | None) -> tuple[Check, ...]:
    return tuple(
        Check(datetime.fromisoformat(at), float(elapsed), bool(changed), int(new), bool(rest and rest[0]))
        for at, elapsed, changed, new, *rest in json.loads(value or "[]")
    )


def _hints_from_db(value: str) -> FeedHints:
    data = json.loads(value)
    return FeedHints(
        **{**data, "skip_hours": tuple(data.get("skip_hours", ())), "skip_days": tuple(data.get("skip_days", ()))}
    )


def _habits_from_db(value: str) -> Habits:
    data = json.loads(value)
    for key in ("at", "newest", "oldest"):
        data[key] = data[key] and datetime.fromisoformat(data[key])
    return Habits(**{**data, "hours": tuple(data["hours"]), "days": tuple(data["days"])})


#: How each column of ``sources`` becomes a SourceState field: a converter for a value that is not
#: NULL (history: for NULL too), or None for a value taken as it is. Chosen once, not per cell.
_STATE_CONVERTERS: tuple[tuple[str, Callable[[Any], Any] | None], ...] = tuple(
    (
        name,
        _history_from_db
        if name == "history"
        else datetime.fromisoformat
        if name in _DATETIME_FIELDS
        else _hints_from_db
        if name == "hints"
        else _habits_from_db
        if name == "habits"
        else None,
    )
    for name in STATE_FIELDS
)


def state_from_row(row: tuple[Any, ...]) -> SourceState:
    """The SourceState of one ``sources`` row, its columns in STATE_FIELDS order (the inverse of :func:`to_db`)."""
    return SourceState(
        **{
            name: value if convert is None or (value is None and name != "history") else convert(value)
            for (name, convert), value in zip(_STATE_CONVERTERS, row, strict=True)
        }
    )


def entry_to_json(entry: Entry) -> str:
    """An entry as its stored JSON object (aliases live in their own table).

    Field by field rather than ``dataclasses.asdict``, whose deep copy was the
    biggest single cost of storing a snapshot.
    """
    data = {name: getattr(entry, name) for name in _ENTRY_FIELDS}
    for key in ("date", "updated"):
        if data[key] is not None:
            data[key] = data[key].isoformat()
    data["enclosures"] = [
        {name: getattr(enclosure, name) for name in _ENCLOSURE_FIELDS} for enclosure in entry.enclosures
    ]
    if not entry.categories:
        del data["categories"]  # rows of entries without categories stay as they were stored before
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


_ENTRY_FIELDS = tuple(f.name for f in fields(Entry) if f.name != "aliases")
_ENCLOSURE_FIELDS = tuple(f.name for f in fields(Enclosure))


def moment(value: object) -> datetime | None:
    """A stored ISO 8601 time as a datetime, None for none (or a value that is no string)."""
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def entry_from_json(text: str) -> Entry:
    """The Entry a snapshot row holds as JSON text; its ``date`` and ``updated`` are aware datetimes again.

    Raises:
        ValueError: the text is not JSON of a stored entry (json.JSONDecodeError is one).
    """
    data = json.loads(text)
    for key in ("date", "updated"):
        if data.get(key):
            data[key] = datetime.fromisoformat(data[key])
    data["enclosures"] = _enclosures_from_json(data.get("enclosures"))
    categories = data.get("categories")
    data["categories"] = tuple(c for c in categories if isinstance(c, str)) if isinstance(categories, list) else ()
    known = {f.name for f in fields(Entry)}
    return Entry(**{k: v for k, v in data.items() if k in known})


def _enclosures_from_json(value: object) -> tuple[Enclosure, ...]:
    """Stored enclosures (a list of objects) as Enclosures; () for rows stored before enclosures were kept."""
    known = {f.name for f in fields(Enclosure)}
    items = value if isinstance(value, list) else []
    return tuple(
        Enclosure(**{k: v for k, v in item.items() if k in known})
        for item in items
        if isinstance(item, dict) and isinstance(item.get("url"), str)
    )
