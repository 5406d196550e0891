"""WebSub (W3C Recommendation, 2018) for a subscriber: discovery, signatures, and the requests to a hub.

Pure pieces, used by :mod:`parse` and by ``syndicator serve``'s driver,
plus the two requests syndicator sends to a hub. Rules, and where they come from:

* Discovery (WebSub section 4): a feed names its hubs with ``rel="hub"``
  links and its own URL, the topic, with a ``rel="self"`` link, in HTTP
  ``Link`` headers (RFC 8288) and in the document (Atom and RSS
  ``atom:link``; JSON Feed 1.1 ``hubs`` and ``feed_url``). Header links
  come first, as section 4 has a subscriber look at the headers before the
  body; the subscriber must then use the advertised self URL as the topic.
  A target is resolved against the URL that answered (RFC 8288 section 3.1;
  RFC 3986 section 5.2) and kept only as a usable http(s) URL without
  credentials (:func:`values.is_http_url`): a hub URL appears in logs and
  status pages. Relation types are compared case-insensitively (RFC 8288
  section 2.1.1); the IRI form ``http://www.iana.org/assignments/relation/hub``
  counts as ``hub`` (RFC 4287 section 4.2.7.2).
* The work is bounded whatever the input: at most :data:`MAX_HUBS` hubs
  are kept, at most :data:`MAX_CANDIDATES` hub or self links are examined
  per source (headers, document), at most :data:`MAX_LINK_CHARS`
  characters of Link headers are read, and nothing here raises on what a
  publisher or a hub sends.
* Signatures (WebSub section 8): ``X-Hub-Signature: method=hexdigest``,
  an HMAC of the exact body bytes keyed with the subscription's secret,
  ``method`` one of :data:`SIGNATURE_ALGORITHMS`. A subscriber ignores a
  delivery whose signature does not match, but still answers it 2xx.
* Subscription requests (WebSub section 5.1) and the publisher's ping
  (PubSubHubbub 0.4 section 7.1; not part of WebSub) are form POSTs. A hub
  answers a request it takes with 202 Accepted and one it refuses with a
  4xx or 5xx, the reason as plain text in the body (section 5.1.2).

Importing this module loads neither requests nor an HTML library: requests
(and :mod:`fetch`) are imported when a request is sent, so a build or a
status report that only reads subscriptions stays light.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from . import netguard, urls
from .dates import http_date
from .failures import kind_of
from .model import ParsedFeed
from .values import is_http_url, strip_control

if TYPE_CHECKING:
    import requests

#: The X-Hub-Signature methods WebSub section 8 recognizes (names as hashlib knows them).
SIGNATURE_ALGORITHMS: tuple[str, ...] = ("sha1", "sha256", "sha384", "sha512")
#: Hubs kept from one feed: more than a few is no redundancy, only more requests.
MAX_HUBS = 4
#: Hub or self links examined in one source (the Link headers, or the document) before giving up.
MAX_CANDIDATES = 64
#: Characters of Link header values read; a link cut at this limit is dropped.
MAX_LINK_CHARS = 64 * 1024
#: Link header elements (links, and the junk between them) read at most.
MAX_LINK_VALUES = 256
#: 307 and 308 redirects a hub request follows at most (other redirects would turn the POST into a GET).
MAX_HUB_REDIRECTS = 3
#: Bytes of a hub's answer read at most (its first line goes into the message).
MAX_ANSWER_BYTES = 64 * 1024
#: Characters of the hub's first line kept in a message.
MESSAGE_CHARS = 200
#: A secret must be shorter than this many bytes (WebSub section 5.1).
SECRET_LIMIT = 200
_IANA_RELATION = "http://www.iana.org/assignments/relation/"
_FORM = "application/x-www-form-urlencoded"

# The Link header grammar (RFC 8288 section 3; token and quoted-string: RFC 9110 section 5.6). Every run is
# possessive, so a malformed header costs one pass from where the match started, never a rescan.
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]++"
_LINK_TARGET = re.compile(r"[ \t,]*+<([^<>]*+)>")  # empty list elements and white space before a link are skipped
_LINK_PARAM = re.compile(rf'[ \t]*+;[ \t]*+({_TOKEN})[ \t]*+(?:=[ \t]*+(?:"((?:[^"\\]|\\.)*+)"|({_TOKEN})))?+')
_LINK_END = re.compile(r"[ \t]*+(?:,|\Z)")
_QUOTED_PAIR = re.compile(r"\\(.)")
_SIGNATURE = re.compile(r"([A-Za-z0-9]{1,16})=([0-9A-Fa-f]{1,256})")


@dataclass(frozen=True)
class Advertised:
    """What a feed response advertises for WebSub.

    Attributes:
        hubs: hub URLs (absolute http(s)), in the order found, each once
            (compared in :func:`urls.canonical` form), at most :data:`MAX_HUBS`;
            () when the feed advertises none.
        topic: the advertised self URL (absolute http(s)), or None: the
            caller then uses the URL it fetched.
    """

    hubs: tuple[str, ...]
    topic: str | None


def collect(links: Iterable[tuple[object, object]], base: str | None) -> Advertised:
    """The hubs and the self URL among a source's links.

    Args:
        links: (rel, href) pairs in the source's order: rel a
            white-space-separated list of relation types, href a URL
            reference; either may be any value (anything but a str is no link).
        base: the URL relative references resolve against (RFC 3986 section 5.2).
    Returns:
        Advertised: the first :data:`MAX_HUBS` distinct usable hub URLs and
        the first usable self URL, from at most :data:`MAX_CANDIDATES` hub
        or self links. Never raises.
    """
    hubs: dict[str, str] = {}
    topic: str | None = None
    examined = 0
    for rel, href in links:
        kinds = _relations(rel) & {"hub", "self"}
        if not kinds:
            continue
        examined += 1
        if examined > MAX_CANDIDATES:
            break
        url = urls.absolute(href, base)
        if url is None or not is_http_url(url):
            continue
        if "self" in kinds and topic is None:
            topic = url
        if "hub" in kinds and len(hubs) < MAX_HUBS:
            hubs.setdefault(urls.canonical(url), url)
        if topic is not None and len(hubs) >= MAX_HUBS:
            break
    return Advertised(tuple(hubs.values()), topic)


def advertised(headers: Mapping[str, str], parsed: ParsedFeed | None, url: str) -> Advertised:
    """What a feed response advertises: its Link headers first, then the document's links.

    Args:
        headers: the response headers (``Fetched.headers`` or
            ``NotModified.headers``); the ``Link`` values are read, names
            in any case, several links per value (RFC 8288 section 3).
        parsed: the parsed document (its ``hubs`` and ``self_url``), or
            None (a 304, or a document not parsed).
        url: the URL that answered; relative targets resolve against it.
    Returns:
        Advertised: hubs from the headers, then from the document, each once,
        at most :data:`MAX_HUBS`; the topic is the header's self URL, else
        the document's, else None (the caller then uses the URL it fetched).
        Never raises.
    """
    header = collect(_header_links(headers, url), url)
    document = Advertised((), None)
    if isinstance(parsed, ParsedFeed):
        hubs = parsed.hubs if isinstance(parsed.hubs, tuple) else ()
        document = collect([*(("hub", hub) for hub in hubs[:MAX_CANDIDATES]), ("self", parsed.self_url)], url)
    merged: dict[str, str] = {}
    for hub in header.hubs + document.hubs:
        merged.setdefault(urls.canonical(hub), hub)
    return Advertised(tuple(merged.values())[:MAX_HUBS], header.topic or document.topic)


def _relations(rel: object) -> frozenset[str]:
    """The relation types of a ``rel`` value, in lower case, IANA IRIs as their short names."""
    if not isinstance(rel, str):
        return frozenset()
    names = rel[:1000].lower().split()
    return frozenset(name.removeprefix(_IANA_RELATION) for name in names[:16])


def _header_links(headers: Mapping[str, str], base: str) -> Iterator[tuple[str, str]]:
    """(rel, target) of each link in the ``Link`` headers, in order (RFC 8288 section 3).

    Several headers are read as one comma-separated list (RFC 9110 section
    5.3). A link whose ``anchor`` names another resource than ``base`` is
    about that resource, not this feed, and is skipped (RFC 8288 section
    3.2); only the first ``rel`` of a link counts (section 3.3). A link
    the grammar cannot read is skipped up to the next comma.
    """
    try:
        values = [value for name, value in headers.items()
                  if isinstance(name, str) and name.lower() == "link" and isinstance(value, str)]
    except (AttributeError, TypeError, ValueError):
        return
    text = ", ".join(values)
    cut = len(text) > MAX_LINK_CHARS
    text = text[:MAX_LINK_CHARS]
    position, end = 0, len(text)
    for _ in range(MAX_LINK_VALUES):
        if position >= end:
            return
        target = _LINK_TARGET.match(text, position)
        if target is None:
            position = _after_comma(text, position)
            continue
        position = target.end()
        params: dict[str, str] = {}
        while (param := _LINK_PARAM.match(text, position)) is not None:
            quoted, token = param.group(2), param.group(3)
            value = _QUOTED_PAIR.sub(r"\1", quoted) if quoted is not None else (token or "").strip("'")
            params.setdefault(param.group(1).lower(), value)
            position = param.end()
        closing = _LINK_END.match(text, position)
        if closing is None:
            position = _after_comma(text, position)
            continue
        position = closing.end()
        if cut and position >= end:
            return  # this link may have been cut short
        anchor = params.get("anchor")
        if anchor is not None and urls.canonical(urls.join(base, anchor) or "") != urls.canonical(base):
            continue
        yield params.get("rel", ""), target.group(1)


def _after_comma(text: str, position: int) -> int:
    """The position just after the next comma from ``position``, or the end of ``text``."""
    comma = text.find(",", position)
    return len(text) if comma < 0 else comma + 1


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
    if (not isinstance(header, str) or len(header) > 300 or not isinstance(secret, str) or not secret
            or not isinstance(body, bytes | bytearray | memoryview)):
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


def request_subscription(session: requests.Session, hub: str, *, mode: str, topic: str, callback: str,
                         secret: str | None = None, lease_seconds: int | None = None,
                         timeout: float = 15.0, source: str | None = None, allow_private: bool = False) -> HubAnswer:
    """Ask a hub to subscribe or unsubscribe ``callback`` to ``topic`` (WebSub section 5.1).

    Sends an ``application/x-www-form-urlencoded`` POST of ``hub.mode``,
    ``hub.topic``, ``hub.callback`` and, when given, ``hub.secret`` and
    ``hub.lease_seconds``. A secret should only travel to an https hub
    (section 5.1); that choice is the caller's. For how the request is
    made and answered, see :func:`_post`.

    Args:
        session: the session to send with; its own settings (proxies, CA
            bundle, ``trust_env``) apply: give one with ``trust_env`` False,
            as :class:`fetch.Fetcher` uses, so that no ``.netrc``
            credentials go to a hub.
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
            (:mod:`netguard`; the session must be :func:`fetch.guarded_session`'s
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


def notify_publish(session: requests.Session, hub: str, topics: Sequence[str], timeout: float = 15.0) -> HubAnswer:
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
    form = [("hub.mode", "publish"), *(("hub.url", topic) for topic in topics),
            *(("hub.topic", topic) for topic in topics)]
    return _post(session, hub, form, timeout)


def _post(session: requests.Session, hub: str, form: list[tuple[str, str]], timeout: float,
          source: str | None = None, allow_private: bool = False) -> HubAnswer:
    """POST ``form`` to ``hub`` and read its answer.

    * Redirects: a 307 or 308 to an http(s) URL is followed with the same
      POST (RFC 9110 sections 15.4.8, 15.4.9), at most
      :data:`MAX_HUB_REDIRECTS` times, never from https to http (the form
      may carry the secret); any other redirect is an answer that is not
      accepted (301, 302 and 303 would turn the POST into a GET).
    * ``timeout`` seconds to connect and between bytes (requests' timeout);
      the body is read until :data:`MAX_ANSWER_BYTES` bytes, its end, or
      ``2 * timeout`` seconds after the request started, checked between reads.
      ``Accept-Encoding: identity`` is asked: a compressed body is not shown.
    * Proxies come from the environment (``HTTPS_PROXY``, ``NO_PROXY``...), as
      for fetches; give a session with ``trust_env = False`` so that no
      ``.netrc`` credentials are sent.
    * A connection failure or a timeout is an answer with status None; so is
      a hub (or a redirect) learned from ``source`` that leads to a private
      network (:mod:`netguard`), refused before connecting.

    Raises:
        ValueError: a form value that cannot be encoded in UTF-8.
    """
    import requests  # noqa: PLC0415 - here: importing websub loads no HTTP library
    import urllib3  # noqa: PLC0415

    if not is_http_url(hub):
        return HubAnswer(False, None, f"not an http(s) hub URL: {_shown(hub)}")
    data = urlencode(form, encoding="utf-8")  # UnicodeEncodeError (a ValueError) for a lone surrogate
    headers = {"Content-Type": _FORM, "Accept-Encoding": "identity"}
    started = time.monotonic()
    url = hub.strip()
    for hop in range(MAX_HUB_REDIRECTS + 1):
        screened = source is not None and netguard.screened(source, url, allow_private)
        problem = None if source is None else netguard.refusal(source, url, allow_private)
        if problem is not None:
            return HubAnswer(False, None, f"{kind_of('private_address').text}: {problem}")
        try:
            with netguard.screening(screened):
                response = session.post(url, data=data, headers=headers, timeout=timeout, allow_redirects=False,
                                        stream=True, proxies=_proxies(url))
        except requests.exceptions.ConnectTimeout:
            return HubAnswer(False, None, f"could not connect within {timeout:g} s")
        except requests.exceptions.Timeout:
            return HubAnswer(False, None, f"no answer within {timeout:g} s")
        except requests.exceptions.ConnectionError as error:
            refused = netguard.private_cause(error)
            if refused is not None:
                return HubAnswer(False, None, f"{kind_of('private_address').text}: {refused}")
            return HubAnswer(False, None, f"could not connect: {_reason(error)}")
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError) as error:
            return HubAnswer(False, None, f"request failed: {_reason(error)}")
        try:
            status = response.status_code
            if status in (307, 308):
                target, why = _redirect_target(url, response)
                if target is None or hop == MAX_HUB_REDIRECTS:
                    why = why or f"more than {MAX_HUB_REDIRECTS} redirects"
                    return HubAnswer(False, status, f"hub answered {status}: redirect not followed: {why}")
                url = target
                continue
            return _answer(response, _first_line(response, started + 2 * timeout))
        finally:
            response.close()
    raise AssertionError("unreachable: the last hop returns")  # pragma: no cover


def _redirect_target(url: str, response: requests.Response) -> tuple[str | None, str]:
    """(the URL a 307/308 points to, "") or (None, why it is not followed)."""
    location = (response.headers.get("location") or "").strip()
    target = urls.join(url, location) if location else None
    if target is None or not is_http_url(target):
        return None, f"unusable Location {_shown(location)}"
    if urls.scheme(url) == "https" and urls.scheme(target) != "https":
        return None, f"from https to {_shown(target)}"
    return target, ""


def _first_line(response: requests.Response, deadline: float) -> str:
    """The first non-blank line of the answer's body, on one line, at most :data:`MESSAGE_CHARS` characters."""
    import requests  # noqa: PLC0415 - loaded already by _post
    import urllib3  # noqa: PLC0415

    coding = (response.headers.get("content-encoding") or "identity").strip().lower()
    if coding != "identity":
        return ""
    chunks: list[bytes] = []
    size = 0
    try:
        while size < MAX_ANSWER_BYTES and time.monotonic() < deadline:
            chunk = response.raw.read1(MAX_ANSWER_BYTES - size, decode_content=False)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if b"\n" in chunk and b"".join(chunks).strip():
                break  # the first line is in
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError):
        pass  # what arrived is shown
    text = b"".join(chunks).decode("utf-8", "replace")
    line = next((_one_line(part) for part in text.splitlines() if _one_line(part)), "")
    return line[:MESSAGE_CHARS]


def _answer(response: requests.Response, line: str) -> HubAnswer:
    """The HubAnswer for a final (not redirect) response whose body's first line is ``line``."""
    from .fetch import parse_retry_after, response_headers  # noqa: PLC0415 - fetch imports requests

    status = response.status_code
    reason = _phrase(status) or _one_line(str(response.reason or ""))[:MESSAGE_CHARS]
    if 200 <= status < 300:
        return HubAnswer(True, status, f"{status} {reason}".rstrip())
    retry_after = None
    if status in (429, 503):
        headers = response_headers(response, ("date", "retry-after"))
        try:  # an HTTP-date is measured against the hub's own Date (one, RFC 9110 section 6.6.1), else our clock
            sent = http_date(headers.get("date")) or datetime.now(UTC)
        except (OverflowError, ValueError):
            sent = datetime.now(UTC)
        retry_after = parse_retry_after(headers.get("retry-after"), sent)
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


def _reason(error: BaseException) -> str:
    """The innermost message of a requests/urllib3 error chain, on one line, at most 200 characters."""
    seen = 0
    while error.__context__ is not None and not isinstance(error.__context__, KeyboardInterrupt) and seen < 10:
        error, seen = error.__context__, seen + 1
    return " ".join(str(error).split())[:MESSAGE_CHARS] or type(error).__name__


def _proxies(url: str) -> dict[str, str] | None:
    """The proxies the environment names for ``url`` (requests' reading of HTTP(S)_PROXY, ALL_PROXY and
    NO_PROXY), or None when it names none."""
    import urllib.request  # noqa: PLC0415

    import requests  # noqa: PLC0415

    if not urllib.request.getproxies():
        return None
    return dict(requests.utils.get_environ_proxies(url))
