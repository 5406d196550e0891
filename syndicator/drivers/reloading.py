"""sites.yaml read again by a running driver: one rule for ``serve`` and ``worker``, and serve's watch on its files.

:func:`read_again` is the rule both drivers follow (``serve`` when the file
changes or on SIGHUP, ``worker`` on SIGHUP): the file is read with the same
checks as ``build`` (:func:`config.reread`: the state and the fetch settings
stay those the process started with, the command line's options are applied
again); a broken file is one error line and the running configuration stays.
``serve`` also refuses a file that moves its output or cache folder
(:meth:`Watch.reread`): it holds their locks for its whole life.

:class:`Watch` tells ``serve``'s loop when sites.yaml or its secrets file (``secrets:``, the
credentials of private feeds) changed, looking at their modification times every
:data:`CONFIG_CHECK` seconds, and stops serve when its state database was removed meanwhile.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from syndicator.config.load import reread
from syndicator.configtypes import Config
from syndicator.errors import ConfigError, StoreError
from syndicator.push.routes import webhooks
from syndicator.state.store import DATABASE

__all__ = ["CONFIG_CHECK", "Watch", "read_again"]

log = logging.getLogger("syndicator")

#: How often sites.yaml's modification time is checked, seconds.
CONFIG_CHECK = 2.0


def read_again(running: Config, overrides: Mapping[str, Any], who: str) -> Config | None:
    """sites.yaml (``running.path``) read again by the one reload rule (:func:`config.reread`), or None.

    Args:
        running: the configuration in use; what :data:`config.load.KEPT_ON_RELOAD` names is taken from it.
        overrides: settings applied over the file ({Config field: value}): the command line's options.
        who: the driver, as its log lines start (``serve``, ``worker NAME``).
    Returns:
        the new Config; None for a missing or broken file, logged as one error line (the caller keeps
        ``running``).
    """
    try:
        fresh = reread(running, overrides)
        webhooks(fresh)  # one secret per webhook URL across the planets
        return fresh
    except ConfigError as error:
        log.error("%s: %s; the previous configuration stays in use", who, error)
        return None


def _same_places(new: Config, old: Config) -> bool:
    """True when ``new`` has the cache folder of ``old`` and the output folders of its planets (paths
    resolved, in order: serve holds their locks)."""

    def places(config: Config) -> list[Path]:
        return [Path(config.cache).resolve(), *(Path(planet.output).resolve() for planet in config.all_planets())]

    return places(new) == places(old)


class Watch:
    """The files ``serve`` watches while it runs: sites.yaml and its secrets file (read again when either
    changed) and the state database.

    Use: :meth:`changed` every turn of the loop; :meth:`reread` when it says so (or on SIGHUP).
    """

    def __init__(self, path: Path) -> None:
        self._mtime = _mtime(path)
        self._secrets: int | None = None  # the secrets file's time, first taken by changed()
        self._checked = 0.0

    def reread(self, running: Config, overrides: Mapping[str, Any]) -> Config | None:
        """sites.yaml read again for serve (:func:`read_again`), or None: a broken file, or one that moves
        an output folder or the cache folder, or adds or removes a planet (serve holds their locks: a
        restart uses it), is one error line, and
        ``running`` stays. Only a later change of the file counts again (:meth:`changed`)."""
        path = running.path
        self._mtime, self._secrets = _mtime(path), _secrets_mtime(running)
        config = read_again(running, overrides, "serve")
        if config is None:
            return None
        if not _same_places(config, running):
            log.error(
                "serve: %s: an output folder, the cache folder or the planets changed; restart serve to use "
                "them (the previous configuration stays in use)",
                path,
            )
            return None
        return config

    def changed(self, config: Config) -> bool:
        """True when the modification time of sites.yaml or of its secrets file changed (looked at every
        CONFIG_CHECK seconds).

        Raises:
            StoreError: the state database is gone: whatever is stored from now on would be lost.
        """
        moment = time.monotonic()
        if moment - self._checked < CONFIG_CHECK:
            return False
        self._checked = moment
        database = Path(config.cache) / DATABASE
        if config.state is None and not database.is_file():
            raise StoreError(
                f"{database} was removed while serving; stopped so that nothing more is lost "
                "(start serve again to begin from an empty state)"
            )
        secrets = _secrets_mtime(config)
        if self._secrets is None:
            self._secrets = secrets
        return _mtime(config.path) != self._mtime or secrets != self._secrets


def _secrets_mtime(config: Config) -> int:
    """The modification time of the secrets file of ``config`` (ns); 0 without one."""
    return _mtime(config.secrets) if config.secrets is not None else 0


def _mtime(path: Path) -> int:
    """The modification time of ``path`` in nanoseconds (int); 0 when it cannot be read."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
