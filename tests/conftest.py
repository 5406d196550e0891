"""Shared fixtures: a real HTTP server on 127.0.0.1, feed builders, a fixed clock.

Every test that fetches talks to a loopback server started here; no test
reaches the internet.
"""

from __future__ import annotations

import http.server
import socketserver
import textwrap
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import settings
from pytest_httpserver import HTTPServer

from syndicator.cli import main

from .browser import NO_BROWSER, Browser, find_chromium, launch

# Property-based tests are derandomized (a run is reproducible, in CI too) and keep no example database.
settings.register_profile("syndicator", derandomize=True, database=None)
settings.load_profile("syndicator")

#: The fixed clock of most tests (UTC).
NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
NOW_ISO = "2026-11-30T12:00:00Z"
#: What a planet publishes beside its pages and feeds: the archive's folders (a planet whose posts have no
#: category has no categories/), the search page, its script and its index, and what crawlers read.
ARCHIVE_AND_SEARCH = ("archive", "robots.txt", "search", "search.html", "search.js", "sitemap.xml", "sites")
#: Small feed files used by several tests.
DATA = Path(__file__).parent / "data"
ATOM = "{http://www.w3.org/2005/Atom}"


@contextmanager
def in_thread(server: socketserver.BaseServer) -> Iterator[None]:
    """Serve ``server`` (bound to a loopback address) on a daemon thread for the ``with`` block,
    then shut it down and close its socket."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def loopback_server(
    address: str = "127.0.0.1", setup: Callable[[HTTPServer], None] | None = None
) -> Iterator[HTTPServer]:
    """A threaded HTTP server on ``address`` (a loopback address) and a free port,
    with ``setup`` applied before it starts; stopped on exit."""
    http = HTTPServer(host=address, port=0, threaded=True)
    if setup is not None:
        setup(http)
    http.start()
    try:
        yield http
    finally:
        http.clear()
        if http.is_running():
            http.stop()


#: Proxy variables (requests and curl read them, either case): the tests' requests go to loopback
#: servers directly, whatever proxy the machine running them is set up with.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _no_proxy_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


#: Variables syndicator reads that say where it runs, not what a test means: ``CI`` (a CI service
#: sets it; it turns the "cache holds no state" note into a warning and the progress line off) and
#: ``SYNDICATOR_STATE`` (a shared state URL). A test that needs one sets it itself, so the suite
#: gives the same result on a desktop and in CI (the CI run failed on a test that passed here).
MACHINE_VARIABLES = ("CI", "SYNDICATOR_STATE")


@pytest.fixture(autouse=True)
def _no_ci_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in MACHINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _send_response_without_date(
    handler: http.server.BaseHTTPRequestHandler, code: int, message: str | None = None
) -> None:
    """BaseHTTPRequestHandler.send_response less its ``Date`` line (the real clock)."""
    handler.log_request(code)
    handler.send_response_only(code, message)
    handler.send_header("Server", handler.version_string())


@pytest.fixture(autouse=True, scope="session")
def _test_servers_stamp_no_date() -> Iterator[None]:
    """The suite's HTTP servers (pytest-httpserver's werkzeug, http.server handlers) send no Date of
    their own: a real Date is the real clock, and a test that fixes ``NOW`` must not meet it in a
    response (a test whose Last-Modified was "NOW + 2 days" expired when the real clock passed it).
    A handler that needs a Date sets one from the test's clock."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(http.server.BaseHTTPRequestHandler, "send_response", _send_response_without_date)
        yield


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """A headless Chromium for the page tests (tests/browser.py); the test skips, saying why, without one."""
    binary = find_chromium()
    if binary is None:
        pytest.skip(NO_BROWSER)
    with launch(binary, tmp_path_factory.mktemp("chromium-profile")) as running:
        yield running


@pytest.fixture(scope="session")
def _session_server() -> Iterator[HTTPServer]:
    """One threaded HTTP server on 127.0.0.1 for the whole run (stopping one takes 0.5 s)."""
    with loopback_server() as http:
        yield http


@pytest.fixture
def server(_session_server: HTTPServer) -> Iterator[HTTPServer]:
    """A threaded HTTP server on 127.0.0.1 with a free port, with no handlers and an empty log."""
    _session_server.clear()
    try:
        yield _session_server
    finally:
        _session_server.clear()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event that slow server handlers wait on; set at teardown so no handler outlives its test."""
    event = threading.Event()
    try:
        yield event
    finally:
        event.set()


def rss(
    *items: dict[str, str], title: str = "Example Feed", link: str = "https://blog.example.org/", extra: str = ""
) -> str:
    """An RSS 2.0 document; each item is a dict of element name -> raw XML text."""
    body = "".join(
        "<item>" + "".join(f"<{k}>{v}</{k.split()[0]}>" for k, v in item.items()) + "</item>" for item in items
    )
    return textwrap.dedent(f"""\
        <?xml version="1.0" encoding="utf-8"?>
        <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"
             xmlns:content="http://purl.org/rss/1.0/modules/content/">
        <channel><title>{title}</title><link>{link}</link><description>d</description>{extra}
        {body}
        </channel></rss>
        """)


def post(n: int, day: int = 1, month: int = 11, host: str = "blog.example.org") -> dict[str, str]:
    """A dated RSS item number ``n`` published on 2026-``month``-``day``."""
    return {
        "title": f"Post {n}",
        "link": f"https://{host}/posts/{n}",
        "guid": f"https://{host}/posts/{n}",
        "pubDate": datetime(2026, month, day, 10, n % 60, tzinfo=UTC).strftime("%a, %d %b %Y %H:%M:%S +0000"),
        "description": f"Summary of post {n}",
    }


def write_config(folder: Path, sites: list[dict[str, Any]], **settings: Any) -> Path:
    """Write a sites.yaml into ``folder`` and return its path."""
    data: dict[str, Any] = {"title": "Planet Test", "link": "https://planet.example.org/"}
    data.update(settings)
    data["sites"] = sites
    path = folder / "sites.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def build(config: Path, *args: str, now: str = NOW_ISO) -> Result:
    """Run ``syndicator build --config CONFIG --now NOW ARGS`` with the real CLI."""
    return CliRunner().invoke(main, ["build", "--config", str(config), "--now", now, *args], catch_exceptions=False)


def without_first_build_warning(stderr: str) -> str:
    """``stderr`` without the warning a build gives when its cache folder holds no state yet."""
    return "".join(line for line in stderr.splitlines(keepends=True) if " holds no state (a first build" not in line)


def without_info(stderr: str) -> str:
    """``stderr`` without its info lines (the life-cycle lines, such as a build's start line)."""
    return "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith("syndicator: info: "))


def troubles(stderr: str) -> list[str]:
    """The warning and error lines of a command's ``stderr`` (its life-cycle lines are info)."""
    return [line for line in stderr.splitlines() if line.startswith(("syndicator: warning:", "syndicator: error:"))]


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` as {relative path: bytes}, for byte-for-byte comparisons."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def atom_entries(path: Path) -> list[ET.Element]:
    """The ``atom:entry`` elements of an Atom file, in document order (parsing must succeed)."""
    return ET.parse(path).getroot().findall(f"{ATOM}entry")


def entry_titles(path: Path) -> list[str]:
    """Entry titles of an Atom file, in document order."""
    return [e.findtext(f"{ATOM}title") or "" for e in atom_entries(path)]


def sent_to(*urls: str) -> Callable[[Any, datetime], tuple[str, ...]]:
    """A store's outbox router (saves.Router) sending every event to ``urls``, as one planet's webhooks are."""
    return lambda stored, now: urls
