"""Host keys for per-host fairness. The only module that imports publicsuffixlist.

Requests are limited per *registrable domain* (seed 000: "per host or
registrable domain"): ``a.blogspot.com`` and ``b.blogspot.com`` are two
publishers, while ``feeds.example.co.uk`` and ``www.example.co.uk`` are one.
The Public Suffix List comes bundled with the package; nothing is
downloaded at run time. An IP address is its own key, written as a dotted
quad whichever spelling the URL used (``127.1``, ``2130706433``).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from functools import cache, lru_cache

from publicsuffixlist import PublicSuffixList

from syndicator.urls import hostname


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
    if _NUMERIC.fullmatch(host):
        try:  # 127.1, 0x7f.0.0.1 or 2130706433: the resolver reads them as 127.0.0.1, and so does the key
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            pass
    return _suffixes().privatesuffix(host) or host


#: A host made of numbers (decimal, octal or 0x hexadecimal) and dots: maybe an IPv4 address in
#: one of the spellings inet_aton(3) and the resolver accept besides the dotted quad.
_NUMERIC = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}")
