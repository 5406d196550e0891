"""URLs from untrusted places: the one module that splits, joins and normalises them.

Feeds, pages and servers hand us URLs we do not control: entry links and
guids, ``xml:base``, image sources, enclosures, ``<base href>`` and
``<link rel=alternate>`` in pages, redirect ``Location`` headers.
:mod:`urllib.parse` raises ValueError on some of them (``http://[oops/1``,
a malformed IPv6 literal; a port such as ``:99999`` or ``:x``; a host that
changes under NFKC normalisation), and ``urlencode`` raises
UnicodeEncodeError on a lone surrogate. Every function here takes any
value and never raises; an unusable URL gives None (or "") and the caller
drops that one field, or turns it into its source's classified failure.

Rules, and where they come from:

* a URL longer than :data:`MAX_LENGTH` characters is unusable: RFC 9110
  section 4.1 asks every recipient to support at least 8,000 octets, and
  going beyond that invites unbounded work on hostile input;
* the port must be decimal digits in 0..65535 (RFC 3986 section 3.2.3);
  an IP literal in brackets must be a valid IPv6 or IPvFuture address
  (RFC 3986 section 3.2.2);
* relative references resolve as :func:`urllib.parse.urljoin` does
  (RFC 3986 section 5.2);
* a web URL is http or https with a host (RFC 9110 sections 4.2.1, 4.2.2);
* a URL with a password (a ``postgresql://`` state, a proxy) is shown in
  messages without it (:func:`shown`, :func:`secretless`).
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, parse_qsl, unquote, urlencode, urljoin, urlsplit, urlunsplit

#: Longest URL accepted, in characters (RFC 9110 section 4.1: at least 8,000 octets).
MAX_LENGTH = 8000
#: The schemes a published link or a fetched URL may have.
WEB_SCHEMES = frozenset({"http", "https"})
#: Query parameters that only track the reader and never name a resource.
TRACKING_PARAMETERS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "msclkid",
        "mc_cid",
        "mc_eid",
        "igshid",
        "yclid",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "ref_src",
        "spm",
        "wt.mc_id",
    }
)
_DEFAULT_PORTS = {"http": 80, "https": 443}
# C0 and C1 controls, lone surrogates and non-characters: never part of a link we publish.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
#: What the WHATWG URL Standard removes from anywhere in a URL before parsing it.
_TAB_OR_NEWLINE = re.compile("[\t\n\r]")
#: The authority (user, host, port) of an absolute or scheme-relative reference (RFC 3986 section 3.2).
_AUTHORITY = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?//([^/?#]*)")
#: An absolute http(s) URL in plain ASCII that :func:`join` gives back as it is, whatever the base,
#: and :func:`split` accepts (with the port checked apart): lower-case scheme, a host of letters,
#: digits, dots and hyphens, no ";" in the path (urlunparse would drop an empty parameter), no empty
#: query or fragment (it would drop those too), no space or control. Most links in feeds are this;
#: matching it costs a tenth of splitting and joining them.
_PLAIN_WEB = re.compile(
    r"https?://[A-Za-z0-9.-]+(?::([0-9]{1,5}))?(?:/[\x21\x22\x24-\x3a\x3c-\x3e\x40-\x7e]*)?"
    r"(?:\?[\x21\x22\x24-\x7e]+)?(?:#[\x21-\x7e]+)?"
)


def plain_web(url: str) -> bool:
    """True when ``url`` is an absolute http(s) URL in plain ASCII (:data:`_PLAIN_WEB`) with a port in
    range (RFC 3986 section 3.2.3): usable as it is, with a host and no credentials, no urllib needed."""
    match = _PLAIN_WEB.fullmatch(url)
    return match is not None and len(url) <= MAX_LENGTH and int(match.group(1) or 0) <= 65535


def split(url: object) -> SplitResult | None:
    """Split ``url`` into its five components (RFC 3986 section 3), never raising.

    Args:
        url: any value; only a str can give a result.
    Returns:
        urllib's SplitResult, whose ``port`` and ``hostname`` are then safe to
        read; None when ``url`` is not a str, is longer than
        :data:`MAX_LENGTH`, has a malformed IP literal or a port that is not
        0..65535 (RFC 3986 sections 3.2.2, 3.2.3), or urllib refuses it.
    """
    if not isinstance(url, str) or len(url) > MAX_LENGTH:
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError:
        return None
    return parts


def join(base: object, ref: object) -> str | None:
    """``ref`` resolved against ``base`` (RFC 3986 section 5.2, as urljoin does it).

    Args:
        base: the base URL; None, "" or a base urllib cannot read is
            ignored, so ``ref`` comes back as it is (still relative if it was).
        ref: the reference (str), absolute or relative.
    Returns:
        the resolved URL (str; not necessarily absolute, not necessarily
        http), or None when ``ref`` is not a str or the result is unusable
        (see :func:`split`). Never raises.
    """
    if not isinstance(ref, str) or len(ref) > MAX_LENGTH:
        return None
    if plain_web(ref):
        return ref
    result = ref
    if isinstance(base, str) and base and len(base) <= MAX_LENGTH:
        try:
            result = urljoin(base, ref)
        except ValueError:  # a malformed IP literal in the base or in ref; the split below judges ref
            result = ref
    return result if split(result) is not None else None


def scheme(url: object) -> str:
    """The scheme of ``url`` in lower case (RFC 3986 section 3.1), "" if none or unusable."""
    if isinstance(url, str) and plain_web(url):
        return "https" if url[4] == "s" else "http"
    parts = split(url)
    return parts.scheme if parts is not None else ""


def hostname(url: object) -> str:
    """The host of ``url`` in lower case, without brackets or port; "" if none or unusable.

    RFC 3986 section 3.2.2: ``http://[::1]:8080/`` gives ``::1``. Never raises.
    """
    parts = split(url)
    return (parts.hostname or "") if parts is not None else ""


def is_web(url: object) -> bool:
    """True if ``url`` is a usable http(s) URL with a host (RFC 9110 sections 4.2.1, 4.2.2)."""
    return scheme(url) in WEB_SCHEMES and bool(hostname(url))


def absolute(link: object, base: object) -> str | None:
    """An absolute http(s) URL from a link found in a document, else None.

    As the WHATWG URL Standard parses a link: tabs and line breaks inside
    are removed (feeds wrap long links) and white space around it is
    stripped; any other white space left inside becomes one ``%20``, and a
    space in the host makes the link unusable. Control characters, lone
    surrogates and non-characters are removed, and the result is resolved
    against ``base`` (RFC 3986 section 5.2).

    Args:
        link: the value found (anything; only a non-blank str can give a URL).
        base: the URL to resolve against (str), or None.
    Returns:
        the URL (str) when it is http(s) with a host (:func:`is_web`), else
        None: not a str, blank, unusable (:func:`split`) or another scheme.
        Never raises.
    """
    if not isinstance(link, str) or not link.strip():
        return None
    if plain_web(link):
        return link
    text = " ".join(_TAB_OR_NEWLINE.sub("", link).split())
    if " " in text:
        authority = _AUTHORITY.match(text)
        if authority and " " in authority.group(1):
            return None
        text = text.replace(" ", "%20")
    result = join(base, _CONTROL.sub("", text))
    parts = split(result)
    return result if parts is not None and parts.scheme in WEB_SCHEMES and parts.hostname else None


#: A lower-case http(s) URL with a host of lower-case letters, digits, dots and hyphens, a port
#: without leading zeros or none, no user, query or fragment, and an ASCII path without spaces or
#: controls: canonical as it is once its default port is dropped and an empty path is "/".
#: urlsplit and urlunsplit give exactly this, at many times the cost.
_PLAIN = re.compile(r"(https?)://([a-z0-9.-]+)(?::([1-9][0-9]{0,4}))?(/[\x21-\x22\x24-\x3e\x40-\x7e]*)?")


def canonical(url: str) -> str:
    """Canonical form of a URL for comparing identities (str -> str).

    Lower-case scheme and host (RFC 3986 section 6.2.2.1), default port
    dropped and an empty path written as ``/`` (RFC 3986 section 6.2.3),
    fragment dropped, tracking parameters (``utm_*`` and
    :data:`TRACKING_PARAMETERS`) dropped. Everything else, including the
    order of the remaining query parameters and the case of the path, is
    kept. Returns the input stripped when it cannot be split (see
    :func:`split`), "" for a value that is not a str. Never raises.
    """
    if not isinstance(url, str):
        return ""
    url = url.strip()
    plain = _PLAIN.fullmatch(url)
    if plain and len(url) <= MAX_LENGTH and int(plain.group(3) or 0) <= 65535:  # most links: no urllib
        scheme, host, port, path = plain.group(1, 2, 3, 4)
        if port and int(port) == _DEFAULT_PORTS[scheme]:
            return f"{scheme}://{host}{path or '/'}"
        return url if path else url + "/"
    parts = split(url)
    if parts is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None and parts.port != _DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{parts.port}"
    if parts.username or parts.password:
        host = f"{parts.username or ''}{':' if parts.password else ''}{parts.password or ''}@{host}"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith("utm_") and k.lower() not in TRACKING_PARAMETERS
    ]
    path = parts.path or ("/" if host else "")
    # surrogatepass: a lone surrogate in the query is percent-encoded instead of raising.
    query_text = urlencode(query, safe="/:@!$'()*,;", errors="surrogatepass")
    return urlunsplit((parts.scheme, host, path, query_text, ""))


#: ``scheme://user:`` then the password, up to the text's last ``@`` (a password may hold a raw ``@``,
#: ``#``, ``/`` or ``?``; masking too much of a message is harmless).
_PASSWORD = re.compile(r"^([a-zA-Z][\w+.-]*://[^/?#@:]*:).*@")
#: A ``password=`` parameter of the query.
_PASSWORD_PARAMETER = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)
#: The characters that end a URL's password for a parser that does not take it up to the last ``@``.
_DELIMITERS = re.compile(r"[@/?#:]")


def is_postgres_url(value: str) -> bool:
    """True for a ``postgresql://`` or ``postgres://`` URL (the state of many workers)."""
    return value.startswith(("postgresql://", "postgres://"))


def shown(url: str) -> str:
    """``url`` without its password (after ``user:`` up to the authority's last ``@``, and any
    ``password=`` parameter), for messages; never raises, whatever the text."""
    return _PASSWORD_PARAMETER.sub(r"\1***", _PASSWORD.sub(r"\1***@", url))


def secretless(text: str, url: str) -> str:
    """``text`` (a message of psycopg's or urllib's) with the password of ``url`` masked wherever it shows,
    whole or in part: a parser that ends the password at a raw ``@``, ``/``, ``?``, ``#`` or ``:`` in it
    shows the rest as a host or a port (``failed to resolve host 'ss@db'`` for the password ``p@ss``), so
    each piece between those characters (two characters or more) is masked too, the longest first."""
    secrets = [url[match.end(1) : match.end() - 1] for match in [_PASSWORD.search(url)] if match]
    secrets += [match.group(0).split("=", 1)[1] for match in _PASSWORD_PARAMETER.finditer(url)]
    forms = {
        form for secret in secrets for whole in (secret, unquote(secret)) for form in (whole, *_DELIMITERS.split(whole))
    }
    for form in sorted(forms, key=len, reverse=True):
        if len(form) >= 2 or (form and form in secrets):
            text = text.replace(form, "***")
    return text
