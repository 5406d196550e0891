"""Running from CI: the state published beside the site, and a build with an empty cache that starts from it."""

from __future__ import annotations

import gzip
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from pytest_httpserver import HTTPServer

from syndicator.state import statefile
from syndicator.state.schema import SCHEMA_VERSION
from syndicator.state.store import TABLES, Store

from .conftest import ATOM, NOW, build, post, rss, write_config

LATER = "2026-11-30T14:00:00Z"
UNDATED = {"title": "Undated post", "link": "https://a.example.org/undated", "guid": "https://a.example.org/undated"}


def planet(server: HTTPServer, tmp_path: Path, **settings: object) -> Path:
    """Site A: an ETag'd feed of one undated entry (dated when first seen); site B: a plain feed."""
    server.expect_request("/a.xml", headers={"If-None-Match": '"v1"'}).respond_with_data("", status=304)
    server.expect_request("/a.xml").respond_with_data(rss(UNDATED), headers={"ETag": '"v1"'})
    server.expect_request("/b.xml").respond_with_data(rss(post(2, host="b.example.org")))
    return write_config(
        tmp_path,
        [{"name": "A", "feed": server.url_for("/a.xml")}, {"name": "B", "feed": server.url_for("/b.xml")}],
        retries=0,
        **settings,
    )


def published_dates(public: Path) -> dict[str, str]:
    return {
        entry.findtext(f"{ATOM}title") or "": entry.findtext(f"{ATOM}published") or ""
        for entry in ET.parse(public / "feed.xml").getroot().findall(f"{ATOM}entry")
    }


def test_a_lost_cache_loses_no_history(server: HTTPServer, tmp_path: Path) -> None:
    """Two CI runs with the cache deleted in between: the second restores the published state."""
    server.expect_oneshot_request("/site/" + statefile.NAME).respond_with_data("", status=404)  # nothing yet
    config = planet(server, tmp_path, snapshot=True, restore_from=server.url_for("/site/" + statefile.NAME))
    first = build(config)
    assert first.exit_code == 0, first.output
    public = tmp_path / "public"
    before = published_dates(public)
    # undated in A's first fetch: shown just below the oldest dated entry, B's post (2026-11-01T10:02)
    assert before["Undated post"] == "2026-11-01T10:01:59Z"
    server.expect_request("/site/" + statefile.NAME).respond_with_data((public / statefile.NAME).read_bytes())
    shutil.rmtree(tmp_path / "cache")  # the CI cache was evicted
    server.clear_log()
    server.handlers.clear()
    server.expect_request("/site/" + statefile.NAME).respond_with_data((public / statefile.NAME).read_bytes())
    server.expect_request("/a.xml", headers={"If-None-Match": '"v1"'}).respond_with_data("", status=304)
    server.expect_request("/b.xml").respond_with_data("down for maintenance", status=503)
    second = build(config, "--force", now=LATER)
    assert second.exit_code == 0, second.output
    assert "holds no state" not in second.stderr and "no state restored" not in second.stderr
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert report["restored"] is True
    feed_requests = [request for request, _ in server.log if request.path == "/a.xml"]
    assert [r.headers.get("If-None-Match") for r in feed_requests] == ['"v1"']  # conditional at once
    assert published_dates(public) == before  # B, down, keeps its last good copy; the undated post its date


@pytest.mark.parametrize("ci", ["true", ""])
def test_an_empty_cache_without_restore_from_says_so_once(
    server: HTTPServer, tmp_path: Path, ci: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warning in CI, where caches get lost; a new planet's first build elsewhere says it only with -v."""
    monkeypatch.setenv("CI", ci)
    config = planet(server, tmp_path)
    line = f"{tmp_path / 'cache'} holds no state (a first build, or a CI cache that was lost)"
    first = build(config)
    assert first.exit_code == 0
    assert (f"syndicator: warning: {line}" in first.stderr) is bool(ci)
    assert not (tmp_path / "public" / statefile.NAME).exists()  # snapshot is opt-in
    second = build(config, now=LATER)
    assert second.exit_code == 0 and "holds no state" not in second.stderr
    shutil.rmtree(tmp_path / "cache")  # the site is published: a lost cache, whatever CI says
    monkeypatch.setenv("CI", "")
    third = build(config, now=LATER)
    assert f"syndicator: warning: {line}" in third.stderr
    (tmp_path / "new").mkdir()
    verbose = build(planet(server, tmp_path / "new"), "-v")
    assert "holds no state" in verbose.stderr and "syndicator: warning:" not in verbose.stderr


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"not gzip at all", "not a syndicator state file"),
        (gzip.compress(b'{"format": "something else"}\n'), "not a syndicator state file"),
        (
            gzip.compress(
                json.dumps({"format": "syndicator-state", "version": 1, "schema": SCHEMA_VERSION + 1}).encode()
            ),
            f"a state file of format 1, schema {SCHEMA_VERSION + 1}; this syndicator reads format 1, schema",
        ),
        (
            gzip.compress(
                json.dumps(
                    {
                        "format": "syndicator-state",
                        "version": 1,
                        "schema": SCHEMA_VERSION,
                        "planet": "https://planet.example.org/",
                    }
                ).encode()
                + b'\n{"table": "sources", "columns": ["url"], "rows": 2}\n["https://x.example/f"]\n'
            ),
            "a damaged state file (it ends before its last row)",
        ),
    ],
)
def test_a_state_file_that_cannot_be_loaded_is_a_warning(
    server: HTTPServer, tmp_path: Path, content: bytes, problem: str
) -> None:
    (tmp_path / "state.json.gz").write_bytes(content)
    config = planet(server, tmp_path, restore_from="state.json.gz")
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "no state restored: state.json.gz: " in result.stderr and problem in result.stderr
    with Store.open(tmp_path / "cache") as store:
        assert len(store.states()) == 2  # built from an empty state, nothing half loaded


def test_a_missing_state_file_is_a_warning(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/site/" + statefile.NAME).respond_with_data("not found", status=404)
    config = planet(server, tmp_path, restore_from=server.url_for("/site/" + statefile.NAME))
    result = build(config)
    assert result.exit_code == 0
    assert f"no state restored from {server.url_for('/site/' + statefile.NAME)} (HTTP 404" in result.stderr


def test_the_state_file_holds_every_row_and_loads_back_the_same(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, snapshot=True)
    assert build(config).exit_code == 0
    data = (tmp_path / "public" / statefile.NAME).read_bytes()
    lines = gzip.decompress(data).decode().splitlines()
    assert json.loads(lines[0])["schema"] == SCHEMA_VERSION
    with Store.open(tmp_path / "cache") as original:
        expected = {table: sorted(map(list, original.dump(table)[1])) for table in TABLES}
        with Store.open(tmp_path / "other") as copy:
            base = tmp_path.resolve().as_uri()
            assert statefile.load(copy, data, "test", "https://planet.example.org/", base) == sum(
                len(rows) for rows in expected.values()
            )
            assert {table: sorted(map(list, copy.dump(table)[1])) for table in TABLES} == expected
            with pytest.raises(Exception, match="the state is not empty"):
                statefile.load(copy, data, "test", "https://planet.example.org/", base)
    assert all(expected[table] for table in ("sources", "entries", "seen"))
    assert "written" not in json.loads(lines[0])  # no build time: a build that changed nothing writes the same file


def test_restore_from_on_the_command_line(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, snapshot=True)
    assert build(config).exit_code == 0
    shutil.copy(tmp_path / "public" / statefile.NAME, tmp_path / "kept.json.gz")
    shutil.rmtree(tmp_path / "cache")
    result = build(config, "--restore-from", str(tmp_path / "kept.json.gz"), now=LATER)
    assert result.exit_code == 0 and "holds no state" not in result.stderr
    assert json.loads((tmp_path / "cache" / "report.json").read_text())["restored"] is True


EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "ci"


def test_the_example_ci_files_keep_the_cache_and_publish_the_output() -> None:
    """The example workflows cache the default cache folder, run a build and publish the default output."""
    github = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8"))
    steps = github["jobs"]["build"]["steps"]
    cache = next(step for step in steps if step.get("uses", "").startswith("actions/cache@"))
    assert cache["with"]["path"] == "cache" and cache["with"]["restore-keys"] == "syndicator-"
    assert "${{ github.run_id }}" in cache["with"]["key"]  # saved after every run, not only the first
    assert [step["run"] for step in steps if step.get("name") == "Build"] == ["syndicator build"]
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "public"
    gitlab = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text(encoding="utf-8"))["pages"]
    assert gitlab["cache"]["paths"] == ["cache/"] and gitlab["artifacts"]["paths"] == ["public"]
    assert "syndicator build" in gitlab["script"]
    for text in ((EXAMPLES / name).read_text(encoding="utf-8") for name in ("github-actions.yml", "gitlab-ci.yml")):
        assert "snapshot: true" in text and "restore_from: https://" in text and statefile.NAME in text


def test_the_example_ci_files_install_syndicator_from_pypi() -> None:
    """Both install the package by its name on PyPI (docs/releasing.md says how it is published there), not
    from a made-up repository address."""
    github = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8"))
    steps = github["jobs"]["build"]["steps"]
    assert [step["run"] for step in steps if step.get("name") == "Install syndicator"] == ["pip install syndicator"]
    gitlab = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text(encoding="utf-8"))["pages"]
    assert gitlab["script"][0] == "pip install syndicator"


def test_a_state_file_that_cannot_be_fetched_for_now_stops_the_build(server: HTTPServer, tmp_path: Path) -> None:
    """Going on would publish an empty state over the good one: the build stops before fetching, and the
    next one, with the cache still empty, tries again."""
    config = planet(server, tmp_path, snapshot=True)
    assert build(config).exit_code == 0
    good = (tmp_path / "public" / statefile.NAME).read_bytes()
    shutil.rmtree(tmp_path / "cache")
    config = planet(server, tmp_path, snapshot=True, restore_from=server.url_for("/state"))
    server.expect_oneshot_request("/state").respond_with_data("busy", status=503)
    server.clear_log()
    stopped = build(config, now=LATER)
    assert stopped.exit_code == 5
    assert stopped.stderr.startswith(
        f"syndicator: error: could not restore the state from {server.url_for('/state')}: HTTP 503"
    )
    assert [request.path for request, _ in server.log] == ["/state"]  # no feed was fetched
    assert (tmp_path / "public" / statefile.NAME).read_bytes() == good  # the published state stays
    server.expect_oneshot_request("/state").respond_with_data(good)
    again = build(config, now=LATER)
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "cache" / "report.json").read_text())["restored"] is True


def test_the_state_of_another_planet_is_not_loaded(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, snapshot=True)
    assert build(config).exit_code == 0
    shutil.copy(tmp_path / "public" / statefile.NAME, tmp_path / "theirs.json.gz")
    shutil.rmtree(tmp_path / "cache")
    config = planet(server, tmp_path, restore_from="theirs.json.gz", link="https://other.example.org/")
    result = build(config, now=LATER)
    assert result.exit_code == 0
    assert (
        "no state restored: theirs.json.gz: the state of another planet ('https://planet.example.org/', not "
        "'https://other.example.org/')" in result.stderr
    )


def test_local_feeds_are_written_relative_and_restored_in_another_folder(tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    (first / "a.xml").write_text(rss(UNDATED), encoding="utf-8")
    (tmp_path / "outside.xml").write_text(rss(post(3)), encoding="utf-8")
    config = write_config(
        first, [{"name": "A", "feed": "a.xml"}, {"name": "Outside", "feed": "../outside.xml"}], snapshot=True
    )
    assert build(config).exit_code == 0
    data = (first / "public" / statefile.NAME).read_bytes()
    text = gzip.decompress(data).decode()
    assert "file:" not in text and str(tmp_path) not in text  # no path of this machine is published
    assert '"syndicator-local:a.xml"' in text
    moved = tmp_path / "elsewhere"
    shutil.copytree(first, moved, ignore=shutil.ignore_patterns("cache", "public"))
    (moved / "state.json.gz").write_bytes(data)
    (moved / "b.xml").write_text(rss(post(2)), encoding="utf-8")
    config = write_config(
        moved, [{"name": "A", "feed": "a.xml"}, {"name": "B", "feed": "b.xml"}], restore_from="state.json.gz"
    )
    assert build(config, now=LATER).exit_code == 0
    with Store.open(moved / "cache") as store:
        (undated,) = store.snapshots([(moved / "a.xml").resolve().as_uri()]).values()
    assert [(item.first_seen, item.backlog) for item in undated] == [(NOW, "shown")]  # as the first build saw it
    # undated in A's first fetch: shown just below the oldest dated entry, B's post (2026-11-01T10:02)
    assert published_dates(moved / "public")["Undated post"] == "2026-11-01T10:01:59Z"


def test_a_state_file_that_unpacks_too_far_is_refused_without_reading_it_all(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(statefile, "MAX_LINE", 1000)
    (tmp_path / "bomb.json.gz").write_bytes(gzip.compress(b"0" * 100_000))
    config = planet(server, tmp_path, restore_from="bomb.json.gz")
    result = build(config)
    assert result.exit_code == 0
    assert "no state restored: bomb.json.gz: a damaged state file (a line or the whole is too long)" in result.stderr
