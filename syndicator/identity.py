"""Entry identity: canonical links and fingerprints (seed 000, "deduplicate").

An entry's identity within its source is, in order:

1. the id the feed gives it (RSS ``guid``, Atom ``id``, JSON Feed ``id``),
   unless that id repeats inside the same document;
2. else its canonical link (:func:`canonical_url`), unless that repeats too;
3. else a fingerprint of stable fields (:func:`fingerprint`): title, the
   date string as written, and the text of summary or content. Never the
   fetch time.
"""

from __future__ import annotations

import hashlib
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

#: Query parameters that only track the reader and never name a resource.
TRACKING_PARAMETERS = frozenset({
    "fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "igshid", "yclid",
    "_hsenc", "_hsmi", "mkt_tok", "ref_src", "spm",
})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_url(url: str) -> str:
    """Canonical form of a URL for comparing identities.

    Lower-case scheme and host, default port dropped, fragment dropped,
    tracking parameters (``utm_*`` and :data:`TRACKING_PARAMETERS`) dropped,
    an empty path written as ``/``. Everything else, including the order of
    the remaining query parameters, is kept. Returns the input stripped when
    it cannot be split.
    """
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    if parts.username or parts.password:
        host = f"{parts.username or ''}{':' if parts.password else ''}{parts.password or ''}@{host}"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if not k.lower().startswith("utm_") and k.lower() not in TRACKING_PARAMETERS]
    path = parts.path or ("/" if host else "")
    return urlunsplit((scheme, host, path, urlencode(query, safe="/:@!$'()*,;"), ""))


def fingerprint(*fields: str | None) -> str:
    """A stable identity from stable fields: ``urn:sha256:`` and 32 hex digits.

    Fields are joined with a separator that cannot occur in text, so
    ("ab", "c") and ("a", "bc") differ.
    """
    joined = "\x1f".join(field or "" for field in fields)
    return "urn:sha256:" + hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def content_hash(*fields: str | None) -> str:
    """Hash of an entry's visible content, to tell an edit from a new post (hex str)."""
    joined = "\x1f".join(field or "" for field in fields)
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:32]
