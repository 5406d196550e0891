"""What every driver does with sites.yaml once it is read and the state is open, at start and after each
reload: say each feed listed under two names (:func:`config.duplicates.duplicate_feeds`, once per load)
and a secrets file others can read (:func:`config.credentials.secrets_warnings`), and re-plan every
source when the intervals changed (:func:`poll.replan.replan`)."""

from __future__ import annotations

import logging

from syndicator.config.credentials import secrets_warnings
from syndicator.config.duplicates import duplicate_feeds
from syndicator.configtypes import Config
from syndicator.poll.replan import replan
from syndicator.state.store import Store

__all__ = ["take_config"]

log = logging.getLogger("syndicator")


def take_config(store: Store, config: Config, who: str) -> int:
    """Warn of each duplicate feed of ``config`` and of a secrets file others can read, and re-plan the
    sources of ``store`` if its intervals changed; returns how many sources were re-planned (logged as one line).

    Args:
        who: the driver, as its log lines start (``build``, ``serve``, ``worker NAME``).
    Raises:
        StoreError: the state cannot be written.
    """
    for line in [*duplicate_feeds(config), *secrets_warnings(config)]:
        log.warning("%s", line)
    count = replan(store, config)
    if count:
        log.info(
            "%s: the intervals in %s changed: the next check of %d source%s re-planned within them",
            who,
            config.path,
            count,
            "s" * (count != 1),
        )
    return count
