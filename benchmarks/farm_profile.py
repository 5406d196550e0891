"""What each synthetic feed of the load-test farm does, decided once from a seed.

A `FarmProfile` gives the share (0.0 to 1.0) of feeds that misbehave in each
way. `assign_traits(profile, feeds)` turns the shares into exact counts (a share
of 1% of 1,000 feeds is exactly 10 feeds) and picks which feeds, deterministically
from `profile.seed`. Behaviours are exclusive (a feed is at most one of them);
the format (RSS or Atom), gzip capability and body padding are independent flags.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass, fields


class Behaviour(enum.IntEnum):
    """How a feed answers a GET for its own URL `/feeds/<j>.xml`."""

    NORMAL = 0  # strong ETag + Last-Modified, honours conditional requests
    NO_VALIDATORS = 1  # 200 with neither ETag nor Last-Modified, never 304
    CHANGING_ETAG = 2  # a new ETag on every response, same body; Last-Modified kept
    REDIRECT_301 = 3  # 301 to /feeds/moved/<j>.xml, which serves the feed
    REDIRECT_302 = 4  # 302 to /feeds/temp/<j>.xml, which serves the feed
    INVALID_HTML = 5  # 200 with an HTML error page, no validators
    INVALID_TRUNCATED = 6  # 200 with the first half of the XML, normal validators
    THROTTLE_429 = 7  # 429 Too Many Requests with Retry-After (seconds)
    THROTTLE_503 = 8  # 503 Service Unavailable with Retry-After (seconds)


@dataclass(frozen=True)
class FarmProfile:
    """Shares of feeds per behaviour and the farm's knobs.

    Every `*_share` is a fraction of all feeds in [0.0, 1.0]; the exclusive
    behaviour shares (no_validators .. throttle) must add up to at most 1.0.
    """

    seed: int = 0  # drives every choice below, the latency draws and touch()
    items: int = 10  # items per document (the newest ones)
    atom_share: float = 0.2  # Atom 1.0 instead of RSS 2.0
    gzip_share: float = 0.5  # gzip body when the request has Accept-Encoding: gzip
    no_validators_share: float = 0.02
    changing_etag_share: float = 0.02
    redirect_301_share: float = 0.01
    redirect_302_share: float = 0.01
    invalid_share: float = 0.01  # half HTML error pages, half truncated XML
    throttle_share: float = 0.01  # half 429, half 503
    retry_after_s: int = 120  # Retry-After of throttled answers, seconds
    latency_ms: tuple[float, float] = (0.0, 20.0)  # per request, uniform in [lo, hi] ms
    padding_share: float = 1.0  # feeds whose body carries padding_bytes extra
    padding_bytes: int = 0  # bytes of incompressible-ish XML comment per padded body

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.endswith("_share") and not 0.0 <= value <= 1.0:
                raise ValueError(f"{f.name} must be in [0, 1], got {value!r}")
        if sum(share for _, share in self.behaviour_shares()) > 1.0 + 1e-9:
            raise ValueError("behaviour shares add up to more than 1.0")
        lo, hi = self.latency_ms
        if not 0.0 <= lo <= hi:
            raise ValueError(f"latency_ms must be (lo, hi), 0 <= lo <= hi: {self.latency_ms}")
        if self.items < 1 or self.padding_bytes < 0 or self.retry_after_s < 0:
            raise ValueError("items must be >= 1, padding_bytes and retry_after_s >= 0")

    def behaviour_shares(self) -> list[tuple[str, float]]:
        """(name, share) of each exclusive behaviour group, in assignment order."""
        return [
            ("no_validators", self.no_validators_share),
            ("changing_etag", self.changing_etag_share),
            ("redirect_301", self.redirect_301_share),
            ("redirect_302", self.redirect_302_share),
            ("invalid", self.invalid_share),
            ("throttle", self.throttle_share),
        ]


# Flag bits of FeedTraits.flags.
ATOM = 1
GZIP = 2
PADDED = 4

_GROUPS: dict[str, tuple[Behaviour, ...]] = {
    "no_validators": (Behaviour.NO_VALIDATORS,),
    "changing_etag": (Behaviour.CHANGING_ETAG,),
    "redirect_301": (Behaviour.REDIRECT_301,),
    "redirect_302": (Behaviour.REDIRECT_302,),
    "invalid": (Behaviour.INVALID_HTML, Behaviour.INVALID_TRUNCATED),
    "throttle": (Behaviour.THROTTLE_429, Behaviour.THROTTLE_503),
}


@dataclass(frozen=True)
class FeedTraits:
    """Per-feed behaviour codes and flag bits, indexed by feed number j."""

    behaviour: bytes  # Behaviour value of feed j at index j
    flags: bytes  # ATOM | GZIP | PADDED bits of feed j at index j

    def of(self, j: int) -> tuple[Behaviour, int]:
        """(behaviour, flags) of feed `j`."""
        return Behaviour(self.behaviour[j]), self.flags[j]

    def counts(self) -> dict[str, int]:
        """Number of feeds per behaviour name and per flag ('atom', 'gzip', 'padded')."""
        out = {b.name.lower(): self.behaviour.count(b) for b in Behaviour}
        for name, bit in (("atom", ATOM), ("gzip", GZIP), ("padded", PADDED)):
            out[name] = sum(1 for f in self.flags if f & bit)
        return out


def assign_traits(profile: FarmProfile, feeds: int) -> FeedTraits:
    """Pick each feed's behaviour and flags: exact counts, deterministic from the seed."""
    rng = random.Random(profile.seed)
    order = list(range(feeds))
    rng.shuffle(order)
    behaviour = bytearray(feeds)
    start = 0
    for name, share in profile.behaviour_shares():
        count = round(share * feeds)
        variants = _GROUPS[name]
        for k, j in enumerate(order[start : start + count]):
            behaviour[j] = variants[k % len(variants)]
        start += count
    flags = bytearray(feeds)
    for bit, share in (
        (ATOM, profile.atom_share),
        (GZIP, profile.gzip_share),
        (PADDED, profile.padding_share if profile.padding_bytes else 0.0),
    ):
        for j in rng.sample(range(feeds), round(share * feeds)):
            flags[j] |= bit
    return FeedTraits(bytes(behaviour), bytes(flags))
