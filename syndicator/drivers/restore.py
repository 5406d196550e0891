"""Restore the state a build starts from when its cache holds none: the state file
``restore_from`` names (a path relative to sites.yaml, or an http(s) URL), as published with
``snapshot: true`` (:mod:`state.statefile`), loaded into the empty store.

Without ``restore_from``, one line says what a build from an empty state loses. A state file
that is missing or damaged is a warning and the build goes on from an empty state; a fetch that
failed for a reason that passes stops the build before anything is fetched.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from syndicator.configtypes import Config
from syndicator.errors import FeedError, StoreError
from syndicator.failures import kind_of
from syndicator.fetch import localfile
from syndicator.model import Failed, Fetched, FetchRequest, FetchResult
from syndicator.site import planet
from syndicator.site.output import MARKER
from syndicator.state import statefile
from syndicator.state.store import Store
from syndicator.values import is_http_url

__all__ = ["restore"]

log = logging.getLogger("syndicator")


def restore(config: Config, store: Store) -> bool:
    """Load the state ``config.restore_from`` names into the empty ``store`` (see statefile.py).

    Says in one warning what a build without it loses when there is no
    ``restore_from`` (in CI, or when the output holds a published site;
    else at info level: a new planet's first build). A file that is not
    there (404, 410, no such local file), damaged, or of another schema or
    planet is one warning, and the build goes on from an empty state. A
    fetch that failed for a reason that passes (a timeout, a connection
    error, 5xx, 429) stops the build before anything is fetched: going on
    would publish an empty state over the good one, and the next build
    tries again (the cache still holds no state).

    Returns:
        True when the state was restored.
    Raises:
        StoreError: the state file could not be fetched, for a reason that passes.
    """
    where = config.restore_from
    if where is None:
        # A warning where a lost cache is likely: in CI, or where a site was published before; the
        # first build of a new planet on a desktop only says so with -v.
        lost = bool(os.environ.get("CI")) or (Path(config.output) / MARKER).is_file()
        log.log(
            logging.WARNING if lost else logging.INFO,
            "%s holds no state (a first build, or a CI cache that was lost): every entry is dated when "
            "first seen, no request is conditional and a site that is down has no last good copy; set "
            "restore_from to start from the state published with snapshot: true "
            "(docs/ci.md)",
            os.path.normpath(config.cache),
        )
        return False
    try:
        data = _read_location(config, where)
    except FeedError as error:
        if kind_of(error.kind).ladder == "transient" and error.kind not in ("too_large", "redirect"):
            raise StoreError(
                f"could not restore the state from {where}: {error.message}; nothing was fetched or "
                "published, so the published state stays as it was: build again later, or remove "
                "restore_from to start from an empty state"
            ) from error
        log.warning("no state restored from %s (%s); starting from an empty state", where, error.message)
        return False
    try:
        rows = statefile.load(store, data, where, config.link, planet.local_base(config))
    except StoreError as error:
        log.warning("no state restored: %s; starting from an empty state", error)
        return False
    log.info("restored the state from %s: %d rows", where, rows)
    return True


def _read_location(config: Config, where: str) -> bytes:
    """The bytes of a restore_from location: a path (relative to sites.yaml) or an http(s) URL.

    Raises:
        FeedError: the file cannot be read or fetched.
    """
    if not is_http_url(where):
        uri = (Path(config.path).parent / where).resolve().as_uri()
        result: FetchResult = localfile.read(FetchRequest(uri, uri), statefile.MAX_BYTES)
    else:
        from syndicator.fetch.http import Fetcher  # here: most builds never restore

        with Fetcher.for_config(config, max_bytes=statefile.MAX_BYTES) as fetcher:
            result = fetcher.fetch(FetchRequest(where, where))
    if isinstance(result, Failed):
        raise result.error
    if not isinstance(result, Fetched):
        raise FeedError(where, "no state file in the answer")
    return result.body
