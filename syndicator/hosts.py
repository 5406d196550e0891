"""Host keys for per-host fairness. The only module that imports publicsuffixlist.

Requests are limited per *registrable domain* (seed 000: "per host or
registrable domain"): ``a.blogspot.com`` and ``b.blogspot.com`` are two
publishers, while ``feeds.example.co.uk`` and ``www.example.co.uk`` are one.
The Public Suffix List comes bundled with the package; nothing is
downloaded at run time. An IP address is its own key.
"""

from __future__ import annotations

import ipaddress
from functools import cache, lru_cache

from publicsuffixlist import PublicSuffixList

from .urls import hostname


@cache
def _suffixes() -> PublicSuffixList:
    """The bundled list, read on first use (a tenth of a second: a build with nothing due never needs it)."""
    return PublicSuffixList()


@lru_cache(maxsize=65536)
def host_key(url: str) -> str:
    """The fairness key of a URL: its registrable domain, else its host (str).

    ``https://a.b.example.co.uk/feed`` -> ``example.co.uk``;
    ``http://127.0.0.2:8080/x`` -> ``127.0.0.2``; a host that is itself a
    public suffix, or has no dot, keys as itself. Returns "" for a URL
    without a host or that cannot be read (:func:`urls.hostname`); never raises.
    """
    host = hostname(url).rstrip(".")
    if not host:
        return ""
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    return _suffixes().privatesuffix(host) or host
