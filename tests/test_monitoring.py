"""Logs and monitoring, through the real CLI on loopback feeds: the life-cycle lines of build, serve and
worker (info, shown by default), a line when a feed starts failing and one when it recovers (once per
transition, in every mode), ``status --failing`` / ``--fail-on`` and ``build --fail-on`` (exit 8), and
SIGTERM ending a build (exit 143) with nothing half-written.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.cli import main
from syndicator.configtypes import Config

from .conftest import NOW_ISO, build, post, rss, tree, troubles, write_config
from .postgres import pg_database, postgres_url  # noqa: F401 - fixtures
from .websub_hub import SYNDICATOR, WAIT, ServeProcess, wait_for

LATER = "2026-12-01T12:00:00Z"  # status a day after the builds at NOW_ISO: nothing is stale yet


def status(config: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["status", "--config", str(config), "--now", LATER, *args], catch_exceptions=False)


def lines_with(stderr: str, text: str) -> list[str]:
    return [line for line in stderr.splitlines() if text in line]


def planet(server: HTTPServer, tmp_path: Path, broken: int, ok: int = 1, **settings: object) -> Path:
    """A sites.yaml of ``ok`` working sites and ``broken`` sites whose feed answers 404."""
    for n in range(ok):
        server.expect_request(f"/ok{n}.xml").respond_with_data(rss(post(n + 1)))
    for n in range(broken):
        server.expect_request(f"/broken{n}.xml").respond_with_data("no", status=404)
    sites = [{"name": f"Ok {n}", "feed": server.url_for(f"/ok{n}.xml")} for n in range(ok)]
    sites += [{"name": f"Broken {n}", "feed": server.url_for(f"/broken{n}.xml")} for n in range(broken)]
    return write_config(tmp_path, sites, host_gap=0, retries=0, **settings)


# --- 1. life-cycle lines -------------------------------------------------------------------------------------------


def test_a_build_says_it_started_at_info_without_v_and_quiet_hides_it(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, broken=0, ok=2)
    first = build(config)
    assert first.exit_code == 0, first.output
    assert "syndicator: info: build: started; 2 of 2 feeds due" in first.stderr.splitlines()
    again = build(config)  # nothing due: still one line saying so
    assert again.stderr == "syndicator: info: build: started; 0 of 2 feeds due\n"
    assert build(config, "-q").stderr == ""
    published = build(config, "--no-fetch")
    assert "syndicator: info: build: started; publishing from the stored state (--no-fetch)" in published.stderr


# --- 2. a line when a feed starts failing, and when it recovers ---------------------------------------------------


def test_a_build_says_once_that_a_feed_started_failing_and_when_it_recovered(
    server: HTTPServer, tmp_path: Path
) -> None:
    feed = "/flaky.xml"
    server.expect_oneshot_request(feed).respond_with_data(rss(post(1)))
    for _ in range(2):
        server.expect_oneshot_request(feed).respond_with_data("down", status=503)
    server.expect_request(feed).respond_with_data(rss(post(1), post(2, day=2)))
    url = server.url_for(feed)
    config = write_config(tmp_path, [{"name": "Flaky", "feed": url}], retries=0)
    assert build(config, now="2026-11-28T12:00:00Z").exit_code == 0

    failing = build(config, "--force", now="2026-11-30T18:00:00Z")
    assert failing.exit_code == 0, failing.output
    assert troubles(failing.stderr) == [
        "syndicator: warning: site 'Flaky' started failing: server error (5xx) (HTTP 503); using its last good "
        f"copy from 2.2 days ago ({url})"
    ]
    still = build(config, "--force", now="2026-11-30T19:00:00Z")  # fails again: not a transition
    assert "started failing" not in still.stderr and "recovered" not in still.stderr

    recovered = build(config, "--force", now="2026-11-30T20:00:00Z")
    assert recovered.exit_code == 0, recovered.output
    assert f"syndicator: info: site 'Flaky' recovered after 2 failures ({url})" in recovered.stderr  # without -v
    assert troubles(recovered.stderr) == []
    calm = build(config, "--force", now="2026-11-30T21:00:00Z")
    assert "recovered" not in calm.stderr and "started failing" not in calm.stderr
    assert "recovered" not in build(config, "-q", "--force", now="2026-11-30T22:00:00Z").stderr


def test_a_feed_whose_first_attempt_fails_is_an_error_naming_every_site_of_it(
    server: HTTPServer, tmp_path: Path
) -> None:
    server.expect_request("/ok.xml").respond_with_data(rss(post(1)))
    server.expect_request("/gone.xml").respond_with_data("no", status=404)
    url = server.url_for("/gone.xml")
    sites = [
        {"name": "Ok", "feed": server.url_for("/ok.xml")},
        {"name": "Gone", "feed": url},
        {"name": "Gone too", "feed": url},
    ]
    config = write_config(tmp_path, sites, host_gap=0)
    result = build(config)
    assert result.exit_code == 0, result.output
    said = lines_with(result.stderr, "never been fetched")
    assert said == [  # once: the build's own summary does not repeat it
        "syndicator: error: site 'Gone', 'Gone too' has never been fetched successfully and contributes nothing: "
        "not found (404) (HTTP 404); the feed may have moved: `syndicator discover` on the site's home page finds "
        f"its feeds ({url})"
    ]
    assert "never been fetched" not in build(config, now="2026-11-30T12:30:00Z").stderr  # not requested: quiet


def test_serve_logs_its_life_at_info_and_says_which_feeds_fail(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, broken=3)
    serve = ServeProcess(config, public=False, verbose=False)
    try:
        serve.wait_for(lambda: len(lines_with(serve.log(), "never been fetched")) == 3, "three feeds failing")
        assert serve.terminate() == 0
    finally:
        serve.kill()
    log = serve.log()
    for n in range(3):
        url = server.url_for(f"/broken{n}.xml")
        said = lines_with(log, f"site 'Broken {n}' has never been fetched")
        assert len(said) == 1 and said[0].startswith("syndicator: error: "), log
        assert ": not found (404) (HTTP 404); " in said[0] and said[0].endswith(f"({url})")
    assert lines_with(log, "serve: listening on")[0].startswith("syndicator: info: serve: listening on http://")
    assert "syndicator: info: serve: stopped; the state is saved" in log.splitlines()
    assert [line for line in troubles(log) if "never been fetched" not in line] == [], log  # no life as warnings


def test_serve_says_when_a_feed_recovers(server: HTTPServer, tmp_path: Path) -> None:
    from .test_serve import Clock, in_process

    server.expect_oneshot_request("/flaky.xml").respond_with_data("down", status=503)
    server.expect_request("/flaky.xml").respond_with_data(rss(post(1)))
    url = server.url_for("/flaky.xml")
    config = write_config(tmp_path, [{"name": "Flaky", "feed": url}], retries=0, min_interval=60)
    logging.getLogger("syndicator.lifecycle").setLevel(logging.NOTSET)  # as serve's own (cli.logs): shown with info
    clock = Clock()
    with in_process(config, clock) as serve:
        serve.wait_for(lambda: lines_with("\n".join(serve.lines), "never been fetched"), "the feed failing")
        clock.advance(timedelta(hours=1))  # past its backoff
        serve.server.wake()
        serve.wait_for(lambda: lines_with("\n".join(serve.lines), "recovered"), "the feed recovering")
    assert lines_with("\n".join(serve.lines), "Flaky") == [
        "error: site 'Flaky' has never been fetched successfully and contributes nothing: server error (5xx) "
        f"(HTTP 503) ({url})",
        f"info: site 'Flaky' recovered after 1 failure ({url})",
    ]


def test_a_worker_says_it_started_and_which_feeds_fail(server: HTTPServer, tmp_path: Path, pg_database: str) -> None:
    config = planet(server, tmp_path, broken=1, ok=2, state=pg_database, per_host_concurrency=3)
    log = tmp_path / "worker.log"
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and k != "SYNDICATOR_STATE"}
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            [str(SYNDICATOR), "worker", "--config", str(config), "--name", "w1", "--lease", "60"],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=env,
        )
    try:
        wait_for(lambda: "never been fetched" in log.read_text(), "the broken feed said", details=log.read_text)
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=WAIT)
    text = log.read_text()
    assert code == 0, text
    assert lines_with(text, "worker w1: started") == [
        f"syndicator: info: worker w1: started on {pg_database}: 3 feeds, {Config.workers} fetch threads, "
        "per host 3 requests at once and 0 s apart, leases of 60 s"
    ]
    assert len(lines_with(text, "error: site 'Broken 0' has never been fetched successfully")) == 1, text
    assert "syndicator: info: worker w1: stopped after storing 3 observations" in text.splitlines()


# --- 3. status --failing and --fail-on -----------------------------------------------------------------------------


def test_status_failing_lists_the_failing_sites_and_exits_8(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, broken=2)
    assert build(config).exit_code == 0
    failing = status(config, "--failing")
    assert failing.exit_code == 8, failing.output
    assert [line for line in failing.stdout.splitlines() if "  [" in line] == [
        "Broken 0  [failing, stale]",
        "Broken 1  [failing, stale]",
    ]
    assert failing.stderr == (
        "syndicator: error: 2 sites are failing, more than the 0 allowed (--fail-on 0); "
        "`syndicator status --failing` lists them\n"
    )
    as_json = status(config, "--failing", "--json")
    assert as_json.exit_code == 8 and [row["name"] for row in json.loads(as_json.stdout)] == ["Broken 0", "Broken 1"]
    assert status(config, "--failing", "--fail-on", "2").exit_code == 0
    assert status(config, "--failing", "--fail-on", "1").exit_code == 8
    everything = status(config, "--fail-on", "1")  # every site listed, the threshold still applies
    assert everything.exit_code == 8 and "Ok 0  [ok]" in everything.stdout
    assert status(config).exit_code == 0  # without either: a report, never a failure
    assert status(config, "--fail-on", "-1").exit_code == 2


def test_status_failing_exits_0_when_no_site_fails(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, broken=0, ok=2)
    assert build(config).exit_code == 0
    result = status(config, "--failing")
    assert result.exit_code == 0, result.output
    assert result.stdout == "2 sites: 2 ok, 0 stale\n"


# --- 4. build --fail-on --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("fail_on", "code"), [("0", 8), ("1", 8), ("2", 0)])
def test_build_fail_on_publishes_then_exits_8_when_more_sites_fail(
    server: HTTPServer, tmp_path: Path, fail_on: str, code: int
) -> None:
    config = planet(server, tmp_path, broken=2)
    result = build(config, "--fail-on", fail_on)
    assert result.exit_code == code, result.output
    assert "Post 1" in (tmp_path / "public" / "index.html").read_text(encoding="utf-8")  # published first
    assert json.loads((tmp_path / "cache" / "report.json").read_text())["failing_sites"] == 2
    assert result.stdout.startswith("3 sites: 3 feeds due")
    if code == 8:
        assert result.stderr.splitlines()[-1] == (
            f"syndicator: error: published, but 2 sites are failing, more than the {fail_on} allowed "
            f"(--fail-on {fail_on}); `syndicator status --failing` lists them"
        )


def test_build_fail_on_counts_the_sites_failing_from_earlier_builds(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, broken=1)
    assert build(config).exit_code == 0
    assert build(config, "--fail-on", "0").exit_code == 8  # nothing due, the site still fails
    assert build(config, "--no-fetch", "--fail-on", "0").exit_code == 8  # as a build beside workers runs


# --- 5. SIGTERM ends a build -----------------------------------------------------------------------------------------


@pytest.fixture
def hanging(server: HTTPServer, release: threading.Event) -> list[str]:
    """/hang.xml answers only once ``release`` is set; returns the list its requests are appended to."""
    arrived: list[str] = []

    def hang(request: Request) -> Response:
        arrived.append(request.path)
        release.wait(30)
        return Response(rss(post(9, host="c.example.org")), content_type="application/rss+xml")

    server.expect_request("/hang.xml").respond_with_handler(hang)
    return arrived


def stored_sources(cache: Path) -> list[str]:
    """The sources a build committed, read as another process (the build may still run)."""
    try:
        with sqlite3.connect(f"file:{cache / 'state.sqlite'}?mode=ro", uri=True) as db:
            return sorted(url for (url,) in db.execute("SELECT url FROM sources"))
    except sqlite3.OperationalError:
        return []


def running_build(tmp_path: Path, config: Path, until: Callable[[], bool]) -> subprocess.Popen[bytes]:
    """The CLI's build in a subprocess (stderr piped), returned once ``until()`` holds."""
    command = [sys.executable, "-c", "from syndicator.cli import main; main()", "build", "--config", str(config)]
    process = subprocess.Popen(
        [*command, "--now", NOW_ISO], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_for(lambda: until() or process.poll() is not None, "the build to hang on /hang.xml")
    except AssertionError:
        process.kill()
        raise
    assert process.poll() is None, process.communicate()
    return process


@pytest.fixture
def ended() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def test_sigterm_ends_a_build_with_one_line_and_exit_143_leaving_the_last_site_whole(
    server: HTTPServer,
    tmp_path: Path,
    hanging: list[str],
    release: threading.Event,
    ended: list[subprocess.Popen[bytes]],
) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1, host="a.example.org")))
    server.expect_request("/b.xml").respond_with_data(rss(post(2, host="b.example.org")))
    sites = [{"name": "A", "feed": server.url_for("/a.xml")}]
    config = write_config(tmp_path, sites, timeout=30, host_gap=0, workers=2)
    assert build(config).exit_code == 0
    site_before = tree(tmp_path / "public")
    more = [
        *sites,
        {"name": "B", "feed": server.url_for("/b.xml")},
        {"name": "Hang", "feed": server.url_for("/hang.xml")},
    ]
    config = write_config(tmp_path, more, timeout=30, host_gap=0, workers=2)
    cache = tmp_path / "cache"
    process = running_build(tmp_path, config, lambda: bool(hanging) and len(stored_sources(cache)) == 2)
    ended.append(process)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=WAIT)  # the hanging fetch would hold it 30 s
    release.set()
    assert process.returncode == 143, stderr
    last, *_ = reversed(stderr.decode().splitlines())
    assert last == "syndicator: stopped by SIGTERM; feeds finished so far are saved, the published site is as it was"
    assert "Traceback" not in stderr.decode()
    assert tree(tmp_path / "public") == site_before  # not half-published: the last site, whole
    assert stored_sources(cache) == sorted([server.url_for("/a.xml"), server.url_for("/b.xml")])  # B kept
    with sqlite3.connect(cache / "state.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert (
        sorted(p.name for p in tmp_path.iterdir() if ".staging" in p.name or ".old" in p.name) == []
    )  # no staging left
    again = build(config)  # the locks were released; the interrupted source is fetched now
    assert again.exit_code == 0, again.output
    assert "Post 9" in (tmp_path / "public" / "index.html").read_text(encoding="utf-8")
