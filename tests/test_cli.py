"""cli: the syndicator command, its options, messages and exit codes; packaging."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator import __version__, cli, errors
from syndicator.cli import main
from syndicator.cli.options import IsoTime
from syndicator.drivers.report import BuildReport
from syndicator.errors import RenderError
from syndicator.site.theme import TEMPLATES
from syndicator.state.store import Store

from .conftest import NOW_ISO, build, post, rss, write_config

ROOT = Path(__file__).resolve().parents[1]


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout == f"syndicator, version {__version__}\n"


def test_build_help_lists_every_option() -> None:
    result = CliRunner().invoke(main, ["build", "--help"], catch_exceptions=False)
    assert result.exit_code == 0
    for option in (
        "--config",
        "--output",
        "--cache",
        "--templates",
        "--force",
        "--workers",
        "--now",
        "--verbose",
        "--quiet",
        "-v",
        "-q",
    ):
        assert option in result.stdout


def test_every_exit_code_is_documented() -> None:
    classes = [
        errors.ConfigError,
        errors.EmptyBuildError,
        errors.CacheLockedError,
        errors.StoreError,
        RenderError,
        errors.InternalErrorsExit,
    ]
    documented = {int(code) for code in re.findall(r"\b(\d) [a-z]", cli.__doc__ or "")}
    assert {0, 1} | {cls.exit_code for cls in classes} <= documented
    assert len({cls.exit_code for cls in classes}) == len(classes)  # one code per failure


def test_summary_is_one_line_on_stdout(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1), post(2, day=2)))
    server.expect_request("/b.xml").respond_with_data("gone", status=404)
    config = write_config(
        tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}, {"name": "B", "feed": server.url_for("/b.xml")}]
    )
    result = build(config)
    assert result.exit_code == 0
    assert re.fullmatch(
        r"2 sites: 2 feeds due, 2 requested \(1 changed, 0 unchanged, 1 failed\), 0 skipped, "
        r"0 stale copies used, 2 entries written, \d+ B downloaded, \d+\.\d s\n",
        result.stdout,
    ), result.stdout


@pytest.mark.parametrize(
    ("figures", "line"),
    [
        pytest.param(
            dict(
                sites=21,
                sources=20,
                due=20,
                fetched=18,
                changed=5,
                stale_copies=1,
                entries=60,
                bytes_downloaded=3413,
                seconds=3.14,
                outcomes={"fetched": 7, "unchanged": 2, "not_modified": 8, "failed": 1},
                skipped={"throttled": 2},
            ),
            "21 sites: 20 feeds due, 18 requested (5 changed, 12 unchanged, 1 failed), 2 skipped, "
            "1 stale copy used, 60 entries written, 3.4 kB downloaded, 3.1 s",
            id="busy",
        ),
        pytest.param(
            dict(
                sites=1,
                sources=1,
                due=1,
                fetched=1,
                changed=1,
                entries=1,
                bytes_downloaded=999,
                outcomes={"fetched": 1},
            ),
            "1 site: 1 feed due, 1 requested (1 changed, 0 unchanged, 0 failed), 0 skipped, "
            "0 stale copies used, 1 entry written, 999 B downloaded, 0.0 s",
            id="singular",
        ),
        pytest.param(
            dict(sites=3, sources=3, entries=15, bytes_downloaded=0),
            "3 sites: 0 feeds due, 0 requested (0 changed, 0 unchanged, 0 failed), 0 skipped, "
            "0 stale copies used, 15 entries written, 0 B downloaded, 0.0 s",
            id="nothing-due",
        ),
        pytest.param(
            dict(
                sites=2,
                sources=2,
                due=2,
                fetched=2,
                changed=2,
                entries=10,
                bytes_downloaded=12_345_678,
                outcomes={"fetched": 2},
            ),
            "2 sites: 2 feeds due, 2 requested (2 changed, 0 unchanged, 0 failed), 0 skipped, "
            "0 stale copies used, 10 entries written, 12.3 MB downloaded, 0.0 s",
            id="megabytes",
        ),
    ],
)
def test_summary_counts_add_up(figures: dict[str, Any], line: str) -> None:
    """due = requested + skipped; requested = changed + unchanged + failed (docs/reference/commands.md)."""
    for name in ("outcomes", "skipped"):
        figures[name] = Counter(figures.get(name, {}))
    assert BuildReport(**figures, rendered=True).summary() == line


@pytest.mark.parametrize("page", ["README.md", "docs/reference/commands.md"])
def test_the_docs_show_the_summary_line_as_printed(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    (example,) = re.findall(r"^\d+ sites: .*$", text, flags=re.MULTILINE)
    assert re.fullmatch(
        r"\d+ sites: \d+ feeds due, \d+ requested \(\d+ changed, \d+ unchanged, \d+ failed\), "
        r"\d+ skipped, \d+ stale cop(y|ies) used, \d+ entries written, [\d.]+ [kM]?B downloaded, "
        r"\d+\.\d s",
        example,
    ), example


def test_output_and_cache_options_override_the_config(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}])
    result = build(config, "--output", str(tmp_path / "site"), "--cache", str(tmp_path / "state"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "state" / "state.sqlite").is_file()
    assert not (tmp_path / "public").exists() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        pytest.param(["--workers", "0"], "--workers", id="no-workers"),
        pytest.param(["--now", "someday"], "--now", id="bad-now"),
        pytest.param(["--templates", "/nonexistent/templates"], "--templates", id="missing-templates"),
        pytest.param(["--bogus"], "--bogus", id="unknown-option"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], words: str) -> None:
    config = write_config(tmp_path, [{"name": "A", "feed": "https://a.example.org/feed"}])
    result = CliRunner().invoke(main, ["build", "--config", str(config), *args], catch_exceptions=False)
    assert result.exit_code == 2
    assert words in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sites.yaml"]


@pytest.mark.parametrize("command", ["build", "status"])
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("12", id="a-number"),
        pytest.param("1e9", id="exponent"),
        pytest.param("Tue, 30 Nov 2026 12:00:00 GMT", id="rfc-822"),
        pytest.param("0001-01-01T00:00:00Z", id="year-1"),
        pytest.param("9999-12-31T23:59:59Z", id="year-9999"),
        pytest.param("1994-12-31T12:00:00Z", id="before-1995"),
    ],
)
def test_now_must_be_an_iso_time_in_a_sane_range(server: HTTPServer, tmp_path: Path, command: str, text: str) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}])
    result = CliRunner().invoke(main, [command, "--config", str(config), "--now", text], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--now'" in result.stderr
    assert server.log == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sites.yaml"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2026-11-30T12:00:00Z", "2026-11-30T12:00:00+00:00", id="zulu"),
        pytest.param("2026-11-30T12:00:00z", "2026-11-30T12:00:00+00:00", id="lower-case-zulu"),
        pytest.param("2026-11-30t12:00:00z", "2026-11-30T12:00:00+00:00", id="lower-case-t-and-zulu"),
        pytest.param("2026-11-30T13:30:00+01:30", "2026-11-30T12:00:00+00:00", id="offset"),
        pytest.param("2026-11-30T12:00:00", "2026-11-30T12:00:00+00:00", id="no-zone-is-utc"),
        pytest.param("2026-11-30", "2026-11-30T00:00:00+00:00", id="date-is-midnight"),
        pytest.param("2999-12-31T23:59:59Z", "2999-12-31T23:59:59+00:00", id="last-year"),
    ],
)
def test_now_accepts_iso_times_and_reads_them_as_utc(text: str, expected: str) -> None:
    assert IsoTime().convert(text, None, None).isoformat() == expected


def test_missing_config_file_exits_2(tmp_path: Path) -> None:
    result = build(tmp_path / "nope.yaml")
    assert result.exit_code == 2
    assert result.stderr == f"syndicator: error: {tmp_path / 'nope.yaml'}: cannot read: No such file or directory\n"


@pytest.mark.parametrize("command", ["build", "status"])
def test_config_that_is_a_folder_is_one_line_exit_2(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "sites.yaml"
    folder.mkdir()
    result = CliRunner().invoke(main, [command, "--config", str(folder)], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stderr == f"syndicator: error: {folder}: cannot read: Is a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sites.yaml"]


@pytest.mark.parametrize(
    ("flags", "shows_info", "shows_lifecycle", "shows_warning", "shows_error", "shows_summary"),
    [
        pytest.param([], False, True, True, True, True, id="default"),
        pytest.param(["-v"], True, True, True, True, True, id="verbose"),
        pytest.param(["-q"], False, False, False, True, True, id="quiet"),
        pytest.param(["-qq"], False, False, False, False, False, id="very-quiet"),
    ],
)
def test_verbosity(
    server: HTTPServer,
    tmp_path: Path,
    flags: list[str],
    shows_info: bool,
    shows_lifecycle: bool,
    shows_warning: bool,
    shows_error: bool,
    shows_summary: bool,
) -> None:
    """Details at info need -v; the life-cycle lines (info too) show by default and go with -q."""
    server.expect_oneshot_request("/flaky.xml").respond_with_data(rss(post(1)))
    server.expect_request("/flaky.xml").respond_with_data("no", status=404)
    server.expect_request("/never.xml").respond_with_data("no", status=404)
    config = write_config(
        tmp_path,
        [
            {"name": "Flaky", "feed": server.url_for("/flaky.xml")},
            {"name": "Never", "feed": server.url_for("/never.xml")},
        ],
        host_gap=0,
    )
    assert build(config, "-qq").exit_code == 0
    result = build(config, "--force", *flags)
    assert result.exit_code == 0
    assert (f"syndicator: info: {server.url_for('/flaky.xml')}: HTTP 404" in result.stderr) is shows_info
    assert ("syndicator: info: build: started; 2 of 2 feeds due" in result.stderr) is shows_lifecycle
    assert ("syndicator: warning: site 'Flaky'" in result.stderr) is shows_warning
    assert ("syndicator: error: site 'Never'" in result.stderr) is shows_error
    assert ("2 sites" in result.stdout) is shows_summary


# --- the cache lock -------------------------------------------------------------------


def test_build_refuses_a_locked_cache_with_exit_4(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}])
    with Store.open(tmp_path / "cache"):
        result = build(config)
    assert result.exit_code == 4
    assert result.stderr == (
        f"syndicator: error: {tmp_path / 'cache'}: another syndicator build or serve "
        "is using this cache; wait for the build to finish, or stop the serve\n"
    )
    assert server.log == []
    assert build(config).exit_code == 0  # and the lock is free again


def test_two_builds_on_one_cache_at_once(server: HTTPServer, tmp_path: Path, release: threading.Event) -> None:
    arrived: list[str] = []

    def slow(request: Request) -> Response:
        arrived.append(request.path)
        release.wait(20)
        return Response(rss(post(1)), content_type="application/rss+xml")

    server.expect_request("/slow.xml").respond_with_handler(slow)
    config = write_config(tmp_path, [{"name": "Slow", "feed": server.url_for("/slow.xml")}], timeout=30)
    first = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from syndicator.cli import main; main()",
            "build",
            "--config",
            str(config),
            "--now",
            NOW_ISO,
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(200):  # at most ~20 s for the first build to reach the server
            if arrived:
                break
            assert first.poll() is None, first.communicate()
            time.sleep(0.1)
        second = build(config)
        assert second.exit_code == 4
        assert "another syndicator build or serve is using this cache" in second.stderr
        release.set()
        stdout, stderr = first.communicate(timeout=30)
    finally:
        first.kill()
        first.wait(10)
    assert first.returncode == 0, stderr
    assert "1 requested (1 changed, " in stdout
    assert arrived == ["/slow.xml"]  # the refused build fetched nothing


# --- packaging --------------------------------------------------------------------------


def test_a_plain_install_finds_the_templates(server: HTTPServer, tmp_path: Path) -> None:
    """Build a wheel offline, install it (not editable) into a folder, and publish with it.

    Needs setuptools >= 77 in the test environment (the ``test`` extra pulls it in);
    takes about a second.
    """
    try:
        setuptools_major = int(version("setuptools").split(".")[0])
    except PackageNotFoundError:
        setuptools_major = 0
    if setuptools_major < 77:
        pytest.skip("setuptools >= 77 is needed to build the wheel without network (pip install -e '.[test]')")
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in ("syndicator", "templates"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(tmp_path / "dist"), str(source)],
        check=True,
        cwd=tmp_path,
    )
    (wheel,) = (tmp_path / "dist").glob("syndicator-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (*TEMPLATES, "_layout.html", "style.css"):
        assert f"syndicator/templates/{template}" in names
    target = tmp_path / "installed"
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)], check=True)
    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}])
    script = f"import sys, syndicator.cli as c; assert c.__file__.startswith({str(target)!r}), c.__file__; c.main()"
    environment = {**os.environ, "PYTHONPATH": str(target)}
    done = subprocess.run(
        [sys.executable, "-c", script, "build", "--config", str(config), "--now", NOW_ISO],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "Post 1" in (tmp_path / "public" / "index.html").read_text()


def test_status_text_says_when_each_site_is_due(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    config = write_config(
        tmp_path,
        [
            {"name": "Fetched", "feed": server.url_for("/a.xml")},
            {"name": "Added later", "feed": server.url_for("/b.xml")},
        ],
    )
    assert build(config, "--site", "Fetched").exit_code == 0

    def next_due(now: str) -> dict[str, str]:
        result = CliRunner().invoke(main, ["status", "--config", str(config), "--now", now], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        *sites, totals = result.stdout.splitlines()
        assert totals == "2 sites: 1 ok, 1 new, 0 stale"
        names = [line.split("  [")[0] for line in sites if not line.startswith(" ")]
        dues = [
            line.split("next due: ")[1].split("   ")[0]
            for line in result.stdout.splitlines()
            if line.startswith("  next due: ")
        ]
        return dict(zip(names, dues, strict=True))

    soon = next_due(NOW_ISO)
    assert soon["Added later"] == "now (never attempted)"
    assert re.fullmatch(r"2026-1[12]-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", soon["Fetched"]), soon
    assert NOW_ISO < soon["Fetched"] < "2026-12-01T12:00:00Z"  # planned by its habits, within max_interval
    late = next_due("2026-12-02T12:00:00Z")
    assert late["Fetched"] == soon["Fetched"] + " (due now)"
    assert late["Added later"] == "now (never attempted)"
