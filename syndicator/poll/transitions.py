"""A feed that starts failing, and one that recovers: one line each, at the moment it happens, in
every mode.

:func:`poll.path.decide_and_store`, the step ``build``, ``serve`` and ``worker`` share, calls
:func:`say` for each source it stores, with the source's state before and after. The transition
is read from ``failures``, the count of consecutive failed observations (:class:`model.SourceState`):
from 0 to more is a start, from more to 0 a recovery. So a failure that goes on is not said again
on each attempt, and a build that found this machine offline (its sources keep the count they had
before it, ``drivers.pipeline``) says no recovery when the network is back.

The lines (docs/monitoring.md):

* ``site 'NAME' started failing: CLASS (MESSAGE); using its last good copy from AGE ago; ADVICE (URL)``,
  a warning (degraded: the site still shows its entries);
* for a site whose first attempt failed, ``site 'NAME' has never been fetched successfully and
  contributes nothing: CLASS (MESSAGE); ADVICE (URL)``, an error (seed 004);
* ``site 'NAME' recovered after N failures (URL)``, on the ``syndicator.lifecycle`` logger at info,
  so shown by default (``cli.logs``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal

from syndicator.failures import kind_of
from syndicator.model import SourceState

__all__ = ["age_text", "say", "transition"]

log = logging.getLogger("syndicator")
lifecycle = logging.getLogger("syndicator.lifecycle")  # shown at info by default (cli.logs)


def transition(before: SourceState, after: SourceState) -> Literal["failing", "recovered"] | None:
    """``"failing"`` when ``after`` is the first failure after a success (or after none: a new feed),
    ``"recovered"`` when it is the first success after failures, None otherwise."""
    if before.failures == 0 and after.failures > 0:
        return "failing"
    if before.failures > 0 and after.failures == 0:
        return "recovered"
    return None


def say(before: SourceState, after: SourceState, names: Sequence[str], now: datetime) -> bool:
    """Log the line of a transition from ``before`` to ``after`` (see the module docstring), if there is one.

    Args:
        names: the names of the sites that use the source, in sites.yaml order (none: the URL alone).
        now: the clock of the observation (UTC), for the age of the last good copy.
    Returns:
        True when a line was logged.
    """
    change = transition(before, after)
    if change is None:
        return False
    sites = f"site {', '.join(repr(name) for name in names)}" if names else f"feed {after.url}"
    if change == "recovered":
        count = before.failures
        lifecycle.info("%s recovered after %d failure%s (%s)", sites, count, "s" * (count != 1), after.fetch_url)
        return True
    kind = kind_of(after.error_kind)
    message = after.error_message or kind.text
    problem = message if message.startswith(kind.text) else f"{kind.text} ({message})"
    advice = f"; {kind.advice}" if kind.advice else ""
    if after.last_success is None:  # the words of the build's summary (drivers.buildlog.log_health)
        log.error(
            "%s has never been fetched successfully and contributes nothing: %s%s (%s)",
            sites,
            problem,
            advice,
            after.fetch_url,
        )
    else:
        age = age_text(now - after.last_success)
        log.warning(
            "%s started failing: %s; using its last good copy from %s ago%s (%s)",
            sites,
            problem,
            age,
            advice,
            after.fetch_url,
        )
    return True


def age_text(delta: timedelta) -> str:
    """A duration for people: ``42 min``, ``5.5 h`` (under two days), ``3.2 days``."""
    seconds = int(delta.total_seconds())
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
