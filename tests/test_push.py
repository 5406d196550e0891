"""WebSub subscriptions: the lifecycle rules (push/subscriptions.py), their durable rows (pushstate.py, SQLite on disk)
and the callback endpoint (callbacks.py) driven over real HTTP through waitress on 127.0.0.1."""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
from waitress.server import create_server

from syndicator.metrics import Metrics
from syndicator.model import Habits, SourceState
from syndicator.parse.hubs import Advertised
from syndicator.push import subscriptions as push
from syndicator.push.callbacks import App, callback_url
from syndicator.state.pushstate import PushState, Subscription, open_readonly

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
FEED = "https://example.org/feed.xml"
HUB, HUB2 = "https://hub.example.net/", "https://hub2.example.net/"


def _subscription(**changes: object) -> Subscription:
    base = Subscription(FEED, FEED, HUB, (HUB, HUB2), "token-abc", "secret-xyz")
    return replace(base, **changes)  # type: ignore[arg-type]


def _live(now: datetime = NOW, lease: int = 86400, **changes: object) -> Subscription:
    verdict = push.verify(
        _subscription(state="requested", requested=now),
        {"hub.mode": "subscribe", "hub.topic": FEED, "hub.challenge": "c", "hub.lease_seconds": str(lease)},
        now,
    )
    assert verdict.subscription is not None
    return replace(verdict.subscription, **changes)  # type: ignore[arg-type]


# --- the lifecycle ---------------------------------------------------------------------


def test_a_feed_advertising_a_hub_gets_a_pending_subscription_with_its_own_token_and_secret() -> None:
    first = push.wanted(FEED, Advertised((HUB,), "https://example.org/self"), FEED, NOW, None)
    second = push.wanted(FEED, Advertised((HUB,), None), FEED, NOW, None)
    assert first is not None and second is not None
    assert first.state == "pending" and first.next_action == NOW
    assert first.topic == "https://example.org/self"  # the advertised self URL is the topic
    assert second.topic == FEED  # else the URL that answered
    assert first.token != second.token and first.secret != second.secret
    assert len(first.token) >= 22 and len(first.secret) < 200
    assert push.wanted(FEED, Advertised((), None), FEED, NOW, None) is None


def test_the_same_advertisement_changes_nothing_and_a_new_hub_subscribes_afresh() -> None:
    live = _live()
    assert push.wanted(FEED, Advertised((HUB, HUB2), FEED), FEED, NOW, live) is None
    moved = push.wanted(FEED, Advertised(("https://other.example/",), FEED), FEED, NOW, live)
    assert moved is not None and moved.state == "pending" and moved.hub == "https://other.example/"
    assert moved.token == live.token  # the callback stays
    quiet = push.wanted(FEED, Advertised((), None), FEED, NOW, live)
    assert quiet is not None and quiet.hubs == () and not push.due(replace(quiet, next_action=NOW), NOW)


def test_verification_echoes_the_challenge_only_for_our_topic_and_mode() -> None:
    asked = _subscription(state="requested", requested=NOW)
    good = {"hub.mode": "subscribe", "hub.topic": FEED, "hub.challenge": "chal", "hub.lease_seconds": "3600"}
    verdict = push.verify(asked, good, NOW)
    assert verdict.challenge == "chal"
    assert verdict.subscription is not None and verdict.subscription.state == "live"
    assert verdict.subscription.lease_expires == NOW + timedelta(seconds=3600)
    assert verdict.subscription.next_action == NOW + timedelta(seconds=3600 - 720)  # a fifth before the end
    assert push.verify(asked, {**good, "hub.topic": "https://evil.example/"}, NOW).challenge is None
    assert push.verify(asked, {**good, "hub.mode": "unsubscribe"}, NOW).challenge is None
    assert push.verify(asked, {**good, "hub.challenge": ""}, NOW).challenge is None
    assert push.verify(None, good, NOW).challenge is None
    leaving = push.leaving(_live(), NOW)
    assert push.verify(leaving, {**good, "hub.mode": "unsubscribe"}, NOW).forget
    assert push.verify(leaving, good, NOW).challenge is None  # we no longer ask to subscribe


def test_a_lease_is_clamped_and_a_denial_is_recorded() -> None:
    asked = _subscription(state="requested")
    params = {"hub.mode": "subscribe", "hub.topic": FEED, "hub.challenge": "c"}
    long = push.verify(asked, {**params, "hub.lease_seconds": str(10**12)}, NOW).subscription
    short = push.verify(asked, {**params, "hub.lease_seconds": "1"}, NOW).subscription
    assert long is not None and long.lease_seconds == push.MAX_LEASE
    assert short is not None and short.lease_seconds == 1  # as granted: live for one second only
    assert short.lease_expires == NOW + timedelta(seconds=1) and not short.live(NOW + timedelta(seconds=2))
    assert short.next_action == NOW + timedelta(seconds=push.MIN_RENEWAL_GAP)  # not renewed in a loop
    denied = push.verify(asked, {"hub.mode": "denied", "hub.topic": FEED, "hub.reason": "no"}, NOW).subscription
    assert denied is not None and denied.state == "denied" and "no" in (denied.error or "")
    assert denied.next_action == NOW + timedelta(seconds=push.DENIED_WAIT)


def test_a_failure_backs_off_capped_and_moves_to_the_next_hub() -> None:
    asked = push.sent(_subscription(), True, "", NOW)
    assert asked.state == "requested" and push.waiting(asked)
    first = push.unverified(asked, NOW)
    assert first.state == "failed" and first.hub == HUB2 and first.failures == 1
    assert first.next_action == NOW + timedelta(seconds=push.RETRY_FIRST)
    second = push.failed(first, "503", NOW)
    assert second.hub == HUB and second.next_action == NOW + timedelta(seconds=2 * push.RETRY_FIRST)
    many = replace(second, failures=40)
    assert push.failed(many, "x", NOW).next_action == NOW + timedelta(seconds=push.RETRY_CEILING)
    assert push.failed(first, "429", NOW, retry_after=7200).next_action == NOW + timedelta(seconds=7200)


def test_a_failed_renewal_is_not_live_even_while_the_old_lease_runs() -> None:
    live = _live(lease=86400)
    assert live.live(NOW)
    renewing = push.sent(live, True, "", NOW + timedelta(hours=20))
    assert renewing.state == "renewing" and renewing.live(NOW + timedelta(hours=20))
    failed = push.unverified(renewing, NOW + timedelta(hours=21))
    assert not failed.live(NOW + timedelta(hours=21))
    assert not live.live(NOW + timedelta(days=2))  # and a lease that ended is not live


def test_push_health_follows_lease_misses_breaker_and_the_feeds_history() -> None:
    live = _live(lease=5 * 86400, last_push=NOW)
    quiet_feed = SourceState(FEED, FEED, interval=3600.0)
    assert push.health(live, quiet_feed, NOW + timedelta(hours=1)) == (True, "push healthy")
    assert push.health(None, quiet_feed, NOW)[1] == "no hub"
    assert push.health(replace(live, missed=1), quiet_feed, NOW)[0] is False
    near_end = NOW + timedelta(days=5) - timedelta(hours=1)
    assert push.health(live, quiet_feed, near_end)[1] == "lease near expiry"
    breakers = push.Breakers()
    for _ in range(push.BREAKER_FAILURES):
        breakers.failure(HUB, NOW)
    assert push.health(live, quiet_feed, NOW, breakers)[1] == "hub failing"
    breakers.success(HUB)
    assert push.health(live, quiet_feed, NOW, breakers)[0]
    # a feed that posts about hourly: five quiet hours is late, one is not
    busy = Habits(weight=24 * 7.0, at=NOW, newest=NOW, oldest=NOW - timedelta(days=14), count=336)
    hourly = replace(quiet_feed, habits=busy)
    assert push.health(live, hourly, NOW + timedelta(minutes=30))[0]
    late = push.health(live, hourly, NOW + timedelta(hours=5))
    assert late[0] is False and late[1].startswith("push late")
    # without history: late after LATE_INTERVALS poll intervals
    assert push.health(live, quiet_feed, NOW + timedelta(hours=push.LATE_INTERVALS + 1))[0] is False


def test_healthy_push_steps_polling_down_to_the_heartbeat_and_late_push_brings_it_back() -> None:
    live = _live(lease=5 * 86400, last_push=NOW)
    state = SourceState(FEED, FEED, interval=3600.0, last_attempt=NOW, next_attempt=NOW + timedelta(hours=1))
    beat = push.next_poll(state, live, NOW + timedelta(minutes=5), heartbeat=86400.0)
    assert beat is not None and NOW + timedelta(hours=21) <= beat <= NOW + timedelta(hours=27)
    assert push.next_poll(state, replace(live, missed=1), NOW, 86400.0) == state.next_attempt
    assert push.next_poll(state, None, NOW, 86400.0) == state.next_attempt


# --- the durable rows ----------------------------------------------------------------------


def test_subscriptions_and_the_inbox_survive_a_reopen(tmp_path: Path) -> None:
    state = PushState.open(tmp_path)
    live = _live()
    state.save(live)
    number = state.receive(live.token, b"<feed/>", "application/atom+xml", NOW)
    state.reject(live.token, NOW)
    state.close()
    again = PushState.open(tmp_path)
    stored = again.subscription(FEED)
    assert stored is not None and stored.lease_expires == live.lease_expires and stored.hubs == (HUB, HUB2)
    assert stored.notifications == 1 and stored.rejected == 1 and stored.last_notification == NOW
    pending = again.pending()
    assert [(n.id, n.body, n.content_type) for n in pending] == [(number, b"<feed/>", "application/atom+xml")]
    again.processed(number, "stored", NOW)
    assert again.pending() == []
    assert dict(again.iter_verdicts()) == {"stored": 1}
    changed = again.update(live.token, missed=3)
    assert changed is not None and changed.missed == 3 and again.by_token(live.token) == changed
    assert again.update("no-such-token", missed=1) is None
    again.delete(FEED)
    assert again.subscriptions() == {}
    again.close()
    reader = open_readonly(tmp_path)
    assert reader is not None and reader.subscriptions() == {}
    reader.close()
    assert open_readonly(tmp_path / "nowhere") is None


# --- the callback endpoint over real HTTP -----------------------------------------------------


@pytest.fixture()
def endpoint(tmp_path: Path) -> Iterator[tuple[str, PushState, Metrics, list[int]]]:
    state = PushState.open(tmp_path)
    metrics = Metrics()
    woken: list[int] = []
    app = App(
        state, metrics, max_bytes=1000, wake=lambda: woken.append(1), healthy=lambda: (True, "ok"), clock=lambda: NOW
    )
    server = create_server(app, host="127.0.0.1", port=0, threads=2)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}", state, metrics, woken
    finally:
        server.close()
        server.task_dispatcher.shutdown(timeout=5)
        thread.join(5)
        state.close()


def _signed(secret: str, body: bytes, method: str = "sha256") -> str:
    return f"{method}={hmac.new(secret.encode(), body, getattr(hashlib, method)).hexdigest()}"


Endpoint = tuple[str, PushState, Metrics, list[int]]


def test_the_callback_verifies_intent_and_records_the_lease(endpoint: Endpoint) -> None:
    base, state, _, _ = endpoint
    state.save(_subscription(state="requested", requested=NOW))
    url = callback_url(base, "token-abc")
    answer = requests.get(
        url,
        params={"hub.mode": "subscribe", "hub.topic": FEED, "hub.challenge": "xyz", "hub.lease_seconds": "600"},
        timeout=5,
    )
    assert (answer.status_code, answer.text) == (200, "xyz")
    stored = state.subscription(FEED)
    assert stored is not None and stored.state == "live" and stored.lease_seconds == 600
    for params in (
        {"hub.mode": "subscribe", "hub.topic": "https://evil.example/", "hub.challenge": "xyz"},
        {"hub.mode": "unsubscribe", "hub.topic": FEED, "hub.challenge": "xyz"},
    ):
        refused = requests.get(url, params=params, timeout=5)
        assert refused.status_code == 404 and "xyz" not in refused.text
    assert (
        requests.get(
            callback_url(base, "unknown"),
            params={"hub.mode": "subscribe", "hub.topic": FEED, "hub.challenge": "xyz"},
            timeout=5,
        ).status_code
        == 404
    )


def test_only_a_rightly_signed_notification_reaches_the_inbox(
    endpoint: tuple[str, PushState, Metrics, list[int]],
) -> None:
    base, state, metrics, woken = endpoint
    state.save(_live())
    url = callback_url(base, "token-abc")
    body = b"<feed xmlns='http://www.w3.org/2005/Atom'/>"
    headers = {"Content-Type": "application/atom+xml"}
    assert requests.post(url, data=body, headers=headers, timeout=5).status_code == 202  # unsigned
    forged = _signed("wrong secret", body)
    assert requests.post(url, data=body, headers={**headers, "X-Hub-Signature": forged}, timeout=5).status_code == 202
    other = _signed("secret-xyz", body + b" ")
    assert requests.post(url, data=body, headers={**headers, "X-Hub-Signature": other}, timeout=5).status_code == 202
    assert state.pending() == [] and woken == []
    for method in ("sha1", "sha256", "sha384", "sha512"):
        signed = {**headers, "X-Hub-Signature": _signed("secret-xyz", body, method)}
        assert requests.post(url, data=body, headers=signed, timeout=5).status_code == 202
    assert [n.body for n in state.pending()] == [body] * 4 and len(woken) == 4
    text = metrics.text().decode()
    assert 'syndicator_push_notifications_total{verdict="unsigned"} 1.0' in text
    assert 'syndicator_push_notifications_total{verdict="bad_signature"} 2.0' in text
    assert 'syndicator_push_notifications_total{verdict="accepted"} 4.0' in text
    stored = state.subscription(FEED)
    assert stored is not None and stored.rejected == 3 and stored.notifications == 4
    assert requests.post(callback_url(base, "unknown"), data=body, timeout=5).status_code == 410
    too_big = b"x" * 1001
    assert (
        requests.post(
            url, data=too_big, headers={"X-Hub-Signature": _signed("secret-xyz", too_big)}, timeout=5
        ).status_code
        == 413
    )
    assert len(state.pending()) == 4


def test_metrics_and_health_answer(endpoint: tuple[str, PushState, Metrics, list[int]]) -> None:
    base = endpoint[0]
    health = requests.get(base + "/healthz", timeout=5)
    assert (health.status_code, health.text) == (200, "ok\n")
    metrics = requests.get(base + "/metrics", timeout=5)
    assert metrics.status_code == 200 and metrics.headers["Content-Type"].startswith("text/plain")
    assert "syndicator_due_lag_seconds_bucket" in metrics.text
    assert requests.get(base + "/elsewhere", timeout=5).status_code == 404
    assert requests.put(callback_url(base, "x"), timeout=5).status_code == 405


def test_a_short_lease_is_renewed_halfway_not_at_once() -> None:
    short = _live(lease=60)
    assert short.next_action == NOW + timedelta(seconds=30)
    assert push.renew_margin(100) == 50 and push.renew_margin(600) == 120
    assert push.renew_margin(3600) == 720 and push.renew_margin(30 * 86400) == 86400
