"""The total deadline of a fetch (2 x timeout) covers name resolution, connect, headers
and body; an answer that was complete in time is kept; failures are classified by type.

Against real sockets on 127.0.0.1. A slow name server is a resolver passed to the
Fetcher; a host that swallows connection attempts is a listening socket whose backlog
is full. Nothing asserts a wall-clock limit: what shows the deadline is a request the
server never received, or a body that was or was not delivered.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.fetch.deadline import Deadlines
from syndicator.fetch.http import Fetcher
from syndicator.model import Failed, Fetched, FetchRequest

from .conftest import in_thread, post, rss

FEED = rss(post(1)).encode()
UA = "syndicator/test (+https://planet.example.org/)"
Resolver = Callable[[str, int, int, int], list[tuple[Any, ...]]]


def get(url: str) -> FetchRequest:
    return FetchRequest(source=url, url=url)


def fetcher(resolver: Resolver | None = None, retries: int = 0) -> Fetcher:
    """A fetcher with a 1 s timeout, so a 2 s deadline."""
    if resolver is None:
        return Fetcher(UA, timeout=1.0, retries=retries, retry_delay=0.05)
    return Fetcher(UA, timeout=1.0, retries=retries, retry_delay=0.05, resolver=resolver)


def loopback(port: int) -> tuple[Any, ...]:
    return (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", port))


@pytest.fixture
def black_hole() -> Iterator[int]:
    """The port of a listening socket that never accepts and whose backlog is full:
    the kernel drops further connection attempts, so each one waits for its timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    filler = socket.create_connection(listener.getsockname(), timeout=1)  # takes the one queue slot
    try:
        yield listener.getsockname()[1]
    finally:
        filler.close()
        listener.close()


# --- name resolution and connect count against the deadline -------------------------------


def test_a_slow_name_resolution_counts_against_the_deadline(server: HTTPServer, release: threading.Event) -> None:
    asked: list[str] = []

    def slow_resolver(host: str, port: int, family: int, kind: int) -> list[tuple[Any, ...]]:
        asked.append(host)
        release.wait(10)  # a name server that answers after the deadline (released at teardown)
        return [loopback(port)]

    server.expect_request("/feed").respond_with_data(FEED)
    result = fetcher(slow_resolver, retries=1).fetch(get(f"http://slow-dns.test:{server.port}/feed"))
    assert isinstance(result, Failed)
    assert result.error.kind == "timeout"
    assert asked == ["slow-dns.test"]  # the deadline was spent resolving: no retry
    assert server.log == []  # the fetch gave up instead of connecting late


def test_addresses_that_swallow_connects_share_one_deadline(server: HTTPServer, black_hole: int) -> None:
    """Three dead addresses before the live one: 1 s each would reach the server at 3 s, past the 2 s deadline."""
    server.expect_request("/feed").respond_with_data(FEED)

    def resolver(host: str, port: int, family: int, kind: int) -> list[tuple[Any, ...]]:
        return [loopback(black_hole)] * 3 + [loopback(server.port)]

    result = fetcher(resolver).fetch(get(f"http://many-addresses.test:{server.port}/feed"))
    assert isinstance(result, Failed)
    assert result.error.kind == "timeout"
    assert server.log == []


def test_a_dead_address_is_skipped_for_a_live_one_within_the_deadline(server: HTTPServer, black_hole: int) -> None:
    server.expect_request("/feed").respond_with_data(FEED)

    def resolver(host: str, port: int, family: int, kind: int) -> list[tuple[Any, ...]]:
        return [loopback(black_hole), loopback(server.port)]

    result = fetcher(resolver).fetch(get(f"http://two-addresses.test:{server.port}/feed"))
    assert isinstance(result, Fetched) and result.body == FEED


def test_a_name_that_does_not_resolve_is_a_network_failure(server: HTTPServer) -> None:
    def resolver(host: str, port: int, family: int, kind: int) -> list[tuple[Any, ...]]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    result = fetcher(resolver).fetch(get("http://no-such-host.test/feed"))
    assert isinstance(result, Failed)
    assert result.error.kind == "network"


# --- a complete answer is kept; failures by type ------------------------------------------


def dripping(size: int, interval: float, length: bool = True) -> Callable[[Request], Response]:
    def handler(_request: Request) -> Response:
        def body() -> Iterator[bytes]:
            for _ in range(size):
                time.sleep(interval)
                yield b"x"

        headers = {"Content-Length": str(size)} if length else {}
        return Response(body(), headers=headers, direct_passthrough=True)

    return handler


def test_a_body_completed_before_the_deadline_is_kept(server: HTTPServer) -> None:
    server.expect_request("/slow").respond_with_handler(dripping(size=6, interval=0.2))  # about 1.2 s of 2
    result = fetcher().fetch(get(server.url_for("/slow")))
    assert isinstance(result, Fetched)
    assert result.body == b"x" * 6


class _CloseDelimited(socketserver.BaseRequestHandler):
    """An HTTP/1.0-style answer whose end is the connection's close (no length, not chunked)."""

    def handle(self) -> None:
        self.request.recv(65536)
        self.request.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        for _ in range(6):
            time.sleep(0.2)
            self.request.sendall(b"x")


def test_a_close_delimited_body_completed_in_time_is_kept() -> None:
    tcp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _CloseDelimited)
    tcp.daemon_threads = True
    with in_thread(tcp):
        result = fetcher().fetch(get(f"http://127.0.0.1:{tcp.server_address[1]}/feed"))
    assert isinstance(result, Fetched)
    assert result.body == b"x" * 6


def test_a_body_cut_by_the_server_is_a_network_failure_not_a_timeout(server: HTTPServer) -> None:
    def short(_request: Request) -> Response:
        return Response(iter([b"only ten b"]), headers={"Content-Length": "100"}, direct_passthrough=True)

    server.expect_request("/short").respond_with_handler(short)
    result = fetcher().fetch(get(server.url_for("/short")))
    assert isinstance(result, Failed)
    assert result.error.kind == "network"


def test_a_body_that_stalls_past_the_read_timeout_is_a_timeout(server: HTTPServer, release: threading.Event) -> None:
    def stall(_request: Request) -> Response:
        def body() -> Iterator[bytes]:
            yield b"x"
            release.wait(10)
            yield b"y"

        return Response(body(), headers={"Content-Length": "2"}, direct_passthrough=True)

    server.expect_request("/stall").respond_with_handler(stall)
    result = fetcher().fetch(get(server.url_for("/stall")))
    assert isinstance(result, Failed)
    assert result.error.kind == "timeout"


# --- the deadline's bookkeeping, with a socket pair -----------------------------------------


def _is_cut(peer: socket.socket) -> bool:
    """True if the other end of ``peer`` was shut down (``peer`` reads end-of-file)."""
    peer.settimeout(0.5)
    try:
        return peer.recv(1) == b""
    except TimeoutError:
        return False


def test_the_timer_cuts_the_registered_socket_at_the_deadline() -> None:
    deadlines, (ours, peer) = Deadlines(), socket.socketpair()
    with ours, peer:
        timer = deadlines.start(0.05)
        deadlines.register(ours)
        timer.join()  # the deadline passed
        assert deadlines.expired()
        assert _is_cut(peer)
        assert deadlines.finish() is False
        deadlines.stop(timer)


def test_an_answer_finished_before_the_timer_fires_is_not_cut() -> None:
    deadlines, (ours, peer) = Deadlines(), socket.socketpair()
    with ours, peer:
        timer = deadlines.start(0.5)  # long enough that a loaded machine still finishes first
        deadlines.register(ours)
        assert deadlines.finish() is True  # the whole answer is in
        timer.join()  # the timer fires afterwards
        assert not _is_cut(peer)
        deadlines.stop(timer)


def test_a_socket_registered_after_the_deadline_is_cut_at_once() -> None:
    deadlines, (ours, peer) = Deadlines(), socket.socketpair()
    with ours, peer:
        timer = deadlines.start(0.05)
        timer.join()
        deadlines.register(ours)
        assert _is_cut(peer)
        deadlines.stop(timer)
