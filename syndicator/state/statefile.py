"""The state as one file published beside the site, and a build that starts from it.

A CI cache can be evicted at any time; the published site cannot. With
``snapshot: true`` a build that renders also publishes
:data:`NAME`: every row of the state's tables (:data:`store.TABLES`: each
source's validators, schedule and history, its last good entries, every
entry id ever seen with its first-seen time, and aliases), nothing else.
All of it is public already or harmless: feed URLs never carry credentials
(config refuses them), and the pages show the entries and errors. A local
feed file (a ``file:`` source) is written relative to the folder of
sites.yaml (:data:`LOCAL`), so no path of the machine is published and the
state loads on another machine, or in another checkout; a local file
outside that folder is left out.

With ``restore_from`` (a URL, or a path relative to sites.yaml) a build that
finds no state in its cache folder first loads that file, so entries keep
their first-seen dates, requests are conditional from the first build and a
site that happens to be down keeps its last good copy.

Format: gzip'd JSON lines. The first line is a header,
``{"format": "syndicator-state", "version": 1, "schema": N, "planet": LINK}``
(``schema``: :data:`schema.SCHEMA_VERSION`; ``planet``: the planet's
``link``; files of earlier versions also hold the time they were
``written``, which no reader needs); then, for each table, a line ``{"table": NAME,
"columns": [...], "rows": COUNT}`` and one JSON array per row. A file of
another format version, schema or planet is not loaded; schema 7 is read
by schema 8 (:data:`READABLE_SCHEMAS`: 8 added only the deliveries' outbox,
which is no part of a state file, so the tables' columns are the same). Reading is
streamed and bounded (:data:`MAX_LINE`, :data:`MAX_UNPACKED`), so a
hostile file cannot exhaust memory.

The file is written to change only with what a restore needs, and in
proportion to it (:mod:`steady`): a build whose every feed answered 304
writes the same bytes, so a git checkout it is published into does not grow.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from syndicator.errors import StoreError
from syndicator.state.schema import SCHEMA_VERSION
from syndicator.state.steady import Members, steady_rows
from syndicator.state.store import TABLES, Store

#: The file's name in the published folder.
NAME = "syndicator-state.json.gz"
FORMAT = "syndicator-state"
VERSION = 1
#: The schemas whose files load: this one, 7 (schema 8 added only tables a state file does not carry) and
#: 8 (schema 9 added ``seen.backlog``; an older file's entries load without it: published, as they were),
#: 9 (schema 10 added the planets' ``archive``: an older file restores none).
READABLE_SCHEMAS = (7, 8, 9, SCHEMA_VERSION)
#: The largest state file fetched (bytes, compressed): far above what a planet of 10,000 feeds writes.
MAX_BYTES = 512 * 1024 * 1024
#: The longest line read (one row, characters): an entry is at most ``max_bytes`` (100 MiB at most) of JSON.
MAX_LINE = 128 * 1024 * 1024
#: The most bytes a state file may unpack to.
MAX_UNPACKED = 8 * 1024 * 1024 * 1024
#: What stands for the ``file:`` URI of the folder of sites.yaml in the file.
LOCAL = "syndicator-local:"


def write(store: Store, path: Path, planet: str, base: str) -> Path:
    """Write the whole state of ``store`` to ``path`` (gzip'd JSON lines, see the module docstring).

    Args:
        planet: the planet's ``link``, recorded so a file is loaded only by its own planet.
        base: the ``file:`` URI of the folder of sites.yaml; local sources
            under it are written relative to it, others left out.
    Returns:
        ``path``, written beside itself first and renamed into place.
    Raises:
        StoreError: the file cannot be written.
    """
    partial = path.with_name(path.name + ".partial")
    prefix = base.rstrip("/") + "/"
    previous = _previous_sources(path)
    try:
        with open(partial, "wb") as raw:
            file = Members(raw)
            file.line({"format": FORMAT, "version": VERSION, "schema": SCHEMA_VERSION, "planet": planet})
            for table in TABLES:
                columns, rows = store.dump(table)
                kept = [row for row in (_portable(row, prefix) for row in rows) if row is not None]
                if table == "sources" and previous.get("columns") == columns:
                    kept = list(steady_rows(columns, kept, previous["rows"]))
                file.line({"table": table, "columns": columns, "rows": len(kept)})
                for row in kept:  # one member per source (an archive's rows: per planet and source)
                    file.line(row, key=(row[0], row[1]) if table == "archive" else row[0])
            file.flush()
        os.replace(partial, path)
    except OSError as error:
        raise StoreError(f"{path}: cannot write the state file: {error.strerror or error}") from error
    return path


def _previous_sources(path: Path) -> dict[str, Any]:
    """The ``sources`` of the state file at ``path`` as written: {"columns": [...], "rows": {URL: cells}},
    or {} when there is none, or it cannot be read (it is then written afresh)."""
    try:
        lines = _lines(path.read_bytes(), str(path))
        next(lines, None)
        for line in lines:
            head = json.loads(line)
            if head.get("table") == "sources":
                rows = [json.loads(next(lines)) for _ in range(int(head["rows"]))]
                return {"columns": head["columns"], "rows": {row[0]: row for row in rows}}
            for _ in range(int(head["rows"])):
                next(lines)
    except (OSError, StoreError, ValueError, TypeError, KeyError, StopIteration, AttributeError, IndexError):
        pass
    return {}


def _portable(row: tuple[Any, ...], prefix: str) -> list[Any] | None:
    """A row with local sources made relative (:data:`LOCAL`); None for a row of a local file elsewhere."""
    cells = list(row)
    for index, cell in enumerate(cells):
        if isinstance(cell, str) and cell.startswith("file:"):
            if not cell.startswith(prefix):
                return None
            cells[index] = LOCAL + cell[len(prefix) :]
    return cells


def load(store: Store, data: bytes, source: str, planet: str, base: str) -> int:
    """Load a state file's rows into the empty ``store``: all of them or none.

    Args:
        data: the file's bytes (gzip'd).
        source: where it came from, for messages.
        planet: this planet's ``link``; a file written for another is refused.
        base: the ``file:`` URI of the folder of sites.yaml, where local sources are now.
    Returns:
        the number of rows loaded.
    Raises:
        StoreError: not a state file, one of another version, schema or
            planet, damaged or too big; the store is left as it was.
    """
    lines = _lines(data, source)
    try:
        header = json.loads(next(lines, "") or "null")
    except ValueError as error:
        raise StoreError(f"{source}: not a syndicator state file ({error})") from error
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise StoreError(f"{source}: not a syndicator state file")
    if header.get("version") != VERSION or header.get("schema") not in READABLE_SCHEMAS:
        raise StoreError(
            f"{source}: a state file of format {header.get('version')}, schema "
            f"{header.get('schema')}; this syndicator reads format {VERSION}, schema {SCHEMA_VERSION}"
        )
    if header.get("planet") != planet:
        raise StoreError(f"{source}: the state of another planet ({header.get('planet')!r}, not {planet!r})")
    return store.load(_tables(lines, source, base.rstrip("/") + "/"))


def _lines(data: bytes, source: str) -> Iterator[str]:
    """The lines of the gzip'd ``data``, read a piece at a time, within :data:`MAX_LINE` and :data:`MAX_UNPACKED`.

    Raises:
        StoreError: not gzip, not UTF-8, a line or the whole too long.
    """
    unpacked = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as file:
            while line := file.readline(MAX_LINE + 1):
                unpacked += len(line)
                if len(line) > MAX_LINE or unpacked > MAX_UNPACKED:
                    raise StoreError(f"{source}: a damaged state file (a line or the whole is too long)")
                yield line.decode("utf-8").rstrip("\n")
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise StoreError(f"{source}: not a syndicator state file ({error})") from error


def _tables(lines: Iterator[str], source: str, prefix: str) -> Iterator[tuple[str, list[str], Iterator[list[Any]]]]:
    """(table, columns, its rows, read as they are loaded) for each table of a state file's body."""
    for line in lines:
        try:
            head = json.loads(line)
            table, columns, count = head["table"], head["columns"], int(head["rows"])
        except (ValueError, KeyError, TypeError) as error:
            raise StoreError(f"{source}: a damaged state file ({type(error).__name__}: {error})") from error
        if table not in TABLES or not isinstance(columns, list):
            raise StoreError(f"{source}: a damaged state file (table {table!r})")
        yield table, columns, _rows(lines, count, len(columns), source, prefix)


def _rows(lines: Iterator[str], count: int, width: int, source: str, prefix: str) -> Iterator[list[Any]]:
    for _ in range(count):
        line = next(lines, None)
        if line is None:
            raise StoreError(f"{source}: a damaged state file (it ends before its last row)")
        try:
            row = json.loads(line)
        except ValueError as error:
            raise StoreError(f"{source}: a damaged state file ({error})") from error
        if not isinstance(row, list) or len(row) != width:
            raise StoreError(f"{source}: a damaged state file (a row of the wrong shape)")
        yield [
            prefix + cell[len(LOCAL) :] if isinstance(cell, str) and cell.startswith(LOCAL) else cell for cell in row
        ]
