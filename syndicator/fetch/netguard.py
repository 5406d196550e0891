"""Where a URL learned from the network may lead: the guard against private networks. Stdlib only.

A planet built in CI or on a cloud VM sits next to services no feed
publisher should reach through it: the cloud's metadata service
(169.254.169.254), a database on 10.x, the machine's own loopback ports.
What a remote server tells us is not trusted; what the maintainer wrote is.

* **Trusted**: a URL on the host of the URL it was learned from as sites.yaml
  (or the command line) names it: the configured feed, a webhook or a hub of
  sites.yaml, the URL given to ``add`` or ``discover``. Any address it
  resolves to is fine, and so is a redirect, advertised feed or hub on the
  same host (the host compared as written, lower case, any port): a test
  planet on 127.0.0.1 keeps working.
* **Learned** (a redirect target, a feed a page advertises, a feed's hub,
  each on another host): it may reach only public addresses, unless
  sites.yaml says ``allow_private_networks: true``. Refused: what Python's
  :mod:`ipaddress` does not call global (loopback, RFC 1918 private,
  link-local, shared, documentation, 0.0.0.0 and the rest of "this network"),
  multicast and reserved ranges, with IPv4 inside IPv6 (``::ffff:a.b.c.d``,
  NAT64 ``64:ff9b::/96``, 6to4) judged as the IPv4 it carries, and the name
  ``localhost`` (RFC 6761 section 6.3).
* The addresses judged are those actually connected to: every address a
  learned name resolves to is screened just before the socket connects to it
  (:func:`screen`, from :mod:`deadline`), and a pooled connection is
  screened by its peer before reuse, so a DNS answer that changes between a
  check and the connection (a rebind) cannot slip through. A refused
  address is never connected to; another address of the same name may be.
* Through a proxy the connection is the proxy's (the environment's choice,
  trusted), so a learned name is resolved here and all its addresses
  screened before the request; the proxy resolves it again itself, which
  this cannot see.
* A URL with credentials (``user:password@``) learned from the network is
  never requested nor stored (:func:`has_credentials`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import threading
from collections.abc import Iterator

from syndicator import urls

#: NAT64's well-known prefix (RFC 6052 section 2.1): the last 32 bits are an IPv4 address.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_local = threading.local()


class PrivateAddress(OSError):
    """A connection to an address that is not public, refused before connecting.

    Attributes:
        host: the host name or literal being connected to (str).
        address: the refused address (str).
    """

    def __init__(self, host: str, address: str) -> None:
        shown = host if host == address else f"{host} ({address})"
        super().__init__(
            f"{shown[:200]} is not a public address: a URL learned from the network may not reach "
            "a private network (allow_private_networks in sites.yaml allows it)"
        )
        self.host = host
        self.address = address


def is_public(address: str) -> bool:
    """True if the IP address ``address`` (str) is globally reachable; False for anything else, never raises.

    IPv4 carried in IPv6 (mapped, NAT64, 6to4) is judged as that IPv4 address.
    """
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") names a link
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        carried = ip.ipv4_mapped or ip.sixtofour
        if carried is None and ip in _NAT64:
            carried = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if carried is not None:
            ip = carried
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def is_trusted(source: str, url: str) -> bool:
    """True if ``url`` is on the host of ``source``, the URL the maintainer wrote (same name, any port)."""
    host = urls.hostname(url)
    return bool(host) and host == urls.hostname(source)


def screened(source: str, url: str, allow_private: bool = False) -> bool:
    """True if the addresses ``url`` reaches must be public: learned while fetching ``source``, on
    another host, and private networks not allowed."""
    return not allow_private and not is_trusted(source, url)


def has_credentials(url: str) -> bool:
    """True if ``url`` carries a user or a password (``user:password@``; RFC 3986 section 3.2.1)."""
    parts = urls.split(url)
    return parts is not None and "@" in parts.netloc


def refusal(source: str, url: str, allow_private: bool = False) -> str | None:
    """Why ``url``, learned while fetching ``source``, may not be requested or kept, or None.

    The one check for discovery and for every URL learned from the network,
    made without DNS: credentials, or a host that is an IP literal (or
    ``localhost``) that is not public while :func:`screened`. A name is
    judged by what it resolves to when it is connected to (:func:`screen`).

    Args:
        source: the URL the maintainer wrote (sites.yaml, the command line).
        url: the URL learned (a redirect target, an advertised feed or hub).
        allow_private: sites.yaml's ``allow_private_networks``.
    Returns:
        a one-line reason without the credentials (str), or None. Never raises.
    """
    if has_credentials(url):
        return "a URL with credentials (user:password@) learned from the network is not followed"
    host = urls.hostname(url)
    if not screened(source, url, allow_private) or not host:
        return None
    if host == "localhost" or host.endswith(".localhost") or (_is_ip(host) and not is_public(host)):
        return str(PrivateAddress(host, host))
    return None


@contextlib.contextmanager
def screening(active: bool) -> Iterator[None]:
    """While inside, the calling thread's new connections reach public addresses only (if ``active``)."""
    kept = getattr(_local, "active", False)
    _local.active = active
    try:
        yield
    finally:
        _local.active = kept


def screen(host: str, address: str) -> None:
    """Refuse ``address`` (of ``host``) if the calling thread is :func:`screening` and it is not public.

    Raises:
        PrivateAddress: the address is not public.
    """
    if getattr(_local, "active", False) and not is_public(address):
        raise PrivateAddress(host, address)


def private_cause(error: BaseException | None) -> PrivateAddress | None:
    """The :class:`PrivateAddress` among ``error``'s causes, or None: requests and urllib3 wrap it in
    their own errors (as ``__cause__``, ``__context__``, MaxRetryError's ``reason``, or an argument of
    ProtocolError), at most 32 errors deep."""
    queue = [error]
    for _ in range(32):
        if not queue:
            return None
        current = queue.pop(0)
        if isinstance(current, PrivateAddress):
            return current
        if current is None:
            continue
        queue += [
            current.__cause__,
            current.__context__,
            getattr(current, "reason", None),
            *(arg for arg in current.args if isinstance(arg, BaseException)),
        ]
        queue = [item for item in queue if isinstance(item, BaseException)]
    return None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True
