"""``syndicator status`` as text and JSON: times in whole seconds, feeds on hold."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.state.pushstate import PushState, Subscription

from .conftest import NOW_ISO, build, post, rss, write_config

#: An ISO 8601 UTC time in whole seconds, as status prints it (text: Z; JSON: +00:00).
WHOLE_SECONDS = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:Z|\+00:00)"


def status(config: Path, *args: str) -> str:
    result = CliRunner().invoke(
        main, ["status", "--config", str(config), "--now", NOW_ISO, *args], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return result.stdout


def blocks(text: str) -> dict[str, str]:
    """The text output as {site name: its block of lines}."""
    found: dict[str, str] = {}
    for block in re.split(r"\n(?=\S)", text.strip()):
        found[block.split("  [")[0]] = block
    return found


def test_status_shows_times_in_whole_seconds(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_oneshot_request("/a.xml").respond_with_data(rss(post(1)))
    server.expect_request("/a.xml").respond_with_data(rss(post(1), post(2, day=2)))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}])
    assert build(config, now="2026-11-30T11:00:00Z").exit_code == 0
    # A wall clock has microseconds; so does the jittered next time.
    assert build(config, "--force", now="2026-11-30T11:30:00.25Z").exit_code == 0
    (row,) = json.loads(status(config, "--json"))
    times = [row[key] for key in ("last_attempt", "last_success", "last_change", "next_due")]
    times += row["recent_changes"]
    assert len(times) >= 5
    for value in times:
        assert re.fullmatch(WHOLE_SECONDS, value), value
    text = status(config)
    stamps = re.findall(r"\d{4}-\d\d-\d\dT[\d:.]+\S*", text)
    assert len(stamps) == 4
    for value in stamps:
        assert re.fullmatch(WHOLE_SECONDS, value), value


def test_a_feed_on_hold_has_no_interval(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/ok.xml").respond_with_data(rss(post(1)))
    server.expect_request("/gone.xml").respond_with_data("gone", status=410)
    server.expect_request("/denied.xml").respond_with_data("no", status=403)  # slow ladder, not held
    config = write_config(
        tmp_path,
        [
            {"name": "Fine", "feed": server.url_for("/ok.xml")},
            {"name": "Gone", "feed": server.url_for("/gone.xml")},
            {"name": "Denied", "feed": server.url_for("/denied.xml")},
        ],
        retries=0,
        host_gap=0,
    )
    assert build(config).exit_code == 0
    found = blocks(status(config))
    assert re.search(r"   interval: [\d.]+ (min|h)   reason: habits: ", found["Fine"])
    assert "  next due: on hold   interval: on hold   reason: " in found["Gone"], found["Gone"]
    assert "Denied  [denied, stale]" in found["Denied"] and "on hold" not in found["Denied"], found["Denied"]
    assert "   interval: 60 min   reason: backoff: access denied (401/403) x1 (slow ladder)" in found["Denied"]


def test_status_shows_a_daily_interval_in_hours_not_minutes() -> None:
    from syndicator.drivers.status import status_text

    row = {
        "name": "Daily",
        "feed": "https://a.example.org/feed",
        "fetch_url": None,
        "health": "ok",
        "stale": False,
        "last_attempt": None,
        "last_success": None,
        "last_change": None,
        "next_due": None,
        "due_now": False,
        "interval_seconds": 86400.0,
        "reason": "observed",
        "failure_class": None,
        "failure_message": None,
        "failures": 0,
        "etag": None,
        "last_modified": None,
    }
    assert "interval: 24 h " in status_text(row)


def test_status_shows_the_websub_side_of_a_subscribed_feed(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    feed = server.url_for("/a.xml")
    config = write_config(tmp_path, [{"name": "A", "feed": feed}, {"name": "B", "feed": server.url_for("/b.xml")}])
    assert build(config, now=NOW_ISO).exit_code == 0
    now = datetime.fromisoformat(NOW_ISO.replace("Z", "+00:00"))
    pushed = PushState.open(tmp_path / "cache")
    pushed.save(
        Subscription(
            feed,
            feed,
            "https://hub.example.net/",
            ("https://hub.example.net/",),
            "t",
            "s",
            state="live",
            verified=now,
            lease_seconds=86400,
            lease_expires=now + timedelta(days=1),
            last_push=now,
            notifications=3,
            rejected=2,
        )
    )
    pushed.close()
    text = blocks(status(config))
    assert "push: push healthy (live)   hub: https://hub.example.net/   lease until: " in text["A"]
    assert "accepted 3, discarded 2" in text["A"]
    assert "push:" not in text["B"]
    rows = json.loads(status(config, "--json"))
    assert rows[0]["push"]["healthy"] is True and rows[0]["push"]["lease_expires"].startswith("2026-")
    assert rows[0]["push"]["rejected"] == 2 and rows[1]["push"] is None
