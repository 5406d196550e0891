"""A changed ``min_interval``, ``max_interval`` or ``default_interval`` re-plans every source at once; a
site's own ``min_interval`` or ``max_interval`` changed re-plans its source (the bounds of a source are
those of its sites, :meth:`configtypes.Config.intervals_for`).

Each source's next check was planned with the intervals sites.yaml had then (:mod:`intervals`);
without this, lowering ``max_interval`` from a day to two hours would leave checks planned a day
away until each of them came. So the store keeps the intervals the schedule was planned with
(``meta`` key :data:`PLANNED_WITH_KEY`), and when sites.yaml's differ at load, every source's
next check is bounded again (:func:`rebound`, pure) and the changed ones written
(:func:`replan`), before anything is due:

* the planned interval is kept within the new [min_interval, max_interval]; a source with no
  history yet, planned with the old ``default_interval``, takes the new one;
* when the interval changes, the next check is planned again from the last attempt, with the
  source's stable jitter (:func:`jitter.jitter`); otherwise it only moves earlier, to at most
  ``max_interval`` after the last attempt;
* left as they are: sources never attempted (due at once anyway) or on hold (410), those on the
  slow ladder of 404 and 401/403 (its ceiling is not max_interval), and those a server asked to
  wait (Retry-After honoured in full, a throttled host): what a server asks is not ours to shorten.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta

from syndicator.configtypes import Config
from syndicator.failures import kind_of
from syndicator.model import SourceState
from syndicator.poll.intervals import duration_text
from syndicator.poll.jitter import jitter
from syndicator.poll.schedule import Policy
from syndicator.state.replans import write_replanned
from syndicator.state.store import Store

__all__ = ["PLANNED_WITH_KEY", "planned_with", "rebound", "replan"]

#: Where the store keeps the intervals the schedule was planned with (JSON, seconds).
PLANNED_WITH_KEY = "schedule.intervals"
#: Reasons of next checks a server asked for (intervals.plan's Retry-After, intervals.skipped's throttle).
_ASKED = ("retry-after:", "throttled:")
#: What a re-plan adds to a source's reason (a later re-plan replaces it).
_REPLANNED = "; re-planned: "


def planned_with(config: Config) -> str:
    """The intervals ``config`` plans with, as the store keeps them (JSON text, seconds): the planet's,
    and under ``sources`` the (min_interval, max_interval) of each source whose sites give their own."""
    names = ("default_interval", "min_interval", "max_interval")
    data: dict[str, object] = {name: getattr(config, name) for name in names}
    planet = (config.min_interval, config.max_interval)
    own = {url: list(bounds) for url in config.listed_sources if (bounds := config.intervals_for(url)) != planet}
    if own:
        data["sources"] = own
    return json.dumps(data, sort_keys=True)


def _policy(text: str | None) -> tuple[Policy, dict[str, tuple[float, float]]] | None:
    """The intervals :func:`planned_with` wrote, as a Policy and {source URL: its own bounds}; None for
    no text or text that is not that."""
    try:
        data = json.loads(text or "")
        values = [float(data[name]) for name in ("default_interval", "min_interval", "max_interval")]
        own = {str(url): (float(low), float(high)) for url, (low, high) in data.get("sources", {}).items()}
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
    if not all(math.isfinite(value) and value > 0 for value in values):
        return None
    return Policy(default_interval=values[0], min_interval=values[1], max_interval=values[2]), own


def replan(store: Store, config: Config) -> int:
    """Re-plan every stored source when ``config``'s intervals differ from those the schedule was
    planned with (see the module docstring), and keep the new ones; returns how many sources got a
    new next check (0 when the intervals did not change).

    A source saved meanwhile by another process (workers sharing PostgreSQL) keeps what it saved.
    The first load of a state that kept no intervals yet bounds every source too (an older cache).

    Raises:
        StoreError: the state cannot be written.
    """
    text = planned_with(config)
    stored = store.value(PLANNED_WITH_KEY)
    if stored == text:
        return 0
    before = _policy(stored)
    new = Policy(config.default_interval, config.min_interval, config.max_interval)
    states: Mapping[str, SourceState] = store.states()
    changed = []
    for state in states.values():
        old = None if before is None else before[0].within(before[1].get(state.url, _bounds(before[0])))
        fresh = rebound(state, old, new.within(config.intervals_for(state.url)))
        if fresh is not None:
            changed.append((state, fresh))
    return write_replanned(store, changed, PLANNED_WITH_KEY, text)


def _bounds(policy: Policy) -> tuple[float, float]:
    """The (min_interval, max_interval) of ``policy``, seconds."""
    return policy.min_interval, policy.max_interval


def rebound(state: SourceState, old: Policy | None, new: Policy) -> SourceState | None:
    """``state`` with its next check bounded by the intervals of ``new`` (see the module docstring), or
    None when it stays as it is. ``old``: the intervals it was planned with, when known. Pure."""
    last, planned = state.last_attempt, state.next_attempt
    if last is None or planned is None or state.hold is not None or (state.reason or "").startswith(_ASKED):
        return None
    if state.error_kind is not None and kind_of(state.error_kind).ladder == "slow":
        return None
    interval = state.interval or new.default_interval
    bounded = min(max(interval, new.min_interval), new.max_interval)
    why = "max_interval" if bounded < interval else "min_interval" if bounded > interval else ""
    defaulted = state.error_kind is None and not state.history and not (state.habits and state.habits.count)
    if old is not None and defaulted and interval == old.default_interval != new.default_interval:
        bounded, why = min(max(new.default_interval, new.min_interval), new.max_interval), "default_interval"
    if why:
        wait = jitter(state.url, last, bounded, new.min_interval, new.max_interval)
        due = last + timedelta(seconds=wait)
    else:
        due = min(planned, last + timedelta(seconds=new.max_interval))
    if due == planned and bounded == interval:
        return None
    why = why or "max_interval"
    limit = {"max_interval": new.max_interval, "min_interval": new.min_interval}.get(why, new.default_interval)
    reason = (state.reason or "").split(_REPLANNED)[0] + f"{_REPLANNED}{why} is now {duration_text(limit)}"
    return replace(state, next_attempt=due, interval=bounded, reason=reason)
