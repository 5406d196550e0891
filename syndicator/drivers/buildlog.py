"""What a build tells the person running it: failures, hosts left alone, stale copies.

Log lines go to the ``syndicator`` logger; the CLI formats them. Levels are
chosen so a cron job mails only what changed: a failure seen in this build
is a warning or an error, one carried over from an earlier build is info
(``-v``), and a bug of ours is an error with its traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from datetime import datetime

from syndicator.configtypes import Config
from syndicator.errors import InternalError
from syndicator.failures import kind_of
from syndicator.fetch.hosts import host_key
from syndicator.health import SiteStatus
from syndicator.model import NotRequested, Observation, SourceState
from syndicator.poll import intervals, schedule
from syndicator.poll.transitions import age_text

log = logging.getLogger("syndicator")


def log_failure(observation: Observation) -> None:
    """Log a request's failure: at info level (``-v``), an internal error with its traceback as an error."""
    error = observation.failure
    if isinstance(error, InternalError):
        log.error(
            "%s: %s; please report this bug with the traceback below\n%s",
            error.url,
            error.message,
            error.details.rstrip(),
        )
    elif error is not None:
        log.info("%s: %s", error.url, error.message)


def log_followed(observation: Observation, before: SourceState | None, names: Sequence[str]) -> None:
    """Say that a site's feed URL answered with an HTML page and the feed it advertises was followed.

    A warning when this build found that feed (the user should put its URL
    in sites.yaml, unless it failed too), info (``-v``) when an earlier
    build already said so.

    Args:
        before: the source's state before this build, or None.
        names: the names of the sites that use the source.
    """
    feed = observation.followed
    if feed is None:
        return
    level = logging.INFO if before is not None and before.discovered == feed else logging.WARNING
    advice = "it failed too (below)" if observation.failure is not None else "put that URL in sites.yaml"
    log.log(
        level,
        "site %s: its feed URL %s is an HTML page; followed the feed it advertises, %s: %s",
        ", ".join(repr(name) for name in names),
        observation.request.source,
        feed,
        advice,
    )


class HostTrouble:
    """Per host: the sources the pool did not request, and the failure that stopped the host."""

    def __init__(self) -> None:
        self.skipped: dict[str, list[str]] = {}
        self.last: dict[str, Observation] = {}

    def note(self, observation: Observation) -> None:
        """Remember a skipped source, or a failure that counts against its host."""
        host = host_key(observation.request.url)
        if isinstance(observation.result, NotRequested):
            self.skipped.setdefault(host, []).append(observation.request.source)
        elif observation.verdict != "ok":
            self.last[host] = observation

    def warn(self, config: Config) -> None:
        """One warning per host that was stopped, naming why and the sites not requested."""
        for host, sources in self.skipped.items():
            log_skipped(host, sources, self.last.get(host), config)


def log_skipped(host: str, sources: list[str], last: Observation | None, config: Config) -> None:
    """One warning for a host the pool stopped requesting from: why, and the sites not requested.

    Args:
        sources: configured URLs of the host's sources skipped in this build.
        last: the host's last failed observation, which stopped it (429,
            Retry-After, or the failure that tripped the breaker).
    """
    error = last.failure if last is not None else None
    answer = error.message if error is not None else "an error"
    wait = last.retry_after if last is not None else None
    until = "until the next build"
    if last is not None and last.verdict == "stop" and wait is not None:
        why = f"asked to wait {wait:.0f} s ({answer})"
        until = f"for {intervals.duration_text(min(wait, intervals.RETRY_AFTER_CEILING))}"
    elif last is not None and last.verdict == "stop":
        why = f"answered {answer} without Retry-After"
    else:
        why = (
            f"failed {config.host_breaker} times in a row (last: {answer}), "
            f"tripping its breaker (host_breaker: {config.host_breaker})"
        )
    unique = set(sources)
    sites = sum(1 for site in config.sites if site.feed in unique)
    feeds = f" ({len(unique)} feed{'s' * (len(unique) != 1)})" if len(unique) != sites else ""
    log.warning("host %s %s: %d site%s%s not requested %s", host, why, sites, "s" * (sites != 1), feeds, until)


def log_health(statuses: list[SiteStatus], now: datetime, said: Collection[str] = ()) -> int:
    """Log failing sites; return how many use a last-known-good copy (int).

    A site that failed in this build is an error (never worked, seed 004) or
    a warning naming the age of its last good copy, unless its source is in
    ``said``: this build said that it started failing (poll.transitions). A
    site still failing from an earlier build, not requested in this one
    (backing off, or on hold), is logged at info level only, so a cron job
    is not mailed the same failure every hour.
    """
    stale_copies = 0
    for status in statuses:
        state = status.state
        if state is None or state.error_kind is None:
            continue
        stale_copies += state.last_success is not None
        if state.url in said:
            continue
        now_failed = state.last_attempt == now
        kind = kind_of(state.error_kind)
        problem = state.error_message
        if kind.advice:
            problem = f"{problem}; {kind.advice}"
        if schedule.on_hold(state):
            problem = f"{problem}, it is not requested again until its entry in sites.yaml changes"
        if state.last_success is None:
            log.log(
                logging.ERROR if now_failed else logging.INFO,
                "site %r has never been fetched successfully and contributes nothing: %s (%s)",
                status.site.name,
                problem,
                state.fetch_url,
            )
        else:
            log.log(
                logging.WARNING if now_failed else logging.INFO,
                "site %r failed (%s); using its last good copy from %s ago",
                status.site.name,
                problem,
                age_text(now - state.last_success),
            )
    return stale_copies
