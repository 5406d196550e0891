"""Decide what one observation means for a source. Pure: values in, values out.

``fetch | parse | decide | store``: this is the *decide* step. Given the
stored state and what this build saw, it returns the new state and whether
the snapshot is replaced. Rules (seed 000):

* a 200 that parsed replaces the snapshot and takes the response's
  validators (an absent one is cleared);
* a 200 whose body hash equals the stored one is "unchanged": the snapshot
  is kept and not parsed again, but new validators are still taken;
* a 304 is a success: the snapshot is kept, new validators are taken and
  omitted ones kept;
* validators are bound to the URL that answered;
* a permanent redirect (every hop 301/308) moves the fetch URL; the
  configured URL stays the identity;
* the failure count resets only on a parsed 200, an unchanged 200 or a 304.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from .model import Failed, Fetched, FetchRequest, FetchResult, NotModified, ParsedFeed, SourceState


@dataclass(frozen=True)
class Observation:
    """What one fetch (and parse) of a source produced.

    Attributes:
        request: what was asked.
        result: Fetched, NotModified or Failed (a parse failure is Failed too).
        parsed: the parsed feed when a 200 body was parsed, else None.
        body_hash: hash of the 200 body (hex str), else None.
        unchanged: True when the 200 body equals the stored one (not parsed).
        parse_seconds: CPU time spent parsing, seconds.
    """

    request: FetchRequest
    result: FetchResult
    parsed: ParsedFeed | None = None
    body_hash: str | None = None
    unchanged: bool = False
    parse_seconds: float = 0.0

    @property
    def outcome(self) -> str:
        """One word for reports: "fetched", "unchanged", "not_modified" or "failed"."""
        if isinstance(self.result, Failed):
            return "failed"
        if isinstance(self.result, NotModified):
            return "not_modified"
        return "unchanged" if self.unchanged else "fetched"


def new_state(state: SourceState, observation: Observation, now: datetime) -> SourceState:
    """The source's state after ``observation`` (see module docstring).

    Args:
        state: the stored state (a fresh SourceState for a new source).
        observation: what this build saw.
        now: the build's clock (UTC).
    Returns:
        the new SourceState; times are ``now`` where they change.
    """
    result = observation.result
    state = replace(state, last_attempt=now)
    if isinstance(result, Failed):
        return replace(state, failures=state.failures + 1, error_kind=result.error.kind,
                       error_message=result.error.message)
    state = replace(state, fetch_url=result.permanent_url or state.fetch_url, failures=0,
                    error_kind=None, error_message=None, last_success=now)
    if isinstance(result, NotModified):
        return replace(state, validators_url=result.url, etag=result.etag or state.etag,
                       last_modified=result.last_modified or state.last_modified)
    assert isinstance(result, Fetched)
    state = replace(state, validators_url=result.url, etag=result.etag,
                    last_modified=result.last_modified, body_size=len(result.body))
    if observation.unchanged or observation.parsed is None:
        return state
    return replace(state, body_hash=observation.body_hash, last_change=now,
                   title=observation.parsed.title or state.title,
                   link=observation.parsed.link or state.link)
