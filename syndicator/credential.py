"""What a private feed sends to its own origin (docs/private-feeds.md): :class:`Credential`, a frozen
dataclass shared by config (which finds it), the schedule (its digest is part of a site's fingerprint)
and fetch (which sends it, only to the feed's origin: fetch/private.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

#: The kinds of credential a private feed may use (docs/private-feeds.md): an ``Authorization: Bearer``
#: token, HTTP basic authentication (RFC 7617), a request header, a query parameter.
CREDENTIAL_KINDS = ("bearer", "basic", "header", "query")
#: What a private site's source key adds to its feed URL: a fragment, which HTTP never sends (RFC 9110
#: section 4.2.5), naming the credential, so that a site of the same URL without it is another source.
PRIVATE_FRAGMENT = "#credentials="


@dataclass(frozen=True)
class Credential:
    """What a private feed sends to its own origin, from the environment or the secrets file.

    Attributes:
        name: the name sites.yaml gives it (``credentials: team``); shown in messages and source keys.
        kind: one of :data:`CREDENTIAL_KINDS`.
        key: the header name (``header``), the query parameter's name (``query``), the user
            (``basic``); "" for ``bearer``.
        secret: the token, password or value; never shown, logged or stored. The repr shows only
            :attr:`digest`, so the schedule's fingerprint of a site (schedule.site_fingerprints)
            changes when the secret does, and a feed held after a refusal is tried again.
    """

    name: str
    kind: str
    key: str = ""
    secret: str = field(default="", repr=False)

    def __repr__(self) -> str:
        return f"Credential(name={self.name!r}, kind={self.kind!r}, digest={self.digest!r})"

    @cached_property
    def digest(self) -> str:
        """A one-way digest of the credential (16 hex characters): PBKDF2-HMAC-SHA256 (RFC 8018),
        50,000 rounds salted with the name, so a weak password cannot be guessed back from a stored
        fingerprint in reasonable time."""
        material = f"{self.kind}\n{self.key}\n{self.secret}".encode()
        salt = f"syndicator credential {self.name}".encode()
        return hashlib.pbkdf2_hmac("sha256", material, salt, 50_000)[:8].hex()
