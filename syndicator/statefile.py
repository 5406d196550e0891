"""The state as one file published beside the site, and a build that starts from it.

A CI cache can be evicted at any time; the published site cannot. With
``snapshot: true`` a build that renders also publishes
:data:`NAME`: every row of the state's tables (:data:`store.TABLES`: each
source's validators, schedule and history, its last good entries, every
entry id ever seen with its first-seen time, and aliases), nothing else.
All of it is public already or harmless: feed URLs never carry credentials
(config refuses them), and the pages show the entries and errors.

With ``restore_from`` (a URL, or a path relative to sites.yaml) a build that
finds no state in its cache folder first loads that file, so entries keep
their first-seen dates, requests are conditional from the first build and a
site that happens to be down keeps its last good copy.

Format: gzip'd JSON lines. The first line is a header,
``{"format": "syndicator-state", "version": 1, "schema": N, "written": ISO}``
(``schema``: :data:`store.SCHEMA_VERSION`); then, for each table, a line
``{"table": NAME, "columns": [...], "rows": COUNT}`` and one JSON array per
row. A file of another format version or schema is not loaded.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from .errors import StoreError
from .store import SCHEMA_VERSION, TABLES, Store

#: The file's name in the published folder.
NAME = "syndicator-state.json.gz"
FORMAT = "syndicator-state"
VERSION = 1
#: The largest state file read (bytes, compressed): far above what a planet of 10,000 feeds writes.
MAX_BYTES = 512 * 1024 * 1024


def write(store: Store, path: Path, now: datetime) -> Path:
    """Write the whole state of ``store`` to ``path`` (gzip'd JSON lines, see the module docstring).

    The file is written beside ``path`` first and renamed into place.

    Returns:
        ``path``.
    Raises:
        StoreError: the file cannot be written.
    """
    partial = path.with_name(path.name + ".partial")
    try:
        with gzip.open(partial, "wt", encoding="utf-8", compresslevel=6) as file:
            _line(file, {"format": FORMAT, "version": VERSION, "schema": SCHEMA_VERSION,
                         "written": now.isoformat()})
            for table in TABLES:
                columns, rows = store.dump(table)
                count = store.count(table)
                _line(file, {"table": table, "columns": columns, "rows": count})
                for row in rows:
                    _line(file, list(row))
        os.replace(partial, path)
    except OSError as error:
        raise StoreError(f"{path}: cannot write the state file: {error.strerror or error}") from error
    return path


def _line(file: IO[str], value: Any) -> None:
    file.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    file.write("\n")


def load(store: Store, data: bytes, source: str) -> int:
    """Load a state file's rows into the empty ``store``: all of them or none.

    Args:
        data: the file's bytes (gzip'd).
        source: where it came from, for messages.
    Returns:
        the number of rows loaded.
    Raises:
        StoreError: not a state file, one of another version or schema, or
            cut short; the store is left as it was.
    """
    try:
        lines = gzip.decompress(data).decode("utf-8").splitlines()
        header = json.loads(lines[0]) if lines else {}
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as error:
        raise StoreError(f"{source}: not a syndicator state file ({error})") from error
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise StoreError(f"{source}: not a syndicator state file")
    if header.get("version") != VERSION or header.get("schema") != SCHEMA_VERSION:
        raise StoreError(f"{source}: a state file of format {header.get('version')}, schema "
                         f"{header.get('schema')}; this syndicator reads format {VERSION}, schema {SCHEMA_VERSION}")
    return store.load(_tables(iter(lines[1:]), source))


def _tables(lines: Iterator[str], source: str) -> Iterator[tuple[str, list[str], list[list[Any]]]]:
    """(table, columns, rows) for each table of a state file's body."""
    for line in lines:
        try:
            head = json.loads(line)
            table, columns, count = head["table"], head["columns"], int(head["rows"])
            rows = [json.loads(next(lines)) for _ in range(count)]
        except (ValueError, KeyError, TypeError, StopIteration) as error:
            raise StoreError(f"{source}: a damaged state file ({type(error).__name__}: {error})") from error
        if table not in TABLES or not all(isinstance(row, list) and len(row) == len(columns) for row in rows):
            raise StoreError(f"{source}: a damaged state file (table {table!r})")
        yield table, columns, rows
