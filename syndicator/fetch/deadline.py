"""The total deadline of a fetch, from name resolution to the last body byte. A helper of fetch/http.py
(and of fetch/outbound.py, whose POSTs have one too).

A socket timeout bounds one wait (a connect, the gap between two bytes),
never their sum: a server that drips a byte a second, a name that takes a
minute to resolve, or a host whose first addresses swallow connection
attempts could hold a worker for ever. :data:`DEADLINES` keeps one
deadline per fetching thread, armed by :meth:`Deadlines.start`; the
connection classes below honour it at every step:

* the name is resolved on a helper thread that the fetch waits for at most
  the time left (``getaddrinfo`` has no timeout of its own and cannot be
  interrupted; the helper ends on its own);
* each address gets ``min(timeout, time left)`` to connect, and no address
  is tried once the time is up;
* the connection's socket is registered as soon as it exists, and again
  when a response is awaited (an HTTPS connection then reads through a new
  socket object); at the deadline the watchdog shuts the registered socket down,
  which wakes the blocked read or write with an error. A socket registered
  after the deadline is shut down at once (one watchdog thread serves
  every fetch's deadline);
* :meth:`Deadlines.finish` marks the answer complete: the watchdog reaching the deadline after
  that cuts nothing, so a complete answer is never lost to the deadline.

The same connection classes apply :mod:`netguard`: each address is screened
just before the socket connects to it, and a pooled connection by its peer
before it is used again (not a proxy's connection: the proxy is trusted).

Limit: during the TLS handshake the registered socket is the one the TLS
layer took over, so the watchdog cannot cut it; each handshake step is still
bounded by the connect wait above.
"""

from __future__ import annotations

import contextlib
import heapq
import ipaddress
import itertools
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, LocationParseError, NameResolutionError, NewConnectionError
from urllib3.util.connection import allowed_gai_family

from syndicator.fetch import netguard

#: ``socket.getaddrinfo(host, port, family, type)``, or a stand-in with its signature.
Resolver = Callable[[str, int, int, int], Sequence[tuple[Any, ...]]]


@dataclass(eq=False)
class FetchDeadline:
    """One thread's fetch: its deadline (``time.monotonic()`` seconds) and what it holds.

    Returned by :meth:`Deadlines.start` and given back to :meth:`Deadlines.stop`.
    """

    deadline: float
    resolver: Resolver
    sock: socket.socket | None = None
    expired: bool = False
    done: bool = False  # the answer is complete: the deadline cuts nothing
    stopped: bool = False  # the fetch is over: the watchdog forgets it
    handled: threading.Event = field(default_factory=threading.Event)  # the watchdog reached the deadline

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the watchdog has dealt with this deadline (True), or ``timeout`` seconds (False)."""
        return self.handled.wait(timeout)


class Deadlines:
    """The deadline of each thread's fetch; safe to share between threads.

    One watchdog thread, started on first use, sleeps until the earliest
    deadline and cuts the socket of a fetch still running then: no thread
    is started per fetch.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._budgets: dict[int, FetchDeadline] = {}
        self._queue: list[tuple[float, int, FetchDeadline]] = []  # a heap, earliest deadline first
        self._order = itertools.count()
        self._watchdog: threading.Thread | None = None

    def start(self, seconds: float, resolver: Resolver = socket.getaddrinfo) -> FetchDeadline:
        """Arm the calling thread's deadline ``seconds`` from now; names resolve with ``resolver``."""
        budget = FetchDeadline(time.monotonic() + seconds, resolver)
        with self._lock:
            self._budgets[threading.get_ident()] = budget
            heapq.heappush(self._queue, (budget.deadline, next(self._order), budget))
            if self._watchdog is None or not self._watchdog.is_alive():
                self._watchdog = threading.Thread(target=self._watch, name="syndicator-deadlines", daemon=True)
                self._watchdog.start()
            elif self._queue[0][2] is budget:
                self._wake.notify()  # a new earliest deadline
        return budget

    def stop(self, budget: FetchDeadline) -> None:
        """Disarm the calling thread's deadline (call it when the fetch is over, whatever the outcome)."""
        with self._lock:
            budget.stopped = True
            if self._budgets.get(threading.get_ident()) is budget:
                del self._budgets[threading.get_ident()]

    def remaining(self) -> float | None:
        """Seconds left to the calling thread's deadline (<= 0 once passed), None if none is armed."""
        budget = self._budgets.get(threading.get_ident())
        return None if budget is None else budget.deadline - time.monotonic()

    def resolver(self) -> Resolver:
        """The name resolver of the calling thread's fetch (``socket.getaddrinfo`` if none is armed)."""
        budget = self._budgets.get(threading.get_ident())
        return socket.getaddrinfo if budget is None else budget.resolver

    def expired(self) -> bool:
        """True once the calling thread's deadline has passed (its socket was, or will be, cut)."""
        budget = self._budgets.get(threading.get_ident())
        return budget is not None and (budget.expired or budget.deadline <= time.monotonic())

    def finish(self) -> bool:
        """The calling thread's answer is complete: the deadline cuts nothing from now on.

        Returns:
            True if the deadline had not passed yet, so whatever was read
            came from the server and not from a cut socket.
        """
        with self._lock:
            budget = self._budgets.get(threading.get_ident())
            if budget is None:
                return True
            budget.done = True
            return not budget.expired

    def detach(self) -> bool:
        """The calling thread no longer waits on its socket (it goes back to a pool): the deadline will not cut it.

        Returns:
            True if the deadline had not passed, so the socket was not cut.
        """
        with self._lock:
            budget = self._budgets.get(threading.get_ident())
            if budget is None:
                return True
            budget.sock = None
            return not (budget.expired or budget.deadline <= time.monotonic())

    def register(self, sock: socket.socket | None) -> None:
        """Note the socket the calling thread now waits on; cut it at once if the deadline passed."""
        with self._lock:
            budget = self._budgets.get(threading.get_ident())
            if sock is None or budget is None:
                return
            budget.sock = sock
            late = budget.expired or budget.deadline <= time.monotonic()
        if late:
            self._cut(budget)

    def _watch(self) -> None:
        """The watchdog: cut each fetch whose deadline passes while it still runs."""
        while True:
            with self._lock:
                budget = self._next_due()
            self._cut(budget)
            budget.handled.set()

    def _next_due(self) -> FetchDeadline:
        """Wait (the lock held) until a deadline passes; that fetch's budget, taken off the queue."""
        while True:
            while self._queue and self._queue[0][2].stopped and self._queue[0][0] <= time.monotonic():
                heapq.heappop(self._queue)[2].handled.set()
            if not self._queue:
                self._wake.wait()
                continue
            wait = self._queue[0][0] - time.monotonic()
            if wait <= 0:
                return heapq.heappop(self._queue)[2]
            self._wake.wait(wait)

    def _cut(self, budget: FetchDeadline) -> None:
        """Mark ``budget`` expired and shut its socket down, unless its fetch is over or its answer complete."""
        with self._lock:
            if budget.done or budget.stopped:
                return
            budget.expired = True
            sock = budget.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # closed, or taken over by TLS: nothing left to cut
                sock.shutdown(socket.SHUT_RDWR)


DEADLINES = Deadlines()


def resolve(resolver: Resolver, host: str, port: int, seconds: float | None) -> Sequence[tuple[Any, ...]]:
    """The addresses of ``host`` from ``resolver``, waiting at most ``seconds`` (None: no limit).

    Raises:
        TimeoutError: the resolver did not answer in time.
        OSError: the resolver's own error (``socket.gaierror`` for an unknown name).
    """
    family = allowed_gai_family()
    if seconds is None or _is_ip(host):
        return resolver(host, port, family, socket.SOCK_STREAM)
    outcome: list[Any] = []
    answered = threading.Event()

    def run() -> None:
        try:
            outcome.append(resolver(host, port, family, socket.SOCK_STREAM))
        except Exception as error:  # handed to the waiting thread, which raises it
            outcome.append(error)
        finally:
            answered.set()

    threading.Thread(target=run, name="syndicator-resolve", daemon=True).start()
    if not answered.wait(max(seconds, 0.0)):
        raise TimeoutError(f"resolving {host} took longer than the {max(seconds, 0.0):.3g} s left")
    if isinstance(outcome[0], Exception):
        raise outcome[0]
    return outcome[0]


def open_socket(
    host: str,
    port: int,
    timeout: float | None,
    options: Sequence[tuple[int, int, int | bytes]] | None,
    screen: bool = True,
) -> socket.socket:
    """A connected TCP socket to ``host``:``port`` within the calling thread's deadline.

    Args:
        timeout: seconds for each connect attempt and, once connected, for
            each read; None waits without limit (the deadline still applies).
        options: ``setsockopt`` arguments applied before connecting.
        screen: each address goes through :func:`netguard.screen` before it is
            connected to (False for a proxy, whose address is the environment's).
    Raises:
        TimeoutError: the deadline passed, or every attempt timed out last.
        netguard.PrivateAddress: every address was refused, or the last one tried.
        OSError: resolution or every connection attempt failed.
    """
    host = host.strip("[]")
    try:
        host.encode("idna")
    except UnicodeError:
        raise LocationParseError(f"'{host}', label empty or too long") from None
    error: OSError | None = None
    for family, kind, proto, _name, address in resolve(DEADLINES.resolver(), host, port, DEADLINES.remaining()):
        left = DEADLINES.remaining()
        if left is not None and left <= 0:
            raise TimeoutError(f"no time left to connect to {host}")
        try:
            if screen:
                netguard.screen(host, str(address[0]))
        except netguard.PrivateAddress as refused:
            error = refused  # never connected to; another address of the name may be public
            continue
        sock = socket.socket(family, kind, proto)
        try:
            for option in options or ():
                sock.setsockopt(*option)
            sock.settimeout(_shorter(timeout, left))
            DEADLINES.register(sock)
            sock.connect(address)
            sock.settimeout(timeout)
            return sock
        except OSError as failure:
            error = failure
            sock.close()
    raise error or OSError(f"no address found for {host}")


def _shorter(timeout: float | None, left: float | None) -> float | None:
    """The shorter of two waits in seconds, None meaning no limit."""
    if timeout is None or left is None:
        return left if timeout is None else timeout
    return min(timeout, left)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _new_conn(conn: HTTPConnection) -> socket.socket:
    """urllib3's ``_new_conn`` with :func:`open_socket`, raising the same urllib3 errors."""
    timeout = conn.timeout if isinstance(conn.timeout, int | float) else None
    try:
        return open_socket(conn._dns_host, conn.port or 0, timeout, conn.socket_options, screen=conn.proxy is None)
    except socket.gaierror as e:
        raise NameResolutionError(conn.host, conn, e) from e
    except TimeoutError as e:
        raise ConnectTimeoutError(conn, f"Connection to {conn.host} timed out: {e}") from e
    except OSError as e:
        raise NewConnectionError(conn, f"Failed to establish a new connection: {e}") from e


class _HTTPConnection(HTTPConnection):
    """A connection whose connect and response are both under the fetch's deadline."""

    def _new_conn(self) -> socket.socket:
        return _new_conn(self)

    def getresponse(self) -> urllib3.response.HTTPResponse:  # type: ignore[override]
        DEADLINES.register(self.sock)
        return super().getresponse()


class _HTTPSConnection(_HTTPConnection, HTTPSConnection):
    """The same for https: HTTPSConnection is an HTTPConnection, so the overrides above come first."""


def _screen_reused(conn: HTTPConnection) -> None:
    """Screen a pooled connection by its peer before it serves another request (:mod:`netguard`).

    Raises:
        netguard.PrivateAddress: the peer is not public while the thread is screening.
    """
    sock = conn.sock
    if sock is None or conn.proxy is not None:
        return  # a new connection is screened as it connects; a proxy's is trusted
    try:
        peer = sock.getpeername()
    except OSError:
        return  # no longer connected: it will connect anew, and be screened then
    netguard.screen(conn.host, str(peer[0]))


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection

    def _validate_conn(self, conn: Any) -> None:
        _screen_reused(conn)
        super()._validate_conn(conn)


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection

    def _validate_conn(self, conn: Any) -> None:
        _screen_reused(conn)
        super()._validate_conn(conn)


#: Pool classes whose connections honour :data:`DEADLINES`, by URL scheme.
POOL_CLASSES: dict[str, type[HTTPConnectionPool]] = {"http": _HTTPPool, "https": _HTTPSPool}
