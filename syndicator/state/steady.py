"""The state file written so that it changes only with what a restore needs (:mod:`statefile`).

A planet that publishes into a git checkout commits the state file with
the site on every build, so the file must not change when nothing that
matters changed, and must change in proportion to what did:

* every table's rows are written in the order of their key (:meth:`store.Store.dump`);
* a ``sources`` row whose cells are those of the file written last but for
  the :data:`VOLATILE` columns (validators, check times, the schedule and
  its history: what every check moves, even a 304) is written as it was in
  that file; it is written afresh when anything else of it changed (new
  entries, an error a reader sees, a new title). A restore from it starts
  from validators and a schedule a little older than the cache's: the first
  request of such a feed may be answered in full (the same entries, so
  nothing changes) and every source is due at the restored build, as after
  any restore;
* the gzip stream is a series of members (RFC 1952 2.2: a file may hold
  several, read as one), each with MTIME 0 and no file name in its header,
  one for each source's rows of each table: the members of sources whose rows
  did not change are the same bytes, so git's delta compression stores only
  the members that changed. Measured (benchmarks/git_growth.py, 567 feeds, 5 %
  of them with a new entry a build): a member for every 8 sources made a
  file 40 % smaller, but each build then changed a third of it; a member
  for each source changes about 5 % of it.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

__all__ = ["VOLATILE", "Members", "steady_rows"]

#: Columns of ``sources`` that a check moves without changing what a restore needs.
VOLATILE = frozenset(
    {
        "etag",
        "last_modified",
        "validators_url",
        "body_hash",
        "body_size",
        "last_attempt",
        "last_success",
        "failures",
        "next_attempt",
        "interval",
        "reason",
        "history",
        "habits",
    }
)
_LEVEL = 6  # gzip's compression level, as gzip(1)'s default


def steady_rows(
    columns: list[str], rows: Iterable[list[Any]], previous: Mapping[str, list[Any]]
) -> Iterator[list[Any]]:
    """The ``sources`` rows to write: each row of ``previous`` ({URL: cells of the file written last,
    with these ``columns``}) whose cells are this row's but for :data:`VOLATILE`, else the row itself."""
    keep = [index for index, name in enumerate(columns) if name not in VOLATILE]
    for row in rows:
        old = previous.get(row[0])
        yield old if old is not None and [old[i] for i in keep] == [row[i] for i in keep] else row


class Members:
    """Lines of JSON written as gzip members that start where keys say (see the module docstring).

    Args:
        file: the binary file written.
    """

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._pending: list[str] = []
        self._key: object = None

    def line(self, value: Any, key: object = None) -> None:
        """Write ``value`` as one line; ``key`` None (a header line) or a new ``key`` (the next source)
        starts a member."""
        if key is None or key != self._key:
            self.flush()
        self._key = key
        self._pending.append(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")

    def flush(self) -> None:
        """Write the lines held as one gzip member (no time, no name: the same lines, the same bytes)."""
        if self._pending:
            self._file.write(gzip.compress("".join(self._pending).encode("utf-8"), compresslevel=_LEVEL, mtime=0))
            self._pending = []
