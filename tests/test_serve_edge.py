"""``syndicator serve``'s HTTP edge: requests smuggled with double framing are refused before the app, clients that
trickle a request or idle on a connection are let go, and one notification's failure or a slow parse is its own.

Raw sockets on loopback against ``serve`` (a subprocess, or a :class:`serve.Server` in a thread where a limit must
be shortened); every wait has a deadline and nothing asserts how long anything took.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from syndicator.parse import feed as parse
from syndicator.push import callbacks

from .conftest import write_config
from .test_serve import Clock, feeds, hub, in_process, inbox, page, site, spawn, stored_entries
from .websub_hub import WAIT, FeedServer, ServeProcess, WebSubHub, session, sign

__all__ = ["feeds", "hub", "spawn"]  # fixtures


def exchange(base: str, raw: bytes) -> bytes:
    """Send ``raw`` on one connection to ``base`` (http://host:port) and read until the server closes it."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=WAIT) as connection:
        connection.sendall(raw)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize(
    "framing",
    [
        b"POST /websub/x HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST /websub/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n",
        b"POST /websub/x HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
    ],
    ids=["cl-then-te", "te-then-cl", "te-in-http-1.0"],
)
def test_a_request_framed_twice_is_refused_and_what_it_smuggles_never_runs(
    tmp_path: Path, feeds: FeedServer, spawn: Callable[..., ServeProcess], framing: bytes
) -> None:
    config = write_config(tmp_path, [site(feeds.feed("blog"))])
    serve = spawn(config, public=False)
    serve.wait_healthy()
    smuggled = b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
    answer = exchange(serve.base, framing + smuggled)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request") or answer.startswith(b"HTTP/1.0 400 Bad Request"), answer
    assert b"\nHTTP/1." not in answer, answer  # the connection closed: the smuggled GET got no answer
    assert b"\r\n\r\nok" not in answer
    # The same requests framed once are served: the 400 is the double framing's, not the route's.
    plain = exchange(
        serve.base, b"POST /websub/x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    assert plain.startswith(b"HTTP/1.1 410"), plain
    assert serve.process.poll() is None


def test_a_client_trickling_a_request_or_idling_is_let_go_and_push_goes_on(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(callbacks, "REQUEST_DEADLINE", 1.0)
    monkeypatch.setattr(callbacks, "IDLE_TIMEOUT", 1.0)
    blog = feeds.feed("blog", hub=hub.url)
    config = write_config(tmp_path, [site(blog)])
    with in_process(config, Clock()) as serve:
        host, port = serve.base.removeprefix("http://").rsplit(":", 1)
        trickler = socket.create_connection((host, int(port)), timeout=WAIT)
        idler = socket.create_connection((host, int(port)), timeout=WAIT)
        try:
            trickler.sendall(b"POST /websub/x HTTP/1.1\r\n")
            idler.sendall(b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            answer = idler.recv(65536)
            assert answer.startswith(b"HTTP/1.1 200")  # answered, then left open (keep-alive)
            trickler.settimeout(0.2)
            deadline = time.monotonic() + WAIT
            closed = False
            while not closed and time.monotonic() < deadline:
                try:
                    trickler.sendall(b"X")  # a byte now and then: never idle, never a whole request
                    closed = trickler.recv(1) == b""
                except TimeoutError:
                    pass
                except OSError:  # reset by the server
                    closed = True
            assert closed, "a request trickled for longer than its deadline was not cut"
            idler.settimeout(WAIT)
            while chunk := idler.recv(65536):  # the rest of the answer, if it came in two reads
                answer += chunk
            assert answer.count(b"HTTP/1.1 ") == 1  # then closed by the server once idle (or TimeoutError)
        finally:
            trickler.close()
            idler.close()

        # Push still works.
        serve.wait_for(
            lambda: any(s.state == "live" for s in serve.server._subscriber.current.values()),  # noqa: SLF001
            "a live subscription",
        )
        subscription = next(iter(serve.server._subscriber.current.values()))  # noqa: SLF001
        post = blog.add("After the slow clients")
        body = blog.document([post])
        with session() as http:
            answer = http.post(
                f"{serve.base}/websub/{subscription.token}",
                data=body,
                timeout=WAIT,
                headers={"Content-Type": "application/atom+xml", "X-Hub-Signature": sign(subscription.secret, body)},
            )
        assert answer.status_code == 202
        serve.wait_for(lambda: "After the slow clients" in page(tmp_path), "the pushed post on the site")


def test_a_notification_that_breaks_the_parser_is_its_own_and_a_slow_parse_leaves_the_loop_turning(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    blog = feeds.feed("blog", hub=hub.url)
    config = write_config(tmp_path, [site(blog)])
    real = parse.parse_feed
    release = threading.Event()

    def parse_feed(body: bytes, *args: object, **kwargs: object) -> object:
        if b"Breaks the parser" in body:
            raise RuntimeError("a bug in the parser")
        if b"Slow to parse" in body:
            release.wait(WAIT)  # a heavy document, as long as the test likes
        return real(body, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parse, "parse_feed", parse_feed)
    with in_process(config, Clock()) as serve:
        serve.wait_for(
            lambda: any(s.state == "live" for s in serve.server._subscriber.current.values()),  # noqa: SLF001
            "a live subscription",
        )
        serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the first poll's posts on the site")
        subscription = next(iter(serve.server._subscriber.current.values()))  # noqa: SLF001
        callback = f"{serve.base}/websub/{subscription.token}"

        def deliver(title: str) -> None:
            body = blog.document([blog.add(title)])
            with session() as http:
                answer = http.post(
                    callback,
                    data=body,
                    timeout=WAIT,
                    headers={
                        "Content-Type": "application/atom+xml",
                        "X-Hub-Signature": sign(subscription.secret, body),
                    },
                )
            assert answer.status_code == 202

        deliver("Breaks the parser")
        serve.wait_for(
            lambda: serve.metric("syndicator_push_notifications_total", verdict="failed") == 1.0,
            "the broken notification marked failed",
        )
        assert any("could not be stored; the feed is polled instead" in line for line in serve.lines)

        deliver("Slow to parse")
        serve.wait_for(lambda: any(verdict is None for _, verdict in inbox(tmp_path)), "the slow one pending")
        beat = serve.server._beat  # noqa: SLF001 - the loop's heartbeat, which /healthz reads
        serve.wait_for(lambda: serve.server._beat > beat, "the loop to turn while the parse runs")  # noqa: SLF001
        with session() as http:
            assert http.get(f"{serve.base}/healthz", timeout=WAIT).status_code == 200
        assert "Slow to parse" not in page(tmp_path)
        release.set()
        serve.wait_for(lambda: "Slow to parse" in page(tmp_path), "the slow notification on the site")
        assert stored_entries(tmp_path, "Breaks the parser") == 0
        assert [verdict for _, verdict in inbox(tmp_path)] == ["failed", "stored"]
