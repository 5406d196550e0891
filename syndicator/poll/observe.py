"""fetch | parse, on the pool's worker threads: one due source in, one Observation out.

``observe`` never raises, neither for a feed's trouble (a Failed value with a
kind from the failure table) nor for a bug of ours (kind ``internal``, with
its traceback). An HTML page that advertises feeds is followed one hop: its
feeds are tried best first (:func:`discover.rank`), at most
:data:`discover.MAX_FOLLOWED` of them within the page's fetch deadline, until
one reads.
Nothing shared is mutated: each Observation is made from the request and
the source's state as it was before the build.

The pipeline imports this module only when some source is due, so a build
with nothing due never loads requests, feedparser or lxml.
"""

from __future__ import annotations

import hashlib
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime

from syndicator.configtypes import Config, is_local
from syndicator.errors import FeedError, FetchError, InternalError, NotAFeedError, ParseError
from syndicator.fetch import localfile, netguard
from syndicator.fetch.hosts import host_key
from syndicator.fetch.http import Fetcher
from syndicator.model import (
    Failed,
    Fetched,
    FetchRequest,
    FetchResult,
    NotModified,
    NotRequested,
    Observation,
    SourceState,
)
from syndicator.parse.discover import MAX_FOLLOWED
from syndicator.parse.feed import parse_feed
from syndicator.poll.decide import snapshot_hash
from syndicator.poll.pool import HostPool, Skipped

__all__ = ["Job", "discover", "internal", "job_for", "observe", "observe_all"]


@dataclass(frozen=True)
class Job:
    """One due source for the pool: the request and the source's state before the build (None: never fetched)."""

    request: FetchRequest
    state: SourceState | None


def job_for(url: str, state: SourceState | None, config: Config | None = None) -> Job:
    """The Job of the configured feed ``url``: its request carries the stored fetch URL and validators,
    the User-Agent, headers and timeout the sites of ``config`` naming it ask for, and a private feed's
    credential (:meth:`configtypes.Config.credential`); None: none of those."""
    user_agent, headers = config.request_for(url) if config is not None else (None, ())
    timeout = config.timeout_for(url) if config is not None else None
    credential = config.credential(url) if config is not None else None
    request = FetchRequest(
        source=url, url=url, user_agent=user_agent, headers=headers, timeout=timeout, credential=credential
    )
    if state is None:
        return Job(request, None)
    return Job(
        replace(
            request,
            url=state.fetch_url,
            etag=state.etag,
            last_modified=state.last_modified,
            validators_url=state.validators_url,
        ),
        state,
    )


def observe_all(
    pool: HostPool[Job, Observation], fetcher: Fetcher, jobs: list[Job], now: datetime, started: float
) -> Iterator[Observation]:
    """pool(observe): one Observation per job, in the order they end.

    A source the pool skipped (its host asked to stop, or its breaker
    opened) is NotRequested, with the Retry-After its host asked for.
    Local files (:mod:`localfile`) are read first, on the calling thread.
    ``started`` is the build's start (time.monotonic(), seconds).
    """
    for job in jobs:  # local files first, on this thread: no request, no host to be fair to
        if is_local(job.request.source):
            yield observe(job, fetcher, now, started)
    jobs = [job for job in jobs if not is_local(job.request.source)]
    waits: dict[str, float | None] = {}  # host -> the Retry-After it asked for
    results = pool.run(
        jobs,
        host=lambda job: host_key(job.request.url),
        work=lambda job: observe(job, fetcher, now, started),
        judge=lambda observation: observation.verdict,
    )
    for job, result in results:
        if isinstance(result, Skipped):
            yield Observation(job.request, NotRequested(result.reason, result.host, waits.get(result.host)))
            continue
        if result.verdict == "stop":
            waits[host_key(job.request.url)] = result.retry_after
        yield result


def observe(job: Job, fetcher: Fetcher, now: datetime, build_started: float) -> Observation:
    """fetch | parse (| follow the advertised feed | parse), on a worker thread.

    ``now`` is the build's clock (UTC); ``build_started`` its start
    (time.monotonic(), seconds). Never raises for a feed's trouble, nor
    for a bug of ours.
    """
    clock = time.monotonic()
    started = clock - build_started
    result: FetchResult | None = None
    try:
        if is_local(job.request.source):
            result = localfile.read(job.request, fetcher.max_bytes)
        else:
            result = fetcher.fetch(job.request)
        observation = _parse(job, result, now, started)
        feeds = _advertised(observation, fetcher.allow_private)
        if not feeds or not isinstance(result, Fetched):
            return _refused(observation, fetcher.allow_private)
        return _follow_any(job, result, feeds, fetcher, fetcher.deadline_of(job.request) + clock, now, started)
    except Exception as error:  # a bug of ours while handling this source: contained to it
        return internal(
            Observation(job.request, result or Failed(FeedError(job.request.source, ""), requests=0), started=started),
            error,
        )


def _advertised(observation: Observation, allow_private: bool) -> list[str]:
    """The feeds to try, best first, when the source answered with an HTML page that advertises feeds
    (those :func:`allowed_feeds` keeps, at most ``MAX_FOLLOWED``), else []."""
    error = observation.failure
    if not isinstance(error, NotAFeedError):
        return []
    return allowed_feeds(observation.request.source, error.alternates, allow_private)[:MAX_FOLLOWED]


def _follow_any(
    job: Job, page: Fetched, feeds: list[str], fetcher: Fetcher, deadline: float, now: datetime, started: float
) -> Observation:
    """The first of ``feeds`` (best first) that reads, else the best one's failure; one hop each.

    The next feed is tried after a failure that is the feed's own (an HTML
    page again, 404, a redirect loop, a document that does not parse...),
    while time is left before ``deadline`` (time.monotonic(), seconds: the
    page's fetch deadline); trouble of the host's (a timeout, a refused
    connection, a 5xx, a 429: :func:`failures.host_verdict`) ends the
    search, so a struggling server is not asked again. Every request is counted.
    """
    tried: list[Observation] = []
    for feed in feeds:
        budget = deadline - time.monotonic()
        if tried and budget <= 0:
            break
        tried.append(_follow(job, page, feed, fetcher, budget, now, started))
        if tried[-1].failure is None or tried[-1].verdict != "ok":
            break
    chosen = tried[-1] if tried[-1].failure is None else tried[0]  # else: the best feed's failure
    others = [observation.result for observation in tried if observation is not chosen]
    requests = sum(r.requests - page.requests for r in others if not isinstance(r, NotRequested))
    elapsed = sum(r.elapsed - page.elapsed for r in others if not isinstance(r, NotRequested))
    return _plus(chosen, requests, elapsed)


def _plus(observation: Observation, requests: int, elapsed: float) -> Observation:
    """``observation`` with ``requests`` more requests and ``elapsed`` more seconds counted."""
    result = observation.result
    if isinstance(result, NotRequested) or not requests:
        return observation
    return replace(
        observation, result=replace(result, requests=result.requests + requests, elapsed=result.elapsed + elapsed)
    )


def _refused(observation: Observation, allow_private: bool) -> Observation:
    """``observation``, or a ``private_address`` failure when its page advertises feeds that
    :func:`allowed_feeds` all refuses (the reason of the first)."""
    error = observation.failure
    if not isinstance(error, NotAFeedError) or not error.alternates:
        return observation
    source = observation.request.source
    if allowed_feeds(source, error.alternates, allow_private):
        return observation
    problem = netguard.refusal(source, error.alternates[0], allow_private) or ""
    refused = FetchError(
        source, f"the page advertises {len(error.alternates)} feeds, none followed: {problem}", kind="private_address"
    )
    result = observation.result
    # No body hash: the page is parsed again next time, so allow_private_networks set later takes effect.
    return replace(
        observation,
        body_hash=None,
        result=Failed(refused, result.elapsed, result.requests) if isinstance(result, Fetched | Failed) else result,
    )


def allowed_feeds(source: str, feeds: list[str], allow_private: bool) -> list[str]:
    """The advertised ``feeds`` of the page ``source`` led to, less those :func:`netguard.refusal` refuses
    (credentials; a private address on another host): the one place discovery applies the guard.
    The fetch of the one followed screens the addresses its name resolves to."""
    return [feed for feed in feeds if netguard.refusal(source, feed, allow_private) is None]


def _follow(
    job: Job, page: Fetched, feed: str, fetcher: Fetcher, budget: float, now: datetime, started: float
) -> Observation:
    """fetch | parse of one feed an HTML page advertises: one hop of discovery, never more.

    The feed's request carries the stored validators (bound to the feed's
    URL, so they go only there) and gets what is left of the page's
    deadline; every rule of fetch applies to it (URL, redirects, size). The
    observation is the feed's, under the source's request, with the page's
    permanent redirect (the fetch URL stays the page's) and both requests counted.
    """
    state = job.state
    request = replace(  # the source's own User-Agent, headers and timeout, the feed's URL
        job.request,
        url=feed,
        etag=state.etag if state else None,
        last_modified=state.last_modified if state else None,
        validators_url=state.validators_url if state else None,
        credential=job.request.credential,
    )
    result = fetcher.fetch(request, budget)
    if isinstance(result, Fetched | NotModified):
        result = replace(result, permanent_url=page.permanent_url)
    if not isinstance(result, NotRequested):
        result = replace(result, requests=result.requests + page.requests, elapsed=result.elapsed + page.elapsed)
    observation = _parse(Job(request, state), result, now, started)
    return replace(observation, request=job.request, followed=feed)


def _parse(job: Job, result: FetchResult, now: datetime, started: float) -> Observation:
    """The observation of a fetch result: parsed, unchanged (same body), or failed."""
    request, state = job.request, job.state
    if not isinstance(result, Fetched):
        return Observation(request, result, started=started)
    body_hash = hashlib.sha256(result.body).hexdigest()
    if state is not None and state.body_hash == body_hash:
        return Observation(request, result, body_hash=body_hash, unchanged=True, started=started)
    if state is not None and state.failed_body_hash == body_hash and state.failed_body_kind != "not_a_feed":
        # the same invalid body: not parsed again (a page is: it is cheap, and may now be followed)
        error = ParseError(
            request.source, state.failed_body_message or "not a readable feed", kind=state.failed_body_kind or "parse"
        )
        return Observation(
            request, Failed(error, result.elapsed, result.requests), body_hash=body_hash, started=started
        )
    clock = time.thread_time()
    try:
        parsed = parse_feed(result.body, result.url, result.headers, now)
    except FeedError as error:
        return Observation(
            request,
            Failed(error, result.elapsed, result.requests),
            body_hash=body_hash,
            parse_seconds=time.thread_time() - clock,
            started=started,
        )
    return Observation(
        request,
        result,
        parsed,
        body_hash,
        parse_seconds=time.thread_time() - clock,
        snapshot_hash=snapshot_hash(parsed.entries),
        started=started,
    )


def internal(observation: Observation, error: Exception) -> Observation:
    """``observation`` turned into a failure of kind ``internal`` carrying ``error``'s traceback."""
    details = "".join(traceback.format_exception(error))
    result = observation.result
    requests = 0 if isinstance(result, NotRequested) else result.requests
    failure = InternalError(observation.request.source, error, details)
    return Observation(observation.request, Failed(failure, requests=requests), started=observation.started)


def discover(url: str, now: datetime, timeout: float = 15.0) -> list[str]:
    """The feed URLs for ``url``: ``fetch | parse`` once, nothing stored.

    Returns:
        [the URL that answered] when it serves a feed, else the feed URLs
        its HTML page advertises (possibly none), in page order.
    Raises:
        FeedError: the URL cannot be fetched, or answers with something
            that is neither a feed nor an HTML page.
    """
    with Fetcher.for_config(None, timeout=timeout, retries=0) as fetcher:  # no sites.yaml: no contact URL
        result = fetcher.fetch(FetchRequest(source=url, url=url))
    if isinstance(result, Failed):
        raise result.error
    assert isinstance(result, Fetched)  # no validators were sent, and the pool was not used
    try:
        parse_feed(result.body, result.url, result.headers, now)
    except NotAFeedError as error:
        return allowed_feeds(url, error.alternates, fetcher.allow_private)
    return [result.url]
