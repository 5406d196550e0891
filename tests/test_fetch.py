"""fetch: conditional GET against a real HTTP server on 127.0.0.1.

Timeouts are tiny (1 s) so the suite stays fast; nothing here asserts a
wall-clock limit: a cut download shows as a timeout failure and as bytes
the server never got to send.
"""

from __future__ import annotations

import gzip
import json
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response
from werkzeug.datastructures import Headers

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

from syndicator import __version__
from syndicator.fetch.http import Fetcher
from syndicator.model import Failed, Fetched, FetchRequest, NotModified

from .conftest import build, in_thread, post, rss, write_config

FEED = rss(post(1)).encode()
UA = "syndicator/test (+https://planet.example.org/)"


def fetcher(**options: float) -> Fetcher:
    settings = {"timeout": 1.0, "retries": 1, "retry_delay": 0.05, **options}
    return Fetcher(
        UA,
        timeout=settings["timeout"],
        retries=int(settings["retries"]),
        retry_delay=settings["retry_delay"],
        max_bytes=int(options.get("max_bytes", 10 * 1024 * 1024)),
    )


def get(url: str, **request: str | None) -> FetchRequest:
    return FetchRequest(source=url, url=url, **request)  # type: ignore[arg-type]


def requests_to(server: HTTPServer, path: str) -> list[Request]:
    return [request for request, _response in server.log if request.path == path]


# --- validators and conditional requests --------------------------------------


def test_first_fetch_is_unconditional_and_keeps_validators_exactly(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_data(
        FEED, headers={"ETag": 'W/"v1-abc"', "Last-Modified": "Sun, 01 Nov 2026 10:00:00 GMT"}
    )
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Fetched)
    assert result.body == FEED
    assert (result.etag, result.last_modified) == ('W/"v1-abc"', "Sun, 01 Nov 2026 10:00:00 GMT")
    (request,) = requests_to(server, "/feed")
    assert "If-None-Match" not in request.headers
    assert "If-Modified-Since" not in request.headers
    assert request.headers["User-Agent"] == UA
    assert "gzip" in request.headers["Accept-Encoding"]


@pytest.mark.parametrize(
    ("etag", "modified", "expected"),
    [
        pytest.param(
            'W/"v1-abc"',
            "Sun, 01 Nov 2026 10:00:00 GMT",
            {"If-None-Match": 'W/"v1-abc"', "If-Modified-Since": "Sun, 01 Nov 2026 10:00:00 GMT"},
            id="both",
        ),
        pytest.param('"strong"', None, {"If-None-Match": '"strong"'}, id="etag-only"),
        pytest.param(
            None,
            "Sun, 01 Nov 2026 10:00:00 GMT",
            {"If-Modified-Since": "Sun, 01 Nov 2026 10:00:00 GMT"},
            id="last-modified-only",
        ),
        pytest.param(
            "unquoted odd etag",
            "not even a date",
            {"If-None-Match": "unquoted odd etag", "If-Modified-Since": "not even a date"},
            id="sent-back-byte-for-byte",
        ),
    ],
)
def test_conditional_headers_are_the_stored_validators(
    server: HTTPServer, etag: str | None, modified: str | None, expected: dict[str, str]
) -> None:
    server.expect_request("/feed").respond_with_data("", status=304, headers={"ETag": '"new"'})
    url = server.url_for("/feed")
    result = fetcher().fetch(get(url, etag=etag, last_modified=modified, validators_url=url))
    assert isinstance(result, NotModified)
    assert result.etag == '"new"'
    (request,) = requests_to(server, "/feed")
    sent = {name: request.headers[name] for name in ("If-None-Match", "If-Modified-Since") if name in request.headers}
    assert sent == expected


def test_validators_are_not_sent_to_another_url(server: HTTPServer) -> None:
    server.expect_request("/moved").respond_with_data(FEED)
    result = fetcher().fetch(
        FetchRequest(
            source=server.url_for("/old"),
            url=server.url_for("/moved"),
            etag='"x"',
            last_modified="Sun, 01 Nov 2026 10:00:00 GMT",
            validators_url=server.url_for("/old"),
        )
    )
    assert isinstance(result, Fetched)
    (request,) = requests_to(server, "/moved")
    assert "If-None-Match" not in request.headers and "If-Modified-Since" not in request.headers


def conditional_handler(request: Request) -> Response:
    """A feed that answers 304 to exactly its own validators."""
    etag, modified = 'W/"rev-7"', "Sun, 01 Nov 2026 10:00:00 GMT"
    if request.headers.get("If-None-Match") == etag or request.headers.get("If-Modified-Since") == modified:
        return Response(status=304, headers={"ETag": etag})
    return Response(
        rss(post(1), post(2, day=2)),
        content_type="application/rss+xml",
        headers={"ETag": etag, "Last-Modified": modified},
    )


def test_build_sends_stored_validators_and_keeps_snapshot_on_304(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.xml").respond_with_handler(conditional_handler)
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    first = build(config)
    assert first.exit_code == 0, first.output
    second = build(config, "--force", now="2026-11-30T13:00:00Z")
    assert second.exit_code == 0, second.output
    assert "1 requested (0 changed, 1 unchanged, 0 failed)" in second.stdout
    first_request, second_request = requests_to(server, "/feed.xml")
    assert "If-None-Match" not in first_request.headers
    assert second_request.headers["If-None-Match"] == 'W/"rev-7"'
    assert second_request.headers["If-Modified-Since"] == "Sun, 01 Nov 2026 10:00:00 GMT"
    assert second_request.headers["User-Agent"] == f"syndicator/{__version__} (+https://planet.example.org/)"
    index = (tmp_path / "public" / "index.html").read_text()
    assert "Post 1" in index and "Post 2" in index


# --- redirects -----------------------------------------------------------------


def redirects(server: HTTPServer, chain: list[tuple[str, int]], final: str = "/feed") -> None:
    """Serve each (path, status) as a redirect to the next path; the last one to ``final``."""
    targets = [path for path, _ in chain[1:]] + [final]
    for (path, status), target in zip(chain, targets, strict=True):
        server.expect_request(path).respond_with_data("", status=status, headers={"Location": target})
    server.expect_request(final).respond_with_data(FEED)


@pytest.mark.parametrize(
    ("chain", "permanent"),
    [
        pytest.param([("/a", 301)], True, id="301"),
        pytest.param([("/a", 308), ("/b", 301)], True, id="308-then-301"),
        pytest.param([("/a", 302)], False, id="302"),
        pytest.param([("/a", 301), ("/b", 307)], False, id="301-then-307"),
        pytest.param([("/a", 303), ("/b", 301)], False, id="303-then-301"),
        pytest.param([(f"/r{i}", 301) for i in range(5)], True, id="five-hops-allowed"),
    ],
)
def test_redirects_are_followed(server: HTTPServer, chain: list[tuple[str, int]], permanent: bool) -> None:
    redirects(server, chain)
    result = fetcher().fetch(get(server.url_for(chain[0][0])))
    assert isinstance(result, Fetched)
    assert result.url == server.url_for("/feed")
    assert result.permanent_url == (server.url_for("/feed") if permanent else None)


def test_relative_location_is_resolved(server: HTTPServer) -> None:
    server.expect_request("/blog/old").respond_with_data("", status=301, headers={"Location": "../feed"})
    server.expect_request("/feed").respond_with_data(FEED)
    result = fetcher().fetch(get(server.url_for("/blog/old")))
    assert isinstance(result, Fetched) and result.url == server.url_for("/feed")


class RawRedirect(Response):
    """A 301 whose Location is sent exactly as given (werkzeug would parse it, and fail on a bad one)."""

    def __init__(self, location: str) -> None:
        super().__init__("", status=301)
        self.raw_location = location

    def get_wsgi_headers(self, environ: WSGIEnvironment) -> Headers:
        headers = super().get_wsgi_headers(environ)
        headers["Location"] = self.raw_location
        return headers


def raw_redirect(server: HTTPServer, path: str, location: str) -> None:
    server.expect_request(path).respond_with_handler(lambda _request: RawRedirect(location))


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        pytest.param(
            lambda s: redirects(s, [(f"/r{i}", 302) for i in range(6)]), "more than 5 redirects", id="six-hops"
        ),
        pytest.param(lambda s: redirects(s, [("/r0", 301), ("/r1", 302)], final="/r0"), "redirect loop", id="loop"),
        pytest.param(
            lambda s: s.expect_request("/r0").respond_with_data(
                "", status=301, headers={"Location": "ftp://files.example.org/feed"}
            ),
            "non-http(s)",
            id="to-ftp",
        ),
        pytest.param(
            lambda s: s.expect_request("/r0").respond_with_data("", status=302), "without Location", id="no-location"
        ),
        pytest.param(
            lambda s: raw_redirect(s, "/r0", "http://[oops/"),
            "redirect to an unusable URL 'http://[oops/'",
            id="malformed-ipv6",
        ),
        pytest.param(
            lambda s: raw_redirect(s, "/r0", "http://feeds.example.org:99999/feed"),
            "unusable URL",
            id="port-out-of-range",
        ),
        pytest.param(
            lambda s: raw_redirect(s, "/r0", "http://a.example:x/feed"), "unusable URL", id="port-not-a-number"
        ),
        pytest.param(
            lambda s: raw_redirect(s, "/r0", "http://a%zz.example/feed"),
            "redirect to an unusable URL",
            id="host-requests-refuses",
        ),
        pytest.param(
            lambda s: raw_redirect(s, "/r0", f"http://{'a' * 64}.example/feed"),
            "redirect to an unusable URL",
            id="host-label-too-long",
        ),
    ],
)
def test_bad_redirects_fail(server: HTTPServer, setup, words: str) -> None:  # type: ignore[no-untyped-def]
    setup(server)
    result = fetcher().fetch(get(server.url_for("/r0")))
    assert isinstance(result, Failed)
    assert result.error.kind == "redirect"
    assert words in result.error.message
    assert not requests_to(server, "/feed")


def test_a_redirect_to_an_unusable_url_fails_that_site_and_the_build_goes_on(
    server: HTTPServer, tmp_path: Path
) -> None:
    raw_redirect(server, "/moved.xml", "http://[oops/")
    server.expect_request("/good.xml").respond_with_data(rss(post(2, day=2)), content_type="application/rss+xml")
    config = write_config(
        tmp_path,
        [
            {"name": "Moved", "feed": server.url_for("/moved.xml")},
            {"name": "Good", "feed": server.url_for("/good.xml")},
        ],
    )
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "2 requested (1 changed, 0 unchanged, 1 failed)" in result.stdout
    assert "redirect to an unusable URL 'http://[oops/'" in result.stderr
    assert json.loads((tmp_path / "cache" / "report.json").read_text())["failed_by_class"] == {"redirect": 1}
    assert "Post 2" in (tmp_path / "public" / "index.html").read_text()


def test_permanent_redirect_moves_the_fetch_url_for_later_builds(server: HTTPServer, tmp_path: Path) -> None:
    redirects(server, [("/old.xml", 301)], final="/new.xml")
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/old.xml")}])
    assert build(config).exit_code == 0
    assert build(config, "--force", now="2026-11-30T13:00:00Z").exit_code == 0
    assert [r.path for r, _ in server.log] == ["/old.xml", "/new.xml", "/new.xml"]


# --- failures and retries ------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "headers", "kind", "attempts"),
    [
        pytest.param(404, {}, "http_404", 1, id="404-not-retried"),
        pytest.param(410, {}, "http_410", 1, id="410-gone"),
        pytest.param(403, {}, "http_401", 1, id="403-forbidden"),
        pytest.param(429, {"Retry-After": "120"}, "http_429", 1, id="429-not-retried"),
        pytest.param(500, {}, "http_5xx", 2, id="500-retried-once"),
        pytest.param(503, {}, "http_5xx", 2, id="503-retried-once"),
        pytest.param(503, {"Retry-After": "60"}, "http_5xx", 1, id="503-with-retry-after-not-retried"),
    ],
)
def test_http_errors_are_classified_and_transient_ones_retried_once(
    server: HTTPServer, status: int, headers: dict[str, str], kind: str, attempts: int
) -> None:
    server.expect_request("/feed").respond_with_data("<h1>error</h1>", status=status, headers=headers)
    result = fetcher(retries=1).fetch(get(server.url_for("/feed")))
    assert isinstance(result, Failed)
    assert result.error.kind == kind
    assert result.error.message == f"HTTP {status}"
    assert len(requests_to(server, "/feed")) == attempts


def test_retry_after_a_5xx_can_succeed(server: HTTPServer) -> None:
    server.expect_oneshot_request("/feed").respond_with_data("busy", status=502)
    server.expect_request("/feed").respond_with_data(FEED)
    result = fetcher(retries=1).fetch(get(server.url_for("/feed")))
    assert isinstance(result, Fetched) and result.body == FEED


def test_no_retry_when_retries_is_zero(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_data("busy", status=500)
    result = fetcher(retries=0).fetch(get(server.url_for("/feed")))
    assert isinstance(result, Failed)
    assert len(requests_to(server, "/feed")) == 1


def test_connection_refused_is_a_network_failure() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = fetcher(retries=1).fetch(get(f"http://127.0.0.1:{port}/feed"))
    assert isinstance(result, Failed)
    assert result.error.kind == "network"


def test_a_hang_past_the_timeout_fails_and_is_retried(server: HTTPServer, release: threading.Event) -> None:
    arrived: list[str] = []

    def hang(request: Request) -> Response:
        arrived.append(request.path)
        release.wait(10)
        return Response(FEED)

    server.expect_request("/hang").respond_with_handler(hang)
    result = fetcher(timeout=1, retries=1).fetch(get(server.url_for("/hang")))
    assert isinstance(result, Failed)
    assert result.error.kind == "timeout"
    assert arrived == ["/hang", "/hang"]


class Drip:
    """A response body that trickles out one byte every ``interval`` seconds."""

    def __init__(self, size: int, interval: float) -> None:
        self.size, self.interval, self.sent = size, interval, 0

    def handler(self, _request: Request) -> Response:
        def body() -> Iterator[bytes]:
            for _ in range(self.size):
                self.sent += 1
                yield b" "
                time.sleep(self.interval)

        return Response(
            body(),
            headers={"Content-Length": str(self.size)},
            content_type="application/rss+xml",
            direct_passthrough=True,
        )


def test_a_slow_drip_is_cut_at_the_deadline(server: HTTPServer) -> None:
    drip = Drip(size=60, interval=0.2)  # 12 s for the whole body; each byte well inside the 1 s read timeout
    server.expect_request("/drip").respond_with_handler(drip.handler)
    result = fetcher(timeout=1, retries=0).fetch(get(server.url_for("/drip")))
    assert isinstance(result, Failed)
    assert result.error.kind == "timeout"
    assert drip.sent < drip.size  # the fetcher hung up instead of waiting for the whole body


def test_the_deadline_covers_the_retry_too(server: HTTPServer) -> None:
    drip = Drip(size=60, interval=0.2)
    server.expect_request("/drip").respond_with_handler(drip.handler)
    result = fetcher(timeout=1, retries=1).fetch(get(server.url_for("/drip")))
    assert isinstance(result, Failed)
    assert result.error.kind == "timeout"
    assert len(server.log) == 1  # the deadline was spent, so the retry was not made


def test_a_redirect_body_is_never_read(server: HTTPServer) -> None:
    """requests would read a redirect's whole body, uncapped, even when told not to follow it."""
    drip = Drip(size=60, interval=0.2)

    def moved(request: Request) -> Response:
        response = drip.handler(request)
        response.status_code = 301
        response.headers["Location"] = "/feed"
        return response

    server.expect_request("/moved").respond_with_handler(moved)
    server.expect_request("/feed").respond_with_data(FEED)
    result = fetcher(timeout=1, retries=0).fetch(get(server.url_for("/moved")))
    assert isinstance(result, Fetched) and result.body == FEED
    assert drip.sent < drip.size


# --- body: gzip and the size cap -------------------------------------------------


def test_gzip_body_is_decompressed(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_data(gzip.compress(FEED), headers={"Content-Encoding": "gzip"})
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Fetched)
    assert result.body == FEED


def test_build_reads_a_gzip_feed(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.xml").respond_with_data(
        gzip.compress(rss(post(1), post(2, day=2)).encode()),
        headers={"Content-Encoding": "gzip", "Content-Type": "application/rss+xml"},
    )
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "2 entries written" in result.stdout


@pytest.mark.parametrize(
    ("size", "encoding", "ok"),
    [
        pytest.param(64 * 1024, None, True, id="exactly-the-cap"),
        pytest.param(64 * 1024 + 1, None, False, id="one-byte-over"),
        pytest.param(64 * 1024 + 1, "gzip", False, id="over-after-decompression"),
        pytest.param(64 * 1024, "gzip", True, id="gzip-at-the-cap"),
    ],
)
def test_size_cap_counts_decompressed_bytes(server: HTTPServer, size: int, encoding: str | None, ok: bool) -> None:
    body = b"a" * size
    if encoding:
        server.expect_request("/big").respond_with_data(gzip.compress(body), headers={"Content-Encoding": encoding})
    else:
        server.expect_request("/big").respond_with_data(body)
    result = fetcher(max_bytes=64 * 1024).fetch(get(server.url_for("/big")))
    if ok:
        assert isinstance(result, Fetched) and result.body == body
    else:
        assert isinstance(result, Failed) and result.error.kind == "too_large"
        assert len(requests_to(server, "/big")) == 1  # too large is not transient


# --- through the build: user agent, a bounded pool ------------------------------


def test_build_identifies_itself_with_the_contact_url(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.xml").respond_with_data(FEED)
    config = write_config(
        tmp_path,
        [{"name": "Blog", "feed": server.url_for("/feed.xml")}],
        user_agent="https://planet.example.org/contact",
    )
    assert build(config).exit_code == 0
    (request,) = requests_to(server, "/feed.xml")
    assert request.headers["User-Agent"] == f"syndicator/{__version__} (+https://planet.example.org/contact)"


@pytest.fixture
def four_hosts() -> Iterator[list[HTTPServer]]:
    """Four servers on four loopback addresses, so per-host limits do not hide the pool size."""
    servers = [HTTPServer(host=f"127.0.0.{n}", port=0, threaded=True) for n in range(1, 5)]
    for http in servers:
        http.start()
    try:
        yield servers
    finally:
        stoppers = [threading.Thread(target=http.stop) for http in servers]  # each stop takes 0.5 s
        for thread in stoppers:
            thread.start()
        for thread in stoppers:
            thread.join()


def test_pool_never_runs_more_than_workers_fetches_at_once(four_hosts: list[HTTPServer], tmp_path: Path) -> None:
    lock = threading.Lock()
    in_flight, peak = [0], [0]

    def slow(_request: Request) -> Response:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.3)
        with lock:
            in_flight[0] -= 1
        return Response(FEED, content_type="application/rss+xml")

    sites = []
    for n, http in enumerate(four_hosts):
        http.expect_request("/feed.xml").respond_with_handler(slow)
        sites.append({"name": f"Site {n}", "feed": http.url_for("/feed.xml")})
    config = write_config(tmp_path, sites)
    result = build(config, "--workers", "2")
    assert result.exit_code == 0, result.output
    assert "4 requested (4 changed, " in result.stdout
    assert peak[0] == 2


class _HeaderDrip(socketserver.BaseRequestHandler):
    """Sends a status line, then header bytes one every 0.2 s (12 s in all)."""

    sent = 0
    size = 60

    def handle(self) -> None:
        self.request.recv(65536)
        try:
            self.request.sendall(b"HTTP/1.1 200 OK\r\nX-Padding: ")
            for _ in range(self.size):
                self.request.sendall(b"a")
                type(self).sent += 1
                time.sleep(0.2)
        except OSError:
            pass


def test_headers_dripping_past_the_deadline_are_cut() -> None:
    """Each header byte comes well inside the read timeout, so only the total deadline can stop it."""
    _HeaderDrip.sent = 0
    tcp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _HeaderDrip)
    tcp.daemon_threads = True
    with in_thread(tcp):
        result = fetcher(timeout=1, retries=0).fetch(get(f"http://127.0.0.1:{tcp.server_address[1]}/feed"))
    assert isinstance(result, Failed)
    assert result.error.kind == "timeout"
    assert _HeaderDrip.sent < _HeaderDrip.size  # the fetcher hung up before the headers ended


def test_a_result_counts_every_http_request_it_made(server: HTTPServer) -> None:
    server.expect_oneshot_request("/flaky").respond_with_data("busy", status=500)
    server.expect_request("/flaky").respond_with_data(FEED)
    server.expect_request("/moved").respond_with_data("", status=301, headers={"Location": "/flaky"})
    assert fetcher().fetch(get(server.url_for("/flaky"))).requests == 2  # one retry
    assert fetcher().fetch(get(server.url_for("/moved"))).requests == 2  # one redirect hop


def test_report_counts_http_requests_per_host_as_the_server_saw_them(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_oneshot_request("/a.xml").respond_with_data("busy", status=503)
    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    server.expect_request("/b.xml").respond_with_data(rss(post(2)))
    config = write_config(
        tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}, {"name": "B", "feed": server.url_for("/b.xml")}]
    )
    assert build(config).exit_code == 0
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert len(server.log) == 3
    assert (report["fetched"], report["requests"]) == (2, 3)
    assert report["hosts"]["127.0.0.1"]["requests"] == 3
    assert report["hosts"]["127.0.0.1"]["sources"] == 2


def test_a_fetcher_for_no_sites_yaml_has_the_config_defaults_and_no_contact_url(tmp_path: Path) -> None:
    from syndicator.config.load import load_config  # noqa: PLC0415

    with Fetcher.for_config(None) as bare, Fetcher.for_config(None, user_agent=UA, timeout=3, retries=0) as told:
        assert (bare.user_agent, bare.timeout, bare.retries, bare.max_bytes) == (
            f"syndicator/{__version__}",
            15.0,
            1,
            10 * 1024 * 1024,
        )
        assert not bare.allow_private
        assert (told.user_agent, told.timeout, told.retries) == (UA, 3, 0)
    config = load_config(write_config(tmp_path, [{"name": "A", "feed": "https://a.example/f"}], timeout=4))
    with Fetcher.for_config(config, max_bytes=1000) as planet:
        assert (planet.user_agent, planet.timeout, planet.max_bytes) == (config.user_agent, 4, 1000)
