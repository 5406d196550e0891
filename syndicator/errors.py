"""The exception tree.

Everything syndicator raises on purpose derives from :class:`SyndicatorError`.
The CLI turns these into one-line messages and the exit code of the class;
any other exception is a bug and shows a traceback.

Feed-level errors (:class:`FeedError` and below) are *values* inside the
pipeline: a fetch or parse failure is recorded for its source and the build
goes on. Each carries the URL and a stable ``kind`` string (the failure
class used for backoff and shown on the sites page), in the spirit of
miniflux's classified errors.
"""

from __future__ import annotations


class SyndicatorError(Exception):
    """Base of every error syndicator raises on purpose."""

    exit_code = 1


class ConfigError(SyndicatorError):
    """sites.yaml (or a command-line option) is invalid. Exit code 2.

    The message names the file, the line (when known) and the field.
    """

    exit_code = 2


class CacheLockedError(SyndicatorError):
    """Another build holds the lock on the cache folder. Exit code 4."""

    exit_code = 4


class StoreError(SyndicatorError):
    """The state database cannot be used (newer schema, corrupt file). Exit code 5."""

    exit_code = 5


class EmptyBuildError(SyndicatorError):
    """The build collected zero entries; nothing was published. Exit code 3.

    Almost always the build machine lost its network: publishing an empty
    page would replace a working site with a blank one (seed 004).
    """

    exit_code = 3


class FeedError(SyndicatorError):
    """One source failed to fetch or parse.

    Attributes:
        url: the feed URL that failed (str).
        kind: the stable failure class, one of :data:`KINDS`.
    """

    kind = "error"

    def __init__(self, url: str, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.url = url
        if kind is not None:
            self.kind = kind

    @property
    def message(self) -> str:
        """The human-readable message without the URL (str)."""
        return str(self.args[0]) if self.args else self.kind


class FetchError(FeedError):
    """The HTTP exchange failed: timeout, network, TLS, status, size, redirects."""

    kind = "network"


class HTTPStatusError(FetchError):
    """The server answered with a status that is not 200 or 304.

    Attributes:
        status: the HTTP status code (int).
        retry_after: seconds the server asked us to wait (float or None),
            from ``Retry-After`` (RFC 9110 section 10.2.3).
    """

    def __init__(self, url: str, status: int, retry_after: float | None = None) -> None:
        super().__init__(url, f"HTTP {status}", kind=status_kind(status))
        self.status = status
        self.retry_after = retry_after


class ParseError(FeedError):
    """The body is not a feed syndicator can read."""

    kind = "parse"


class NotAFeedError(ParseError):
    """The URL answered with an HTML page instead of a feed.

    Attributes:
        alternates: feed URLs the page advertises with ``<link rel="alternate">``
            (list of absolute URLs), so the user can fix sites.yaml in one step.
    """

    kind = "not_a_feed"

    def __init__(self, url: str, alternates: list[str] | None = None) -> None:
        self.alternates = list(alternates or [])
        if self.alternates:
            message = ("an HTML page, not a feed; it advertises " + ", ".join(self.alternates)
                       + ": use one as the site's feed in sites.yaml")
        else:
            message = "an HTML page, not a feed, and it advertises no feed"
        super().__init__(url, message)


#: Every failure class a source can be in, with the meaning shown to users.
KINDS = {
    "timeout": "timed out",
    "network": "connection failed",
    "tls": "TLS error",
    "too_large": "response too large",
    "redirect": "too many redirects or a redirect loop",
    "http_401": "unauthorized (401/403)",
    "http_404": "not found (404)",
    "http_410": "gone (410)",
    "http_429": "rate limited (429)",
    "http_5xx": "server error (5xx)",
    "http_other": "unexpected HTTP status",
    "parse": "not a valid feed",
    "not_a_feed": "an HTML page, not a feed",
}


def status_kind(status: int) -> str:
    """Map an HTTP status code (int) to its failure class (str, a key of KINDS)."""
    if status in (401, 403):
        return "http_401"
    if status == 404:
        return "http_404"
    if status == 410:
        return "http_410"
    if status == 429:
        return "http_429"
    if 500 <= status <= 599:
        return "http_5xx"
    return "http_other"
