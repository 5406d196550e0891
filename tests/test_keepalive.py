"""Keep-alive: connections are reused across fetches and threads, and only when an answer ended cleanly."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from syndicator.fetch import keepalive
from syndicator.fetch.http import Fetcher
from syndicator.model import Failed, Fetched, FetchRequest, NotModified

from .conftest import in_thread

FEED = b"<?xml version='1.0'?><rss version='2.0'><channel><title>T</title></channel></rss>"


class Farm(http.server.ThreadingHTTPServer):
    """A loopback HTTP/1.1 server that counts the connections opened to it and the cookies it was sent."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.connections = 0
        self.cookies: list[str] = []
        self.lock = threading.Lock()

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that closed a connection with a body unread is what some tests want

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Farm

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def answer(self, status: int, body: bytes = b"", framed: bool = True, **headers: str) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        if framed:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        self.server.cookies.append(self.headers.get("Cookie", ""))
        if self.path == "/feed":
            if self.headers.get("If-None-Match") == '"v1"':
                self.answer(304, ETag='"v1"')
            else:
                self.answer(200, FEED, ETag='"v1"', Content_Type="application/rss+xml", Set_Cookie="session=1")
        elif self.path == "/moved":
            self.answer(302, b"<p>moved</p>", Location="/feed")
        elif self.path == "/broken":
            self.answer(500, b"<h1>oops</h1>")
        elif self.path == "/huge-error":
            self.answer(404, b"x" * 200_000)
        elif self.path == "/hints":  # an interim answer, then the real one (RFC 8297)
            self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n")
            self.wfile.flush()
            time.sleep(0.05)
            self.answer(
                200,
                b"<rss version='2.0'><channel><title>HINTED</title></channel></rss>",
                Content_Type="application/rss+xml",
            )
        elif self.path == "/chunked-304":  # allowed: a 304 has no body whatever its headers say
            self.send_response(304)
            self.send_header("ETag", '"v1"')
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
        elif self.path == "/unframed":
            self.answer(200, FEED, framed=False, Content_Type="application/rss+xml")
        else:
            self.answer(404)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def farm() -> Iterator[Farm]:
    server = Farm()
    with in_thread(server):
        yield server


def get(fetcher: Fetcher, farm: Farm, path: str, etag: str | None = None) -> object:
    url = farm.base + path
    return fetcher.fetch(FetchRequest(source=url, url=url, etag=etag))


def test_one_connection_serves_every_clean_answer(farm: Farm) -> None:
    with Fetcher("test/1", timeout=5, retries=0) as fetcher:
        results = [
            get(fetcher, farm, "/feed"),
            get(fetcher, farm, "/feed", etag='"v1"'),
            get(fetcher, farm, "/moved"),
            get(fetcher, farm, "/broken"),
            get(fetcher, farm, "/missing"),
            get(fetcher, farm, "/feed"),
        ]
    assert [type(result) for result in results] == [Fetched, NotModified, Fetched, Failed, Failed, Fetched]
    assert farm.connections == 1
    assert farm.cookies == [""] * 7  # the Set-Cookie of /feed never came back, on the same connection or not


@pytest.mark.parametrize("path", ["/unframed", "/huge-error"])
def test_an_answer_that_did_not_end_cleanly_closes_its_connection(farm: Farm, path: str) -> None:
    with Fetcher("test/1", timeout=5, retries=0) as fetcher:
        get(fetcher, farm, "/feed")
        get(fetcher, farm, path)  # ended by the close, or a long error body left unread
        assert isinstance(get(fetcher, farm, "/feed"), Fetched)
    assert farm.connections == 2


def test_an_interim_answer_never_leaves_its_connection_for_the_next_feed(farm: Farm) -> None:
    with Fetcher("test/1", timeout=5, retries=0) as fetcher:
        get(fetcher, farm, "/hints")
        result = get(fetcher, farm, "/feed")
    assert isinstance(result, Fetched) and result.body == FEED  # not the hinted answer's body
    assert farm.connections == 2


def test_a_304_with_chunked_framing_keeps_its_connection_without_waiting(farm: Farm) -> None:
    with Fetcher("test/1", timeout=5, retries=0) as fetcher:
        results = [get(fetcher, farm, "/chunked-304", etag='"v1"') for _ in range(4)]
        assert isinstance(get(fetcher, farm, "/feed"), Fetched)
    assert all(isinstance(result, NotModified) for result in results)
    assert farm.connections == 1  # waiting for a body a 304 never has would have dropped each connection


def test_threads_share_one_pool_per_host(farm: Farm) -> None:
    with Fetcher("test/1", timeout=5, retries=0, per_host=2) as fetcher, ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: get(fetcher, farm, "/feed"), range(40)))
    assert all(isinstance(result, Fetched) for result in results)
    assert 1 <= farm.connections <= 2


def test_a_closed_fetcher_opens_new_connections(farm: Farm) -> None:
    fetcher = Fetcher("test/1", timeout=5, retries=0)
    get(fetcher, farm, "/feed")
    fetcher.close()
    assert isinstance(get(fetcher, farm, "/feed"), Fetched)
    fetcher.close()
    assert farm.connections == 2


def test_kept_connections_stay_well_under_the_open_file_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    resource = pytest.importorskip("resource")
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (256, 4096))  # macOS's usual soft limit
    assert keepalive.host_pools(per_host=2) == 32  # 64 idle connections at most: a quarter of the files
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (1 << 20, 1 << 20))
    assert keepalive.host_pools(per_host=2) == keepalive.HOST_POOLS
