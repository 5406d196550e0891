"""The one failure table: every way a source can fail, and what follows from it.

Every stage reads this table and none keeps a list of its own (the model
is miniflux's single response handler that maps each error to one stable
key). A failure *kind* is a short stable string, stored in the state
database, written in report.json and shown by ``status``. Per kind:

* ``text``: what it means, for people;
* ``ladder``: how the schedule backs off (seed 000, "classified backoff"):

  - ``transient``: doubles from ``min_interval`` up to ``max_interval``
    (timeouts, connection and TLS errors, 5xx, 429, bodies too large or
    that do not decompress, protocol errors, redirect trouble, our own
    internal errors);
  - ``slow``: ``default_interval`` times 4 per failure up to 7 days (404 and
    unexpected statuses: the feed may have moved; 401/403: often a bot
    challenge or a rate wall that lifts on its own; a URL learned from the
    network that leads to a private network; check less often);
  - ``hold``: no automatic attempt until the site's entry in sites.yaml
    changes (410 Gone: the server says the feed is gone for good; a 401 or
    403 to a private feed's credential, which changes the entry's fingerprint
    when it changes: seed 000, "an authorization failure should stop
    automated retries until credentials change");
  - ``cadence``: the normal schedule, for a document that did not parse (the
    publisher may fix it); the identical body is not parsed again;

* ``host``: counts toward the host's circuit breaker in a build (the host's
  infrastructure is in trouble, not one feed);
* ``retry``: worth one more attempt within the same fetch;
* ``offline``: what a machine without network sees; an empty build whose
  every request failed this way blames the network;
* ``advice``: what the user can do, shown beside the error ("" if nothing).

:func:`host_verdict` turns a kind (and a Retry-After) into what the fetch
pool does with the host.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Ladder = Literal["transient", "slow", "hold", "cadence"]
Verdict = Literal["ok", "failed", "stop"]


@dataclass(frozen=True)
class FailureKind:
    """One row of the failure table (see the module docstring for the columns)."""

    name: str
    text: str
    ladder: Ladder
    host: bool = False
    retry: bool = False
    offline: bool = False
    advice: str = ""

    @property
    def hold(self) -> bool:
        """True when the source waits for its sites.yaml entry to change (bool)."""
        return self.ladder == "hold"


_TABLE = (
    FailureKind("timeout", "timed out", "transient", host=True, retry=True, offline=True),
    FailureKind("network", "connection failed", "transient", host=True, retry=True, offline=True),
    FailureKind("tls", "TLS error", "transient", host=True, offline=True),
    FailureKind(
        "too_large",
        "response too large",
        "transient",
        advice="raise max_bytes in sites.yaml if the feed really is this large",
    ),
    FailureKind(
        "corrupt_encoding",
        "compressed body that does not decompress",
        "transient",
        advice="tell the publisher: the server labels the body compressed (Content-Encoding) but sends something else",
    ),
    FailureKind(
        "unsupported_encoding",
        "compressed in a coding syndicator cannot undo",
        "transient",
        advice="tell the publisher: the server compresses the feed with a coding (Content-Encoding) that "
        "syndicator did not ask for; it asks for gzip or br",
    ),
    FailureKind(
        "private_address",
        "refused: a URL learned from the network leads to a private network",
        "slow",
        advice="a redirect, an advertised feed or a hub on another host leads to a loopback, private, "
        "link-local or reserved address; if that is intended (a planet of an intranet), set "
        "allow_private_networks: true in sites.yaml, else tell the publisher",
    ),
    FailureKind(
        "protocol",
        "an answer HTTP does not allow (a 304 to a request without validators)",
        "transient",
        advice="the server broke the HTTP protocol (a 304 Not Modified to an unconditional request is "
        "often a cache or CDN in front of the feed): tell the publisher",
    ),
    FailureKind("redirect", "too many redirects, a redirect loop or an unusable redirect target", "transient"),
    FailureKind(
        "http_401",
        "access denied (401/403)",
        "slow",
        advice="access denied: the server refuses syndicator (a login, a bot challenge or a rate "
        "wall); it is asked less and less often, at most a week apart; check the URL in a "
        "browser, or ask the publisher to let the syndicator User-Agent through",
    ),
    FailureKind(
        "credentials",
        "credentials refused (401/403)",
        "hold",
        advice="the server refused the private feed's credentials: check or renew them (the environment's "
        "SYNDICATOR_CREDENTIALS_<NAME>, or the secrets file); the feed is not asked again until they change",
    ),
    FailureKind(
        "http_404",
        "not found (404)",
        "slow",
        advice="the feed may have moved: `syndicator discover` on the site's home page finds its feeds",
    ),
    FailureKind("http_410", "gone (410)", "hold", advice="gone: remove or edit its entry in sites.yaml"),
    FailureKind("http_429", "rate limited (429)", "transient"),
    FailureKind("http_5xx", "server error (5xx)", "transient", host=True, retry=True),
    FailureKind("http_other", "unexpected HTTP status", "slow"),
    FailureKind(
        "file", "local file cannot be read", "cadence", advice="check the path in sites.yaml and the file's permissions"
    ),
    FailureKind("parse", "not a valid feed", "cadence"),
    FailureKind("not_a_feed", "an HTML page, not a feed", "cadence"),  # its message names the feeds to use
    FailureKind(
        "too_complex",
        "too costly to parse",
        "cadence",
        advice="the document passed the parse budget or a structural limit; it is tried again only when it changes",
    ),
    FailureKind(
        "internal",
        "internal error in syndicator",
        "transient",
        advice="a bug in syndicator: please report it with the traceback from the build's log",
    ),
)

#: Every failure kind by name.
KINDS: dict[str, FailureKind] = {kind.name: kind for kind in _TABLE}
#: The kind of anything unforeseen.
INTERNAL = KINDS["internal"]


def kind_of(name: str | None) -> FailureKind:
    """The table row of a kind name (str); an unknown name (say, from a newer
    version's database) reads as ``internal``, never raises."""
    return KINDS.get(name or "", INTERNAL)


def status_kind(status: int) -> str:
    """The failure kind of an HTTP status that is neither 200 nor 304 (int -> str)."""
    if status in (401, 403):
        return "http_401"
    if status in (404, 410, 429):
        return f"http_{status}"
    if 500 <= status <= 599:
        return "http_5xx"
    return "http_other"


def host_verdict(kind: str | None, retry_after: float | None = None) -> Verdict:
    """What a fetch's outcome means for its host in this build.

    Args:
        kind: the failure kind, or None for a success.
        retry_after: seconds from the answer's Retry-After header, if any.
    Returns:
        "stop": the host asked us to wait (a 429, or a 5xx with
        Retry-After; RFC 9110 section 10.2.3): no more requests to it in this
        build; "failed": a failure that counts toward the host's breaker;
        "ok": anything else.
    """
    if kind is None:
        return "ok"
    if kind == "http_429" or (kind == "http_5xx" and retry_after is not None):
        return "stop"
    return "failed" if kind_of(kind).host else "ok"
