"""What a private feed's request carries (docs/private-feeds.md): its credential, sent only to the
configured feed's own origin, and kept out of every message.

* The origin is the scheme, host and port (RFC 6454 section 4); a request to any other origin (after
  a redirect, or to a feed a page advertises elsewhere) carries nothing of the credential. requests'
  own stripping of ``Authorization`` on a redirect does not cover a header of one's own or a query
  parameter, and syndicator follows redirects by hand, so the rule is applied here on every hop.
* ``bearer``: ``Authorization: Bearer TOKEN`` (RFC 6750 section 2.1); ``basic``: ``Authorization:
  Basic`` of ``user:password`` in UTF-8 (RFC 7617 section 2); ``header``: that header; ``query``:
  ``name=value`` added to the URL of the request only, never to a URL that is stored or shown (a
  redirect to a URL repeating it is stored without it: :func:`without_token`).
* Errors quote URLs (requests' do: ``Max retries exceeded with url: /feed?token=...``): every failure
  of a private fetch is scrubbed (:func:`scrub`) before it leaves the fetcher.
"""

from __future__ import annotations

import base64
from urllib.parse import parse_qsl, quote, quote_plus, unquote_plus, urlencode

from syndicator import urls
from syndicator.credential import Credential
from syndicator.errors import FeedError

__all__ = ["MASK", "headers_for", "same_origin", "scrub", "url_for", "without_token"]

#: What a secret is replaced with in a message.
MASK = "***"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def same_origin(a: str, b: str) -> bool:
    """True when the URLs ``a`` and ``b`` have one origin: scheme, host and port (default ports
    filled in), RFC 6454 section 4; False when either cannot be read (bool)."""
    pa, pb = urls.split(a), urls.split(b)
    if pa is None or pb is None or not pa.hostname:
        return False
    try:
        ports = (pa.port or _DEFAULT_PORTS.get(pa.scheme), pb.port or _DEFAULT_PORTS.get(pb.scheme))
    except ValueError:  # a port that is not a number
        return False
    return (pa.scheme.lower(), pa.hostname, ports[0]) == (pb.scheme.lower(), pb.hostname, ports[1])


def headers_for(credential: Credential | None, source: str, url: str) -> dict[str, str]:
    """The headers ``credential`` adds to a request for ``url`` of the feed ``source``: none unless
    ``url`` is of the origin of ``source`` ({name: value})."""
    if credential is None or not same_origin(source, url):
        return {}
    if credential.kind == "bearer":
        return {"Authorization": f"Bearer {credential.secret}"}
    if credential.kind == "basic":
        pair = f"{credential.key}:{credential.secret}".encode()
        return {"Authorization": f"Basic {base64.b64encode(pair).decode('ascii')}"}
    if credential.kind == "header":
        return {credential.key: credential.secret}
    return {}


def url_for(credential: Credential | None, source: str, url: str) -> str:
    """The URL to send for ``url`` of the feed ``source``: with a ``query`` credential's parameter
    added when ``url`` is of the origin of ``source``; without a fragment (str)."""
    url = url.split("#", 1)[0]
    if credential is None or credential.kind != "query" or not same_origin(source, url):
        return url
    return f"{url}{'&' if '?' in url else '?'}{urlencode({credential.key: credential.secret})}"


def without_token(credential: Credential | None, url: str) -> str:
    """``url`` (a redirect's target) without the ``query`` credential's parameter when it holds the
    secret: a server that redirects to a URL repeating the token does not get it stored as the fetch
    URL or the validators' URL; :func:`url_for` adds it again when that URL is requested (str)."""
    if credential is None or credential.kind != "query" or credential.secret not in unquote_plus(url):
        return url
    base, _, fragment = url.partition("#")
    path, _, query = base.partition("?")
    kept = [
        (k, v) for k, v in parse_qsl(query, keep_blank_values=True) if (k, v) != (credential.key, credential.secret)
    ]
    return path + (f"?{urlencode(kept)}" if kept else "") + (f"#{fragment}" if fragment else "")


def scrub(error: FeedError, credential: Credential | None) -> FeedError:
    """``error`` with every form of ``credential``'s secret in its message masked (:data:`MASK`), and
    the exception it was raised from dropped (its text quotes the URL sent); the same object."""
    if credential is None:
        return error
    text = error.message
    for form in _forms(credential):
        text = text.replace(form, MASK)
    error.args = (text,)
    error.__cause__, error.__context__, error.__suppress_context__ = None, None, True
    return error


def _forms(credential: Credential) -> list[str]:
    """The texts a message may hold the secret as: as it is, URL-encoded, in a basic header."""
    secret = credential.secret
    forms = {secret, quote(secret, safe=""), quote_plus(secret)}
    if credential.kind == "basic":
        forms.add(base64.b64encode(f"{credential.key}:{secret}".encode()).decode("ascii"))
    return sorted((form for form in forms if form), key=len, reverse=True)
