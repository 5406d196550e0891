"""The exception tree.

Everything syndicator raises on purpose derives from :class:`SyndicatorError`.
The CLI turns these into one-line messages and the exit code of the class;
any other exception is a bug and shows a traceback.

Feed-level errors (:class:`FeedError` and below) are *values* inside the
pipeline: a fetch or parse failure is recorded for its source and the build
goes on. Each carries the URL and a stable ``kind`` string, a row of the
one failure table in :mod:`syndicator.failures`, in the spirit of
miniflux's classified errors.
"""

from __future__ import annotations

from syndicator.failures import status_kind


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


class OutputLockedError(SyndicatorError):
    """Another build is publishing into the same output folder. Exit code 4."""

    exit_code = 4


class RenderError(SyndicatorError):
    """A template is missing or broken, or the output folder cannot be written. Exit code 6."""

    exit_code = 6


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
        kind: the stable failure kind, a key of :data:`syndicator.failures.KINDS`.
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
            message = (
                "an HTML page, not a feed; it advertises "
                + ", ".join(self.alternates)
                + ": use one as the site's feed in sites.yaml"
            )
        else:
            message = "an HTML page, not a feed, and it advertises no feed"
        super().__init__(url, message)


class InternalError(FeedError):
    """An exception syndicator did not foresee while handling one source: a bug.

    The source is recorded as failed with kind ``internal`` and the build
    goes on; the CLI then exits with :class:`InternalErrorsExit`'s code.

    Attributes:
        details: the formatted traceback (str), for the log.
    """

    kind = "internal"

    def __init__(self, url: str, error: BaseException, details: str) -> None:
        super().__init__(url, f"internal error: {type(error).__name__}: {' '.join(str(error).split())[:200]}")
        self.details = details


class InternalErrorsExit(SyndicatorError):
    """The site was published, but some sources hit an internal error. Exit code 7.

    CI notices (a non-zero code) while the site stays fresh.
    """

    exit_code = 7


class FailingSitesExit(SyndicatorError):
    """More sites are failing than the command was told to accept (``--fail-on``; ``status --failing``:
    none). Exit code 8.

    ``status`` prints what it shows first, and ``build`` publishes first: a cron job or CI notices
    (a non-zero code) while the site stays fresh.
    """

    exit_code = 8
