"""HTTP plumbing of the load-test farm: listeners, one acceptor thread, request stats.

One `ThreadingHTTPServer` is bound per loopback address, but none runs its own
`serve_forever` loop: a single acceptor thread waits on all listening sockets
with a selector and hands each new connection to its server, which serves it
on a daemon thread. So 200 hosts cost one thread plus one per open connection,
and stopping is immediate (no 0.5 s shutdown poll per server).
"""

from __future__ import annotations

import selectors
import socket
import socketserver
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Response:
    """What the farm answers: status, headers, body bytes, delay before answering (s)."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    delay_s: float = 0.0


class Stats:
    """Thread-safe request counters of a farm (see `snapshot` for the fields)."""

    def __init__(self, addresses: list[str]) -> None:
        self._lock = threading.Lock()
        self._addresses = addresses
        self._in_flight = [0] * len(addresses)  # requests being answered, per host
        self._total_in_flight = 0
        self.reset()

    def reset(self) -> None:
        """Zero every counter (requests still in flight keep being tracked)."""
        with self._lock:
            n = len(self._addresses)
            self._requests = [0] * n
            self._peak = list(self._in_flight)
            self._global_peak = self._total_in_flight
            self._status: Counter[int] = Counter()
            self._bytes_sent = 0
            self._body_bytes = 0
            self._conditional = 0

    def enter(self, host: int, conditional: bool) -> None:
        """Count a request to host index `host` as started."""
        with self._lock:
            self._requests[host] += 1
            self._conditional += conditional
            self._in_flight[host] += 1
            self._peak[host] = max(self._peak[host], self._in_flight[host])
            self._total_in_flight += 1
            self._global_peak = max(self._global_peak, self._total_in_flight)

    def leave(self, host: int, status: int, wire_bytes: int, body_bytes: int) -> None:
        """Count a request as answered with `status`, `wire_bytes` written in all."""
        with self._lock:
            self._in_flight[host] -= 1
            self._total_in_flight -= 1
            self._status[status] += 1
            self._bytes_sent += wire_bytes
            self._body_bytes += body_bytes

    def snapshot(self) -> dict[str, Any]:
        """Counters since the last reset.

        requests, conditional_requests (with If-None-Match or If-Modified-Since),
        by_status {code: count}, bytes_sent (status line + headers + body, bytes),
        body_bytes, peak_concurrency (all hosts together), max_host_concurrency,
        hosts {address: {requests, peak_concurrency}} for hosts that saw requests.
        """
        with self._lock:
            hosts = {
                addr: {"requests": r, "peak_concurrency": p}
                for addr, r, p in zip(self._addresses, self._requests, self._peak, strict=True)
                if r
            }
            return {
                "requests": sum(self._requests),
                "conditional_requests": self._conditional,
                "by_status": dict(sorted(self._status.items())),
                "bytes_sent": self._bytes_sent,
                "body_bytes": self._body_bytes,
                "peak_concurrency": self._global_peak,
                "max_host_concurrency": max(self._peak, default=0),
                "hosts": hosts,
            }


class HostServer(ThreadingHTTPServer):
    """One synthetic host: a listener on its own loopback address."""

    daemon_threads = True
    request_queue_size = 256
    timeout = 0  # handle_request() is only called when a connection is waiting

    def __init__(self, address: tuple[str, int], host_index: int, app: Any) -> None:
        self.host_index = host_index
        self.app = app  # a Farm: respond(), counters, connections, http_now()
        super().__init__(address, FarmHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hangs up or times out; print anything else."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), a DNS lookup per address.
        socketserver.TCPServer.server_bind(self)
        host, port = self.socket.getsockname()[:2]
        self.server_name, self.server_port = str(host), int(port)


class FarmHandler(BaseHTTPRequestHandler):
    """Answers GET and HEAD with whatever the farm's `respond` says."""

    protocol_version = "HTTP/1.1"  # keep-alive, as real feed hosts
    server_version = "SyndicatorFarm/1.0"
    sys_version = ""
    timeout = 15  # seconds an idle keep-alive connection is kept
    server: HostServer

    def setup(self) -> None:
        super().setup()
        self.server.app.connections.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.app.connections.discard(self.connection)

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        self._serve(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(head=True)

    def _serve(self, head: bool) -> None:
        """Answer one request. The request counts as in flight from here until just
        before the one write of the whole response, so the client cannot have
        started its next request yet: per-host peaks are never over-counted."""
        app, host = self.server.app, self.server.host_index
        conditional = "If-None-Match" in self.headers or "If-Modified-Since" in self.headers
        app.counters.enter(host, conditional)
        left = False
        try:
            resp = app.respond(host, self.path, self.headers)
            if resp.delay_s > 0:
                time.sleep(resp.delay_s)
            self.send_response_only(resp.status)
            self.send_header("Server", self.version_string())
            self.send_header("Date", self.date_time_string())
            for name, value in resp.headers:
                self.send_header(name, value)
            if resp.status != 304:
                self.send_header("Content-Length", str(len(resp.body)))
            body = b"" if head else resp.body
            # What end_headers() would flush, joined with the body into one write.
            buffered: list[bytes] = self._headers_buffer  # type: ignore[attr-defined]
            payload = b"".join([*buffered, b"\r\n", body])
            buffered.clear()
            app.counters.leave(host, resp.status, len(payload), len(body))
            left = True
            self.wfile.write(payload)
        finally:
            if not left:
                app.counters.leave(host, 500, 0, 0)

    def version_string(self) -> str:
        return self.server_version

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The Date header tells the farm clock, not the wall clock."""
        return str(self.server.app.http_now())

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


class Acceptor:
    """One thread that accepts connections for every listener until `stop()`."""

    def __init__(self, servers: list[HostServer]) -> None:
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        for server in servers:
            self._selector.register(server.socket, selectors.EVENT_READ, server)
        self._thread = threading.Thread(target=self._run, name="farm-acceptor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while True:
            for key, _ in self._selector.select():
                if key.data is None:
                    return
                key.data.handle_request()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Wake the thread, wait up to `timeout_s` seconds for it, free the selector."""
        self._wake_w.send(b"x")
        self._thread.join(timeout_s)
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()


def bind_all(
    addresses: list[str],
    port: int,
    factory: Callable[[str, int, int], HostServer],
    attempts: int = 5,
) -> list[HostServer]:
    """Bind one server per address, all on one port. Port 0 means: take the port the
    kernel gives the first address and retry (up to `attempts` times) if it is taken
    on another address. Raises OSError if the port cannot be had."""
    for attempt in range(attempts):
        servers: list[HostServer] = []
        try:
            for i, addr in enumerate(addresses):
                servers.append(factory(addr, port or (servers[0].server_port if servers else 0), i))
            return servers
        except OSError:
            for s in servers:
                s.server_close()
            if port or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def accepts_gzip(value: str) -> bool:
    """Whether an Accept-Encoding header value accepts gzip (a q=0 refuses it)."""
    for part in value.lower().split(","):
        name, _, params = part.strip().partition(";")
        if name.strip() == "gzip":
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def not_modified(headers: Mapping[str, str], etag: str, modified: datetime) -> bool:
    """Whether a conditional GET may get 304, per RFC 9110 §13.2.2: If-None-Match
    (the exact tag, one of a list, or *) wins; else If-Modified-Since, compared at
    second precision with `modified` (aware UTC)."""
    inm = headers.get("If-None-Match")
    if inm is not None:
        return inm.strip() == "*" or etag in (tag.strip() for tag in inm.split(","))
    ims = headers.get("If-Modified-Since")
    if ims is None:
        return False
    try:
        since = parsedate_to_datetime(ims)
    except (TypeError, ValueError):
        return False
    if since.tzinfo is None:
        return False
    return modified.replace(microsecond=0) <= since
