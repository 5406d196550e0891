"""Containment: one source's bug never stops a build; locks held to the end; publishing is atomic.

A bug of ours is provoked by fault injection (monkeypatching one stage to
raise for one URL): by definition no real input is known to cause one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.errors import CacheLockedError, InternalErrorsExit, ParseError
from syndicator.feedtypes import FeedHints
from syndicator.model import Observation, SourceState
from syndicator.poll import intervals, observe, path, schedule
from syndicator.site import render
from syndicator.site.output import MARKER, output_lock
from syndicator.site.publish import publish
from syndicator.state.store import Store

from .conftest import ARCHIVE_AND_SEARCH, NOW, build, post, rss, write_config


def two_sites(server: HTTPServer, tmp_path: Path) -> Path:
    server.expect_request("/good.xml").respond_with_data(rss(post(1, host="good.example.org")))
    server.expect_request("/bad.xml").respond_with_data(rss(post(2, host="bad.example.org")))
    return write_config(
        tmp_path,
        [{"name": "Good", "feed": server.url_for("/good.xml")}, {"name": "Bad", "feed": server.url_for("/bad.xml")}],
        retries=0,
    )


def parse_bad_raises(monkeypatch: pytest.MonkeyPatch, error: Callable[[str], Exception]) -> None:
    """Make the pipeline's parse step raise ``error(url)`` for /bad.xml, and parse every other feed."""
    real = observe.parse_feed

    def parse(body: bytes, url: str, *args: object, **kwargs: object) -> object:
        if url.endswith("/bad.xml"):
            raise error(url)
        return real(body, url, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(observe, "parse_feed", parse)


def test_a_bug_while_parsing_one_feed_is_contained(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = two_sites(server, tmp_path)
    parse_bad_raises(monkeypatch, lambda url: KeyError("a bug of ours"))
    result = build(config)
    assert result.exit_code == InternalErrorsExit.exit_code == 7
    assert "1 requested" not in result.stdout and "2 requested (1 changed, 0 unchanged, 1 failed)" in result.stdout
    assert "Traceback (most recent call last)" in result.stderr and "KeyError: 'a bug of ours'" in result.stderr
    assert "published, but 1 source hit an internal error" in result.stderr.splitlines()[-1]
    index = (tmp_path / "public" / "index.html").read_text()
    assert "Post 1" in index and "Post 2" not in index
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert report["failed_by_class"] == {"internal": 1}
    with Store.open(tmp_path / "cache") as store:
        state = store.states()[server.url_for("/bad.xml")]
    assert (state.error_kind, state.failures) == ("internal", 1)
    assert state.reason == "backoff: internal x1" and state.next_attempt is not None


def test_a_bug_while_deciding_one_feed_is_contained(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = two_sites(server, tmp_path)
    real = path.decide
    calls: list[str] = []

    def buggy(state: SourceState, observation: Observation, *args: object) -> object:
        calls.append(observation.outcome)
        if state.url.endswith("/bad.xml") and observation.outcome != "failed":
            raise ValueError("a bug of ours in decide")
        return real(state, observation, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(path, "decide", buggy)
    result = build(config)
    assert result.exit_code == 7
    assert "ValueError: a bug of ours in decide" in result.stderr
    assert sorted(calls) == ["failed", "fetched", "fetched"]  # the bad source decided again, as internal
    assert "Post 1" in (tmp_path / "public" / "index.html").read_text()


def test_a_feed_failure_is_not_an_internal_error(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: an expected failure (a ParseError) is a value; the build exits 0."""
    config = two_sites(server, tmp_path)
    parse_bad_raises(monkeypatch, lambda url: ParseError(url, "not a readable feed: broken"))
    result = build(config)
    assert result.exit_code == 0 and "Traceback" not in result.stderr


def test_the_cache_lock_is_held_while_the_site_is_written(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = two_sites(server, tmp_path)
    real = render.render_site
    seen: list[BaseException] = []

    def render_and_try_the_lock(*args: object, **kwargs: object) -> object:
        with pytest.raises(CacheLockedError) as raised:
            Store.open(tmp_path / "cache")
        seen.append(raised.value)
        assert (tmp_path / "cache" / "report.json").exists()  # written before the site, under the lock
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(render, "render_site", render_and_try_the_lock)
    assert build(config).exit_code == 0
    assert len(seen) == 1


def test_a_second_build_on_the_same_output_stops_before_fetching(server: HTTPServer, tmp_path: Path) -> None:
    config = two_sites(server, tmp_path)
    with output_lock(tmp_path / "public"):
        result = build(config, "--cache", str(tmp_path / "other-cache"))
    assert result.exit_code == 4
    assert "another syndicator build or serve is publishing into this" in result.stderr
    assert server.log == [] and not (tmp_path / "public").exists()


def test_builds_started_together_never_collide(server: HTTPServer, tmp_path: Path) -> None:
    """Two builds with two caches and one output, started at once, ten times: each one
    publishes or is refused with exit code 4; the output is always whole."""
    config = two_sites(server, tmp_path)
    command = [
        sys.executable,
        "-c",
        "from syndicator.cli import main; main()",
        "build",
        "--config",
        str(config),
        "--force",
        "--now",
        "2026-11-30T12:00:00Z",
    ]
    codes: list[int] = []
    for round_ in range(10):
        runs = [
            subprocess.Popen(
                [*command, "--cache", str(tmp_path / f"cache-{which}")],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for which in "ab"
        ]
        for run in runs:
            _, stderr = run.communicate(timeout=60)
            assert run.returncode in (0, 4), stderr
            assert "Traceback" not in stderr
            codes.append(run.returncode)
        names = sorted(p.name for p in (tmp_path / "public").iterdir())
        assert names == sorted(
            [MARKER, "feed.json", "feed.xml", "index.html", "opml.xml", "sites.html", "style.css", *ARCHIVE_AND_SEARCH]
        ), round_
    assert 0 in codes
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [".public.lock"]


def test_publish_swaps_the_folder_and_leaves_nothing_behind(tmp_path: Path) -> None:
    output = tmp_path / "public"
    publish(output, {"index.html": "one"})
    inode = output.stat().st_ino
    publish(output, {"index.html": "two"})
    assert (output / "index.html").read_text() == "two"
    assert output.stat().st_ino != inode  # a new folder took the old one's place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public"]


def test_publish_cleans_up_after_a_killed_build(tmp_path: Path) -> None:
    output = tmp_path / "public"
    publish(output, {"index.html": "old"})
    half = tmp_path / ".public.staging-123-abcd"  # a build killed while writing
    half.mkdir()
    (half / "index.html").write_text("half")
    publish(output, {"index.html": "new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public"]
    assert (output / "index.html").read_text() == "new"


def test_a_copy_set_aside_by_a_killed_build_is_restored(tmp_path: Path) -> None:
    """Where the exchange is not available the output is renamed aside first; a kill
    right then leaves no output, and the next publish puts the aside copy back first."""
    aside = tmp_path / ".public.old-123-abcd"
    aside.mkdir()
    (aside / MARKER).write_text("x")
    (aside / "index.html").write_text("old page")

    def failing() -> Iterator[str]:
        yield "half a page"
        raise RuntimeError("a template failed")

    with pytest.raises(RuntimeError, match="a template failed"):
        publish(tmp_path / "public", {"index.html": failing()})
    assert (tmp_path / "public" / "index.html").read_text() == "old page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public"]


@pytest.mark.parametrize("kind", ["http_404", "http_other", "timeout", "internal", "parse", "too_complex"])
def test_backoff_never_overflows_however_many_failures(kind: str) -> None:
    """4.0 ** 512 overflowed a float after 513 failures of a 404 feed; the exponent is capped first."""
    policy = schedule.Policy()
    url = "https://blog.example.org/feed.xml"
    for failures in (1, 40, 513, 1025, 10**9):
        state = SourceState(url, url, failures=failures, error_kind=kind, hints=FeedHints())
        plan = intervals.plan(state, NOW, policy)
        assert plan.next_attempt is not None
        assert timedelta(0) < plan.next_attempt - NOW <= timedelta(days=7, minutes=2)


def test_the_same_invalid_body_keeps_its_own_failure_after_another_kind(server: HTTPServer, tmp_path: Path) -> None:
    """An invalid body, then a 503, then the same invalid body: the last failure is the body's
    (parse), not the 503's, and it is not parsed again."""
    answers = [("<rss><channel><item><title>cut", 200), ("busy", 503), ("<rss><channel><item><title>cut", 200)]
    server.expect_request("/good.xml").respond_with_data(rss(post(1, host="good.example.org")))
    for body, status in answers:
        server.expect_oneshot_request("/bad.xml").respond_with_data(body, status=status)
    config = write_config(
        tmp_path,
        [{"name": "Good", "feed": server.url_for("/good.xml")}, {"name": "Bad", "feed": server.url_for("/bad.xml")}],
        retries=0,
    )
    kinds = []
    for hour in range(3):
        assert build(config, "--force", now=f"2026-11-30T1{hour}:00:00Z").exit_code == 0
        report = json.loads((tmp_path / "cache" / "report.json").read_text())
        kinds.append(report["failed_by_class"])
    assert kinds == [{"parse": 1}, {"http_5xx": 1}, {"parse": 1}]
    assert report["parsed"] == 0  # the good feed is unchanged and the same invalid body was not parsed again
    with Store.open(tmp_path / "cache") as store:
        state = store.states()[server.url_for("/bad.xml")]
    assert (state.error_kind, state.failures) == ("parse", 3)
    assert state.error_message is not None and state.error_message.startswith("not a readable feed")
