"""What a server's answer to a fetch means: the headers kept, the status, the body, or why there is none.

A helper of fetch/http.py, which asks; this module reads what came back.
Rules, from seed 000 and RFC 9110:

* 304 is a successful fetch (:class:`NotModified`), but only as the answer
  to a conditional request: RFC 9110 section 15.4.5 allows it only when a
  precondition such as If-None-Match evaluated false. A 304 to a request
  that carried no validator (a new source, one whose copy was lost, or a
  redirect to a URL the validators are not bound to) says nothing about a
  copy we do not hold: a ``protocol`` failure (the stored copy, if any,
  stays in use).
* A redirect's Location is resolved by :mod:`urls` (RFC 3986 section 5.2);
  one that cannot be read or is not http(s) is a ``redirect`` failure naming it.
* The body is capped at ``max_bytes`` after decompression, at every layer
  (:mod:`coding` undoes the codings). A body labelled gzip that is not
  compressed (no ``1F 8B`` magic) is used as sent, one gzip'd twice is
  decoded twice; one that is compressed but does not decompress is a
  ``corrupt_encoding`` failure, and one in a coding syndicator does not
  know (``zstd``, say) an ``unsupported_encoding`` failure naming it.
* A ``Retry-After`` HTTP-date is measured from the response's ``Date``.
* A field defined to hold one value (``Date``, ``Last-Modified``,
  ``Expires``, ``Retry-After``, ``ETag``) that arrives more than once, as
  behind some proxies, is not a list: RFC 9110 section 5.3 allows joining
  repeated field lines only for list-based fields. Repeats of one value
  count as that value; different values make the field invalid and it is
  dropped (:func:`response_headers`). For ``Date``, RFC 9110 section 6.6.1
  lets a recipient replace an invalid Date with the time the response was
  received: every rule that reads it falls back to the build's clock.
* The headers kept (:data:`_KEEP_HEADERS`) include ``Link``, where a feed
  advertises its WebSub hubs and self URL (:func:`parse.hubs.advertised`);
  several Link headers arrive joined with ", " (RFC 9110 section 5.3).
  http.client bounds every header line at 64 KiB.
* Failures are classified by exception type and by whether the deadline
  passed, never by the words of a message (:func:`failure`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import UTC, datetime

import requests
import urllib3

from syndicator import urls
from syndicator.dates import http_date
from syndicator.errors import FeedError, FetchError, HTTPStatusError
from syndicator.failures import kind_of
from syndicator.fetch import coding, netguard
from syndicator.fetch.deadline import DEADLINES
from syndicator.fetch.keepalive import framed
from syndicator.model import Fetched, FetchRequest, FetchResult, NotModified

_KEEP_HEADERS = (
    "content-type",
    "etag",
    "last-modified",
    "cache-control",
    "expires",
    "retry-after",
    "link",
    "date",
    "content-location",
)
#: Kept fields that hold one value, never a list (RFC 9110 sections 6.6.1, 8.8.2, 8.8.3, 10.2.3;
#: RFC 9111 section 5.3): a repeat with another value makes the field invalid.
_SINGLETONS = frozenset({"date", "last-modified", "expires", "retry-after", "etag"})


def response_headers(response: requests.Response, names: tuple[str, ...] = _KEEP_HEADERS) -> dict[str, str]:
    """The fields ``names`` (lower-case str) of ``response``, each as one str, absent ones left out.

    A field sent several times arrives joined with ", " (RFC 9110 section
    5.3), which is right for a list-based field such as Link but makes
    nonsense of a singleton: two Date lines read as the first date only.
    A singleton (:data:`_SINGLETONS`) whose lines disagree is invalid and
    dropped; lines that repeat one value are that value.
    """
    getlist = getattr(getattr(response.raw, "headers", None), "getlist", None)
    headers: dict[str, str] = {}
    for name in names:
        if name not in response.headers:
            continue
        lines = getlist(name) if getlist is not None and name in _SINGLETONS else []
        if len(set(lines)) > 1:
            continue
        headers[name] = lines[0] if lines else response.headers[name]
    return headers


def outcome(
    request: FetchRequest,
    url: str,
    response: requests.Response,
    permanent: bool,
    started: float,
    read: Callable[[], bytes],
) -> FetchResult:
    """The result of a final (not redirect) answer to ``request`` from ``url``.

    Args:
        permanent: every redirect on the way was 301 or 308 (``url`` is then
            the feed's new address, when it is another).
        started: ``time.monotonic()`` when the fetch began (for ``elapsed``).
        read: reads the body (:func:`read_body`), called only for a 200.
    Returns:
        Fetched (200) or NotModified (a 304 to a conditional request).
    Raises:
        FetchError: kind "protocol": a 304 to a request with no validator;
            or what ``read`` raises.
        HTTPStatusError: any other status, with the Retry-After it asked for.
    """
    headers = response_headers(response)
    etag, modified = headers.get("etag"), headers.get("last-modified")
    new_url = url if permanent and url != request.url else None
    if response.status_code == 304:
        if not conditional(response):
            raise FetchError(
                url,
                "HTTP 304 Not Modified to a request that sent no validators (If-None-Match, If-Modified-Since)",
                kind="protocol",
            )
        return NotModified(
            url=url,
            headers=headers,
            etag=etag,
            last_modified=modified,
            permanent_url=new_url,
            elapsed=time.monotonic() - started,
        )
    if response.status_code != 200:
        # An HTTP-date is measured against the server's own Date, else our clock.
        sent = http_date(headers.get("date")) or datetime.now(UTC)
        retry_after = parse_retry_after(headers.get("retry-after"), sent)
        raise HTTPStatusError(url, response.status_code, retry_after)
    body = read()
    return Fetched(
        url=url,
        body=body,
        headers=headers,
        etag=etag,
        last_modified=modified,
        permanent_url=new_url,
        elapsed=time.monotonic() - started,
    )


def read_body(url: str, response: requests.Response, max_bytes: int, timeout: float, total: float) -> bytes:
    """The whole body of ``response``, its codings undone, at most ``max_bytes`` bytes.

    The deadline watchdog cuts a body that is still coming; one whose end
    arrived in time is kept, whenever the deadline passes. ``timeout`` and
    ``total`` (seconds: each wait, the whole fetch) are named in a failure.

    Raises:
        FetchError: kind "too_large", "corrupt_encoding", "unsupported_encoding",
            "timeout" (the body was not complete within ``total``), or the
            kind of the read's failure (:func:`failure`).
    """
    chunks: list[bytes] = []
    try:
        decoder = coding.Decoder(response.headers.get("content-encoding"), max_bytes)
        # read1 returns what has arrived; iter_content would block until a whole 64 KB chunk came in.
        # The codings are undone here, not by urllib3, which fails a body labelled gzip that is not.
        while chunk := response.raw.read1(65536, decode_content=False):
            chunks.append(decoder.feed(chunk))
        chunks.append(decoder.finish())
    except coding.TooLarge as e:
        raise FetchError(url, f"body larger than {max_bytes} bytes", kind="too_large") from e
    except coding.CorruptBody as e:
        raise FetchError(url, str(e), kind="corrupt_encoding") from e
    except coding.Unsupported as e:
        raise FetchError(url, str(e), kind="unsupported_encoding") from e
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError) as e:
        failed = failure(url, e, timeout, total)
        raise FetchError(url, f"body read failed: {failed.message}", kind=failed.kind) from e
    # With Content-Length or chunked framing urllib3 raises on a cut body; without framing the
    # end is the connection's close, which a cut socket imitates: only one seen in time counts.
    if not DEADLINES.finish() and not framed(response.raw):
        raise FetchError(url, f"body not complete within {total:.3g} s", kind="timeout")
    return b"".join(chunks)


def failure(url: str, error: Exception, timeout: float, total: float, redirected: bool = False) -> FetchError:
    """Classify a requests/urllib3 exception by its type and by whether the deadline passed.

    Args:
        timeout: seconds of each wait; total: seconds of the whole fetch (both named in the message).
        redirected: ``url`` came from a redirect (an unusable URL is then a "redirect" failure).
    Returns:
        a FetchError of kind "timeout", "private_address", "network", "tls" or "redirect".
    """
    if DEADLINES.expired():  # the watchdog cut the socket, or no time was left to resolve or connect
        return FetchError(url, f"no complete answer within {total:.3g} s", kind="timeout")
    refused = netguard.private_cause(error)
    if refused is not None:
        return FetchError(url, str(refused), kind="private_address")
    if isinstance(error, requests.exceptions.ProxyError | urllib3.exceptions.ProxyError):
        return FetchError(
            url, f"the proxy failed (HTTP_PROXY, HTTPS_PROXY or ALL_PROXY): {reason(error)}", kind="network"
        )
    if isinstance(error, requests.exceptions.SSLError | urllib3.exceptions.SSLError):
        return FetchError(url, f"TLS error: {reason(error)}", kind="tls")
    if isinstance(error, requests.exceptions.Timeout | urllib3.exceptions.TimeoutError):
        return FetchError(url, f"timed out after {timeout:g} s", kind="timeout")
    if redirected and isinstance(error, requests.exceptions.InvalidURL | urllib3.exceptions.LocationValueError):
        return FetchError(url, f"redirect to an unusable URL {shown(url)}: {reason(error)}", kind="redirect")
    return FetchError(url, f"connection failed: {reason(error)}", kind="network")


def conditional(response: requests.Response) -> bool:
    """True if the request that got ``response`` carried a validator (RFC 9110 section 13.1)."""
    sent = response.request.headers
    return "If-None-Match" in sent or "If-Modified-Since" in sent


def redirect_target(source: str, url: str, response: requests.Response) -> str:
    """The absolute http(s) URL a redirect points to (RFC 9110 section 10.2.2, resolved per RFC 3986 5.2).

    Raises:
        FetchError: kind "redirect": no Location, one that cannot be read
            (a malformed host or port, say), or one that is not http(s).
    """
    target = (response.headers.get("location") or "").strip()
    if not target:
        raise FetchError(url, f"HTTP {response.status_code} without Location", kind="redirect")
    resolved = urls.join(url, target)
    if resolved is None or (urls.scheme(resolved) in urls.WEB_SCHEMES and not urls.hostname(resolved)):
        raise FetchError(source, f"redirect to an unusable URL {shown(target)}", kind="redirect")
    if urls.scheme(resolved) not in urls.WEB_SCHEMES:
        raise FetchError(source, f"redirect to a non-http(s) URL {shown(resolved)}", kind="redirect")
    return resolved


def shown(url: str, limit: int = 200) -> str:
    """A URL from a server, for a one-line message: quoted, escaped, at most ``limit`` characters."""
    return repr(url[:limit]) + ("…" if len(url) > limit else "")


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Read a Retry-After header (RFC 9110 section 10.2.3).

    Args:
        value: the header value: delay-seconds or an HTTP-date, or None.
        now: the current time (UTC) to measure an HTTP-date from.
    Returns:
        seconds to wait (float >= 0, finite), or None when absent or
        unreadable: delay-seconds are ASCII digits (RFC 9110 section 5.6.1),
        so "²" or a number too large for a float is unreadable. Never raises.
    """
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        seconds = float(value)
        return seconds if math.isfinite(seconds) else None
    try:
        when = http_date(value)
    except (OverflowError, ValueError):  # a date at the edge of datetime's range, moved by its zone
        return None
    return None if when is None else max(0.0, (when - now).total_seconds())


def transient(error: FeedError) -> bool:
    """True when the failure table says one more attempt may help (never with a Retry-After)."""
    if isinstance(error, HTTPStatusError) and error.retry_after is not None:
        return False
    return kind_of(error.kind).retry


def reason(error: BaseException) -> str:
    """The innermost message of a requests/urllib3 error chain, on one line, at most 200 characters
    (the exception's class name when it has no message)."""
    seen = 0
    while error.__context__ is not None and not isinstance(error.__context__, KeyboardInterrupt) and seen < 10:
        error, seen = error.__context__, seen + 1
    return " ".join(str(error).split())[:200] or type(error).__name__
