"""Keep-alive: connections are reused across fetches and threads, and only when an answer ended cleanly."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from syndicator.fetch import Fetcher
from syndicator.model import Failed, Fetched, FetchRequest, NotModified

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
        elif self.path == "/unframed":
            self.answer(200, FEED, framed=False, Content_Type="application/rss+xml")
        else:
            self.answer(404)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def farm() -> Iterator[Farm]:
    server = Farm()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def get(fetcher: Fetcher, farm: Farm, path: str, etag: str | None = None) -> object:
    url = farm.base + path
    return fetcher.fetch(FetchRequest(source=url, url=url, etag=etag))


def test_one_connection_serves_every_clean_answer(farm: Farm) -> None:
    with Fetcher("test/1", timeout=5, retries=0) as fetcher:
        results = [get(fetcher, farm, "/feed"), get(fetcher, farm, "/feed", etag='"v1"'),
                   get(fetcher, farm, "/moved"), get(fetcher, farm, "/broken"), get(fetcher, farm, "/missing"),
                   get(fetcher, farm, "/feed")]
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
