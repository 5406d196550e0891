"""WebSub (W3C Recommendation, 2018) for a subscriber: discovery, signatures, and the requests to a hub.

Pure pieces, used by ``syndicator serve``'s driver,
plus the two requests syndicator sends to a hub. Rules, and where they come from:

* Discovery (WebSub section 4) is :mod:`parse.hubs`'s: the hubs and the
  self URL a feed advertises.
* Signatures (WebSub section 8): ``X-Hub-Signature: method=hexdigest``,
  an HMAC of the exact body bytes keyed with the subscription's secret,
  ``method`` one of :data:`SIGNATURE_ALGORITHMS`. A subscriber ignores a
  delivery whose signature does not match, but still answers it 2xx.
* Subscription requests (WebSub section 5.1) and the publisher's ping
  (PubSubHubbub 0.4 section 7.1; not part of WebSub) are form POSTs. A hub
  answers a request it takes with 202 Accepted and one it refuses with a
  4xx or 5xx, the reason as plain text in the body (section 5.1.2).

Importing this module loads neither requests nor an HTML library: the
requests go through :mod:`fetch.outbound` (the one policy of outbound
requests: proxies, CA bundle, deadline), imported when a request is sent, so
a build or a status report that only reads subscriptions stays light.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from syndicator import urls
from syndicator.dates import http_date
from syndicator.failures import kind_of
from syndicator.fetch import netguard
from syndicator.values import is_http_url, strip_control

if TYPE_CHECKING:
    from syndicator.fetch.outbound import Answer, OutboundError, Session

#: The X-Hub-Signature methods WebSub section 8 recognizes (names as hashlib knows them).
SIGNATURE_ALGORITHMS: tuple[str, ...] = ("sha1", "sha256", "sha384", "sha512")
#: 307 and 308 redirects a hub request follows at most (other redirects would turn the POST into a GET).
MAX_HUB_REDIRECTS = 3
#: Bytes of a hub's answer read at most (its first line goes into the message).
MAX_ANSWER_BYTES = 64 * 1024
#: Characters of the hub's first line kept in a message.
MESSAGE_CHARS = 200
#: A secret must be shorter than this many bytes (WebSub section 5.1).
SECRET_LIMIT = 200
_FORM = "application/x-www-form-urlencoded"

_SIGNATURE = re.compile(r"([A-Za-z0-9]{1,16})=([0-9A-Fa-f]{1,256})")


def signature_valid(header: str | None, secret: str, body: bytes) -> bool:
    """True when an ``X-Hub-Signature`` header signs ``body`` with ``secret`` (WebSub section 8).

    Args:
        header: the header value, ``method=hexdigest``: method one of
            :data:`SIGNATURE_ALGORITHMS`, the digest the hexadecimal HMAC
            of the body. White space around the value is ignored; the method
            and the hex digits are read in any case (RFC 4648 section 8
            hex is case-insensitive in practice, and some hubs write upper case).
        secret: the ``hub.secret`` of the subscription (str, keyed as UTF-8).
            An empty secret validates nothing.
        body: the delivery's body, the exact bytes received.
    Returns:
        True only for a matching HMAC, compared in constant time
        (:func:`hmac.compare_digest`); False for a missing or malformed
        header, an unknown method, a digest of the wrong length or value,
        or a secret that is not a non-empty str. Never raises.
    """
    if (
        not isinstance(header, str)
        or len(header) > 300
        or not isinstance(secret, str)
        or not secret
        or not isinstance(body, bytes | bytearray | memoryview)
    ):
        return False
    match = _SIGNATURE.fullmatch(header.strip())
    if match is None:
        return False
    method, digest = match.group(1).lower(), match.group(2).lower()
    if method not in SIGNATURE_ALGORITHMS:
        return False
    try:
        expected = hmac.new(secret.encode("utf-8"), body, getattr(hashlib, method)).hexdigest()
    except ValueError:  # a lone surrogate in the secret
        return False
    return hmac.compare_digest(expected, digest)


def new_secret() -> str:
    """A new ``hub.secret``: 32 random bytes as URL-safe base64, 43 characters (well under
    the :data:`SECRET_LIMIT` bytes WebSub section 5.1 allows)."""
    return secrets.token_urlsafe(32)


def new_token() -> str:
    """A new unguessable callback path segment: 32 random bytes (256 bits) as URL-safe base64."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class HubAnswer:
    """What a hub said to a request.

    Attributes:
        accepted: the hub answered 2xx (202 Accepted is the usual answer).
        status: the HTTP status, or None when no answer arrived.
        message: one line for logs and the status page, such as
            "202 Accepted" (the standard reason phrase, else the hub's),
            "hub answered 400: <the first line of its body>" or
            "could not connect: ...". Text from the hub is cut to
            :data:`MESSAGE_CHARS` characters, control characters removed.
        retry_after: seconds the hub asked to wait (``Retry-After`` on a
            429 or 503, RFC 9110 section 10.2.3), or None.
    """

    accepted: bool
    status: int | None
    message: str
    retry_after: float | None = None


def request_subscription(
    session: Session,
    hub: str,
    *,
    mode: str,
    topic: str,
    callback: str,
    secret: str | None = None,
    lease_seconds: int | None = None,
    timeout: float = 15.0,
    source: str | None = None,
    allow_private: bool = False,
) -> HubAnswer:
    """Ask a hub to subscribe or unsubscribe ``callback`` to ``topic`` (WebSub section 5.1).

    Sends an ``application/x-www-form-urlencoded`` POST of ``hub.mode``,
    ``hub.topic``, ``hub.callback`` and, when given, ``hub.secret`` and
    ``hub.lease_seconds``. A secret should only travel to an https hub
    (section 5.1); that choice is the caller's. For how the request is
    made and answered, see :func:`_post`.

    Args:
        session: the session to send with: give :func:`fetch.outbound.new_session`'s
            (the planet's User-Agent, the environment's CA bundle, no ``.netrc``
            credentials, no cookie kept); the proxies are the environment's for each URL.
        hub: the hub's URL (http(s)); any other value is answered, not raised.
        mode: "subscribe" or "unsubscribe".
        topic: the topic URL (the advertised self URL); callback: our callback URL.
        secret: the subscription's secret (fewer than :data:`SECRET_LIMIT`
            bytes in UTF-8), or None for unsigned deliveries.
        lease_seconds: the lease asked for, seconds (int >= 1), or None
            for the hub's default.
        timeout: seconds to connect and between bytes of the answer.
        source: the configured feed URL the hub was advertised by: the hub is
            a URL learned from the network, and reaches only public addresses
            unless it is on that URL's host or ``allow_private``
            (:mod:`netguard`; the session must be :func:`fetch.outbound.new_session`'s
            for the addresses connected to to be screened); None: not screened.
    Returns:
        HubAnswer; never raises for the hub's or the network's trouble.
    Raises:
        ValueError: another mode, a secret too long, a lease that is not a
            positive int, or a value that cannot be encoded in UTF-8.
    """
    if mode not in ("subscribe", "unsubscribe"):
        raise ValueError(f"hub.mode must be subscribe or unsubscribe, not {mode!r}")
    form = [("hub.mode", mode), ("hub.topic", topic), ("hub.callback", callback)]
    if secret is not None:
        if len(secret.encode("utf-8")) >= SECRET_LIMIT:
            raise ValueError(f"hub.secret must be shorter than {SECRET_LIMIT} bytes")
        form.append(("hub.secret", secret))
    if lease_seconds is not None:
        if isinstance(lease_seconds, bool) or not isinstance(lease_seconds, int) or lease_seconds < 1:
            raise ValueError(f"hub.lease_seconds must be a positive int, not {lease_seconds!r}")
        form.append(("hub.lease_seconds", str(lease_seconds)))
    return _post(session, hub, form, timeout, source, allow_private)


def notify_publish(session: Session, hub: str, topics: Sequence[str], timeout: float = 15.0) -> HubAnswer:
    """Tell a hub that ``topics`` changed: the publisher's ping.

    Not part of WebSub, which leaves publishing to hub and publisher; the
    PubSubHubbub 0.4 convention hubs accept (section 7.1): a form POST of
    ``hub.mode=publish`` and one ``hub.url`` per topic. Each topic is also
    sent as ``hub.topic``, which some hubs read instead (flask-websub).

    Args:
        session, hub, timeout: as for :func:`request_subscription`.
        topics: the topic URLs (a single str counts as one topic).
    Returns:
        HubAnswer; never raises for the hub's or the network's trouble.
    Raises:
        ValueError: no topic, or a topic that cannot be encoded in UTF-8.
    """
    topics = (topics,) if isinstance(topics, str) else tuple(topics)
    if not topics:
        raise ValueError("notify_publish needs at least one topic")
    form = [
        ("hub.mode", "publish"),
        *(("hub.url", topic) for topic in topics),
        *(("hub.topic", topic) for topic in topics),
    ]
    return _post(session, hub, form, timeout)


def _post(
    session: Session,
    hub: str,
    form: list[tuple[str, str]],
    timeout: float,
    source: str | None = None,
    allow_private: bool = False,
) -> HubAnswer:
    """POST ``form`` to ``hub`` and read its answer, through :func:`fetch.outbound.post` (proxies, CA bundle).

    * Redirects: a 307 or 308 to an http(s) URL is followed with the same
      POST (RFC 9110 sections 15.4.8, 15.4.9), at most
      :data:`MAX_HUB_REDIRECTS` times, never from https to http (the form
      may carry the secret); any other redirect is an answer that is not
      accepted (301, 302 and 303 would turn the POST into a GET).
    * ``timeout`` seconds to connect and between bytes; the whole request,
      redirects included, ends ``2 * timeout`` seconds after it started (a
      total deadline). The body is read until its first line, :data:`MAX_ANSWER_BYTES`
      bytes, its end, or that deadline. ``Accept-Encoding: identity`` is asked:
      a compressed body is not shown.
    * A connection failure or a timeout is an answer with status None; so is
      a hub (or a redirect) learned from ``source`` that leads to a private
      network (:mod:`netguard`), refused before connecting.

    Raises:
        ValueError: a form value that cannot be encoded in UTF-8.
    """
    from syndicator.fetch import outbound  # noqa: PLC0415 - here: importing websub loads no HTTP library

    if not is_http_url(hub):
        return HubAnswer(False, None, f"not an http(s) hub URL: {_shown(hub)}")
    data = urlencode(form, encoding="utf-8").encode("ascii")  # UnicodeEncodeError (a ValueError): a lone surrogate
    headers = {"Content-Type": _FORM, "Accept-Encoding": "identity"}
    ends = time.monotonic() + 2 * timeout
    url = hub.strip()
    for hop in range(MAX_HUB_REDIRECTS + 1):
        problem = None if source is None else netguard.refusal(source, url, allow_private)
        if problem is not None:
            return HubAnswer(False, None, f"{kind_of('private_address').text}: {problem}")
        left = ends - time.monotonic()
        try:
            with netguard.screening(source is not None and netguard.screened(source, url, allow_private)):
                answer = outbound.post(
                    url, data, headers, timeout, session=session, deadline=left, read=MAX_ANSWER_BYTES, enough=_lined
                )
        except outbound.OutboundError as error:
            return HubAnswer(False, None, _unanswered(error, timeout))
        if answer.status not in (307, 308):
            return _answer(answer)
        target, why = _redirect_target(url, answer.headers.get("location"))
        if target is None or hop == MAX_HUB_REDIRECTS:
            why = why or f"more than {MAX_HUB_REDIRECTS} redirects"
            return HubAnswer(False, answer.status, f"hub answered {answer.status}: redirect not followed: {why}")
        url = target
    raise AssertionError("unreachable: the last hop returns")  # pragma: no cover


def _unanswered(error: OutboundError, timeout: float) -> str:
    """The message of a hub request that got no answer (``timeout``: seconds of each wait)."""
    if error.kind == "private_address":
        return f"{kind_of('private_address').text}: {error.refused}"
    if error.kind == "connect_timeout":
        return f"could not connect within {timeout:g} s"
    if error.kind == "timeout":
        return f"no answer within {timeout:g} s"
    if error.kind == "deadline":
        return f"no answer within {2 * timeout:g} s"
    if error.kind == "connection":
        return f"could not connect: {error.reason}"
    return f"request failed: {error.reason}"


def _redirect_target(url: str, location: str | None) -> tuple[str | None, str]:
    """(the URL a 307/308 with ``location`` points to, "") or (None, why it is not followed)."""
    location = (location or "").strip()
    target = urls.join(url, location) if location else None
    if target is None or not is_http_url(target):
        return None, f"unusable Location {_shown(location)}"
    if urls.scheme(url) == "https" and urls.scheme(target) != "https":
        return None, f"from https to {_shown(target)}"
    return target, ""


def _lined(start: bytes) -> bool:
    """True once the first bytes of a body hold a whole line that is not blank (the first line is in)."""
    return b"\n" in start.lstrip()


def _first_line(answer: Answer) -> str:
    """The first non-blank line of the answer's body, on one line, at most :data:`MESSAGE_CHARS` characters;
    "" for a body in a content coding."""
    coding = (answer.headers.get("content-encoding") or "identity").strip().lower()
    if coding != "identity":
        return ""
    text = answer.body.decode("utf-8", "replace")
    line = next((_one_line(part) for part in text.splitlines() if _one_line(part)), "")
    return line[:MESSAGE_CHARS]


def _answer(answer: Answer) -> HubAnswer:
    """The HubAnswer for a final (not redirect) answer."""
    from syndicator.fetch.answer import parse_retry_after  # noqa: PLC0415 - fetch imports requests

    status, line = answer.status, _first_line(answer)
    reason = _phrase(status) or _one_line(answer.reason)[:MESSAGE_CHARS]
    if 200 <= status < 300:
        return HubAnswer(True, status, f"{status} {reason}".rstrip())
    retry_after = None
    if status in (429, 503):
        try:  # an HTTP-date is measured against the hub's own Date (one, RFC 9110 section 6.6.1), else our clock
            sent = http_date(answer.headers.get("date")) or datetime.now(UTC)
        except (OverflowError, ValueError):
            sent = datetime.now(UTC)
        retry_after = parse_retry_after(answer.headers.get("retry-after"), sent)
    message = f"hub answered {status}: {line}" if line else f"hub answered {status} {reason}".rstrip()
    return HubAnswer(False, status, message, retry_after)


def _one_line(text: str) -> str:
    """Text squeezed to one line: control characters removed, runs of white space one space (str -> str)."""
    return " ".join(strip_control(text).split())


def _phrase(status: int) -> str:
    """The standard reason phrase of ``status`` ("Accepted"), or "" for a status http.HTTPStatus does not know."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _shown(value: object) -> str:
    """A value from a feed or a hub, for a one-line message: quoted, escaped, at most 200 characters."""
    text = value if isinstance(value, str) else repr(value)
    return repr(text[:200]) + ("…" if len(text) > 200 else "")
