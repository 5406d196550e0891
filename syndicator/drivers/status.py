"""What ``syndicator status`` shows: each site's polling state, read-only.

Reads the cache without taking its lock (a build or ``serve`` may be
running) and changes nothing: ``store and push state (read-only) ->
schedule (is it due?) -> rows``; :func:`status_text` and :func:`totals_line`
write the rows as the command prints them.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from syndicator.config.union import planet_named, planets_of_sources, poller_view
from syndicator.configtypes import MAIN_PLANET, Config, is_local
from syndicator.failures import KINDS
from syndicator.health import SiteStatus
from syndicator.model import SourceState
from syndicator.poll import schedule
from syndicator.poll.intervals import duration_text
from syndicator.push import subscriptions as push
from syndicator.push.routes import webhooks
from syndicator.site.selection import site_statuses
from syndicator.state import pushstate
from syndicator.state.store import Store


def status(config: Config, now: datetime, planet: str | None = None) -> list[dict[str, object]]:
    """What ``syndicator status`` shows: one JSON-ready dict per site, in sites.yaml order: every site of
    every planet (:func:`config.union.poller_view`), or those of the planet named ``planet`` (a
    :attr:`Config.label`); each row names the planets that list its feed (``planets``).

    Reads the cache without taking its lock (a build may be running) and
    changes nothing. Times are ISO 8601 UTC strings in whole seconds, or None. See
    docs/reference/status.md for the fields.

    Raises:
        ConfigError: no planet is named ``planet``.
        StoreError: the state database is unusable or of another version.
    """
    sites = (poller_view(config) if planet is None else planet_named(config, planet)).sites
    used = planets_of_sources(config)
    store = Store.open_readonly(config.cache, config.state)
    try:
        states = store.states() if store is not None else {}
    finally:
        if store is not None:
            store.close()
    pushed = pushstate.open_readonly(config.cache)
    try:
        subscriptions = pushed.subscriptions() if pushed is not None else {}
    finally:
        if pushed is not None:
            pushed.close()
    fingerprints = schedule.site_fingerprints(poller_view(config).sites)
    statuses = site_statuses(sites, states, {}, now, config.stale_after)
    return [
        {
            **_status_row(entry, fingerprints.get(entry.site.feed), now),
            "planets": list(used.get(entry.site.feed, ())),
            "push": _push_row(subscriptions.get(entry.site.feed), entry.state, now),
        }
        for entry in statuses
    ]


def delivery_totals(config: Config) -> dict[str, int] | None:
    """The webhook deliveries to the destinations listed in each state ({"pending", "delivered", "dead"}:
    counts; every planet's webhooks, each URL once), read-only; None when no planet of sites.yaml has
    ``deliveries``, or there is no state yet.

    Raises:
        StoreError: the state database is unusable or of another version.
    """
    if not webhooks(config):
        return None
    store = Store.open_readonly(config.cache, config.state)
    if store is None:
        return None
    try:
        from syndicator.state.outbox import totals  # noqa: PLC0415 - a planet without deliveries never loads it

        return totals(store, [d.url for d in webhooks(config)])
    finally:
        store.close()


def _push_row(
    subscription: pushstate.Subscription | None, state: SourceState | None, now: datetime
) -> dict[str, object] | None:
    """The WebSub side of a site (``syndicator serve``), or None when its feed has no subscription."""
    if subscription is None:
        return None
    healthy, why = push.health(subscription, state, now)
    return {
        "hub": subscription.hub,
        "topic": subscription.topic,
        "state": subscription.state,
        "lease_expires": iso_seconds(subscription.lease_expires) if subscription.lease_expires else None,
        "last_notification": iso_seconds(subscription.last_notification) if subscription.last_notification else None,
        "last_push": iso_seconds(subscription.last_push) if subscription.last_push else None,
        "healthy": healthy,
        "health": why,
        "notifications": subscription.notifications,
        "rejected": subscription.rejected,
        "duplicates": subscription.duplicates,
        "replays": subscription.replays,
        "error": subscription.error,
    }


def _status_row(entry: SiteStatus, fingerprint: str | None, now: datetime) -> dict[str, object]:
    state = entry.state or SourceState(entry.site.feed, entry.site.feed)

    def iso(value: datetime | None) -> str | None:
        return iso_seconds(value) if value is not None else None

    return {
        "name": entry.site.name,
        "feed": entry.site.feed,
        "fetch_url": state.fetch_url if state.fetch_url != entry.site.feed else None,
        "discovered": state.discovered,
        "health": entry.health,
        "enabled": entry.site.enabled,
        "stale": entry.stale,
        "last_attempt": iso(state.last_attempt),
        "last_success": iso(state.last_success),
        "last_change": iso(state.last_change),
        "next_due": iso(state.next_attempt),
        "due_now": entry.site.enabled and schedule.is_due(entry.state, now, fingerprint),
        "interval_seconds": state.interval,
        "reason": state.reason or ("never attempted: due now" if entry.state is None else None),
        "failure_class": state.error_kind,
        "failure_message": state.error_message,
        "advice": (KINDS[state.error_kind].advice or None) if state.error_kind in KINDS else None,
        "failures": state.failures,
        "etag": state.etag,
        "last_modified": state.last_modified,
        "validators_url": state.validators_url,
        "recent_changes": [iso_seconds(check.at) for check in state.history if check.changed],
    }


def iso_seconds(value: datetime) -> str:
    """ISO 8601 text of a UTC datetime in whole seconds (cut, not rounded): ``2026-11-30T13:05:12+00:00``."""
    return value.replace(microsecond=0).isoformat()


def _delivery_totals(counts: dict[str, int] | None) -> str:
    """The webhooks' part of the totals line: ``; deliveries: N pending, N delivered, N dead (dead letters)``,
    or nothing without deliveries."""
    if counts is None:
        return ""
    return (
        f"; deliveries: {counts['pending']} pending, {counts['delivered']} delivered, "
        f"{counts['dead']} dead (dead letters)"
    )


def _status_totals(rows: list[dict[str, Any]]) -> str:
    """One line: how many sites, and how many in each health (ok, failing, ...) and stale."""
    health = Counter(str(row["health"]) for row in rows)
    parts = [f"{health[name]} {name}" for name in ("ok", "failing", "denied", "gone", "paused", "new") if health[name]]
    stale = sum(1 for row in rows if row["stale"])
    return f"{len(rows)} site{'' if len(rows) == 1 else 's'}: " + ", ".join(parts + [f"{stale} stale"])


#: Health values of a source on hold (410): not attempted until its sites.yaml entry changes.
_ON_HOLD = ("gone",)


def _held(row: dict[str, Any]) -> bool:
    """True when the site waits: gone (410), or its credentials refused and not changed since."""
    return row["health"] in _ON_HOLD or (row["failure_class"] == "credentials" and not row["due_now"])


def status_text(row: dict[str, Any]) -> str:
    """A site's status (a row of :func:`status`) as a few indented lines of text."""
    flags = [row["health"]] + (["stale"] if row["stale"] else [])
    lines = [f"{row['name']}  [{', '.join(flags)}]", f"  feed: {row['feed']}"]
    if row.get("planets", [MAIN_PLANET]) != [MAIN_PLANET]:  # a file of one planet does not say it
        lines.append(f"  planets: {', '.join(row['planets'])}")
    if row["fetch_url"]:
        lines.append(f"  fetched from: {row['fetch_url']} (permanent redirect)")
    if row.get("discovered"):
        advice = " (it failed too)" if row.get("failure_class") else " (put it in sites.yaml)"
        lines.append(f"  an HTML page; followed the feed it advertises: {row['discovered']}{advice}")
    lines.append(
        f"  last attempt: {_when(row['last_attempt'])}   last success: {_when(row['last_success'])}"
        f"   last change: {_when(row['last_change'])}"
    )
    interval = duration_text(row["interval_seconds"]) if row["interval_seconds"] else "-"
    if _held(row):
        interval = "on hold"  # no interval applies until the site's entry in sites.yaml changes
    lines.append(f"  next due: {_next_due(row)}   interval: {interval}   reason: {row['reason'] or '-'}")
    if row["failure_class"]:
        lines.append(f"  failing: {row['failure_class']} x{row['failures']}: {row['failure_message']}")
    if row.get("advice"):
        lines.append(f"  what to do: {row['advice']}")
    validators = [
        f"ETag {row['etag']}" if row["etag"] else "",
        f"Last-Modified {row['last_modified']}" if row["last_modified"] else "",
    ]
    lines.append(f"  validators: {', '.join(v for v in validators if v) or 'none'}")
    pushed = row.get("push")
    if pushed:
        lines.append(
            f"  push: {pushed['health']} ({pushed['state']})   hub: {pushed['hub']}   lease until: "
            f"{_when(pushed['lease_expires'])}"
        )
        lines.append(
            f"  last notification: {_when(pushed['last_notification'])}   last verified push: "
            f"{_when(pushed['last_push'])}   accepted {pushed['notifications']}, discarded "
            f"{pushed['rejected']}" + (f"   last trouble: {pushed['error']}" if pushed["error"] else "")
        )
    return "\n".join(lines)


def _next_due(row: dict[str, Any]) -> str:
    """When a site is checked next: ``not while paused``, ``on hold``, ``now (never attempted)``,
    ``every build`` (a local file), or a time, ``(due now)`` if past."""
    if row["health"] == "paused":
        return "not while paused (enabled: false in sites.yaml)"
    if _held(row):
        return "on hold"
    if is_local(row["feed"]):
        return "every build (a local file)"
    if row["next_due"] is None:
        return "now (never attempted)" if row["health"] == "new" else "now"
    return _when(row["next_due"]) + (" (due now)" if row["due_now"] else "")


def _when(value: str | None) -> str:
    return value.replace("+00:00", "Z") if value else "never"


def totals_line(rows: list[dict[str, Any]], delivered: dict[str, int] | None) -> str:
    """The last line of ``syndicator status``: the sites by health, and the webhooks' deliveries."""
    return _status_totals(rows) + _delivery_totals(delivered)
