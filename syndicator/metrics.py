"""What ``syndicator serve`` measures, for ``GET /metrics`` (the Prometheus text format).

The figures seed 000 asks a poller to watch, and seed 003 a subscriber:
due lag (how late a fetch starts against its schedule), fetches by outcome
and failure kind, the share of not-modified answers, bytes downloaded and
saved by them, parse time, new entries per fetch, throttled hosts, queue
depth, push notifications by verdict and live leases. Instruments live
in a registry of their own (one per serve process; tests make several),
written by the serve loop and read by the HTTP threads; prometheus_client
makes both safe.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from syndicator.model import Decision, Failed, Fetched, NotModified, NotRequested, Observation

__all__ = ["CONTENT_TYPE", "Metrics"]

CONTENT_TYPE = CONTENT_TYPE_LATEST
_TEXT = "text/plain; charset=utf-8"
#: Due lag buckets, seconds: a second late to a day late.
_LAG_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 86400)
_PARSE_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
_NEW_BUCKETS = (0, 1, 2, 5, 10, 20, 50, 100)
#: Verdicts a notification can get (``syndicator_push_notifications_total{verdict}``): ``accepted`` when
#: the handler committed it to the inbox, then ``stored``, ``duplicate`` (the exact body already processed),
#: ``replay`` (only older versions of stored entries: nothing changed), ``unparsable`` or ``failed`` (a bug or a
#: store error while processing it) when the loop read it.
VERDICTS = (
    "accepted",
    "stored",
    "duplicate",
    "replay",
    "bad_signature",
    "unsigned",
    "unknown_callback",
    "too_large",
    "unparsable",
    "failed",
)


class Metrics:
    """The instruments of one serve process; see the module docstring.

    Attributes are prometheus_client instruments; :meth:`fetched` and
    :meth:`notification` are the loop's ways to record, :meth:`text` the
    exposition.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._fetch_instruments(self.registry)
        self._push_instruments(self.registry)
        self._site_instruments(self.registry)
        self._planet_labels: set[str] = set()
        self._worker_instruments(self.registry)
        self._answered = 0
        self._not_modified = 0

    def _fetch_instruments(self, r: CollectorRegistry) -> None:
        """The poller's figures (seed 000): due lag, fetches, 304 share, bytes, parse time, new entries, queue."""
        self.due_lag = Histogram(
            "syndicator_due_lag_seconds", "Seconds a fetch started after it was due", buckets=_LAG_BUCKETS, registry=r
        )
        self.fetches = Counter(
            "syndicator_fetches", "Fetches by outcome and failure kind", ["outcome", "kind"], registry=r
        )
        self.not_modified_share = Gauge(
            "syndicator_not_modified_share", "Share of answered fetches that were 304 Not Modified", registry=r
        )
        self.downloaded = Counter("syndicator_downloaded_bytes", "Feed body bytes downloaded", registry=r)
        self.saved = Counter(
            "syndicator_saved_bytes", "Body bytes not downloaded thanks to 304 (the last body's size)", registry=r
        )
        self.parse_seconds = Histogram(
            "syndicator_parse_seconds", "CPU seconds parsing one feed document", buckets=_PARSE_BUCKETS, registry=r
        )
        self.new_entries = Histogram(
            "syndicator_new_entries", "New entries found by one fetch or push", buckets=_NEW_BUCKETS, registry=r
        )
        self.throttled_hosts = Gauge(
            "syndicator_throttled_hosts",
            "Hosts that asked us to slow down (429, 503, Retry-After) and wait",
            registry=r,
        )
        self.queue_depth = Gauge("syndicator_queue_depth", "Sources due and not yet fetched", registry=r)
        self.in_flight = Gauge("syndicator_fetches_in_flight", "Fetches running", registry=r)

    def _push_instruments(self, r: CollectorRegistry) -> None:
        """The subscriber's figures (seed 003): notifications by verdict (each verdict shown from 0), leases, hubs."""
        self.notifications = Counter(
            "syndicator_push_notifications", "WebSub notifications by verdict", ["verdict"], registry=r
        )
        self.live_leases = Gauge(
            "syndicator_live_leases", "WebSub subscriptions with a verified, running lease", registry=r
        )
        self.push_healthy = Gauge(
            "syndicator_push_healthy_sources",
            "Sources whose push is healthy (polled on the heartbeat only)",
            registry=r,
        )
        self.hub_requests = Counter(
            "syndicator_hub_requests", "Requests to hubs by mode and result", ["mode", "result"], registry=r
        )
        for verdict in VERDICTS:
            self.notifications.labels(verdict)

    def _site_instruments(self, r: CollectorRegistry) -> None:
        """The site's figures: renders, the last one's time, configured sources."""
        self.renders = Counter("syndicator_renders", "Sites rendered and published", registry=r)
        self.last_render = Gauge(
            "syndicator_last_render_timestamp_seconds", "When the site was last published (Unix time)", registry=r
        )
        self.sources = Gauge("syndicator_sources", "Configured sources", registry=r)
        # Many planets from one poller (docs/planets.md): one series per planet, not per source.
        self.planet_sources = Gauge(
            "syndicator_planet_sources",
            "Configured sources of each planet (sources shared count in each)",
            ["planet"],
            registry=r,
        )
        self.shared_sources = Gauge(
            "syndicator_shared_sources", "Sources listed by more than one planet, fetched once for all", registry=r
        )

    def set_planets(self, sources: Mapping[str, int], shared: int) -> None:
        """Set the planets' gauges: ``sources`` {planet name: its configured sources}, ``shared`` the
        sources more than one planet lists; a planet no longer named loses its series."""
        for labels in list(self._planet_labels - set(sources)):
            self.planet_sources.remove(labels)
        for planet, count in sources.items():
            self.planet_sources.labels(planet).set(count)
        self._planet_labels = set(sources)
        self.shared_sources.set(shared)

    def _worker_instruments(self, r: CollectorRegistry) -> None:
        """A worker's figures: claim time, sources claimed, dead leases ended."""
        self.claim_seconds = Histogram(
            "syndicator_claim_seconds",
            "Seconds one claim of due sources took (worker)",
            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30),
            registry=r,
        )
        self.claimed = Counter("syndicator_claimed_sources", "Sources claimed with a lease (worker)", registry=r)
        self.lease_expiries = Counter(
            "syndicator_lease_expiries",
            "Dead leases (a worker killed or stalled) ended by this worker's claims",
            registry=r,
        )

    def fetched(self, observation: Observation, decision: Decision) -> None:
        """Record one fetch (or skip) and what it led to."""
        result = observation.result
        if isinstance(result, NotRequested):
            self.fetches.labels("skipped", result.reason).inc()
            return
        if isinstance(result, Failed):
            self.fetches.labels("failed", result.error.kind).inc()
        elif isinstance(result, NotModified):
            self.fetches.labels("not_modified", "").inc()
            self._not_modified += 1
            self.saved.inc(decision.bytes_saved)
        elif isinstance(result, Fetched):
            self.fetches.labels("unchanged" if observation.unchanged else "fetched", "").inc()
            self.downloaded.inc(len(result.body))
        if not isinstance(result, Failed):
            self._answered += 1
            self.not_modified_share.set(self._not_modified / self._answered)
        if observation.parsed is not None:
            self.parse_seconds.observe(observation.parse_seconds)
        if decision.due_lag is not None:
            self.due_lag.observe(max(decision.due_lag, 0.0))
        if decision.changed or observation.parsed is not None:
            self.new_entries.observe(new_entries(decision))

    def notification(self, verdict: str) -> None:
        """Count one notification with its verdict (one of :data:`VERDICTS`)."""
        self.notifications.labels(verdict).inc()

    def text(self) -> bytes:
        """The exposition, in the Prometheus text format (bytes; content type :data:`CONTENT_TYPE`)."""
        return generate_latest(self.registry)


def new_entries(decision: Decision) -> int:
    """New entries of a decision: those of its last history check (0 when it added none)."""
    history = decision.state.history
    if not decision.changed or not history or history[-1].at != decision.state.last_attempt:
        return 0
    return history[-1].new_entries


def metrics_app(metrics: Metrics, healthy: Callable[[], tuple[bool, str]]) -> Callable[..., list[bytes]]:
    """A WSGI app serving ``GET /metrics`` (the exposition) and ``GET /healthz`` (200 ``ok``, else 503 and
    why, from ``healthy() -> (ok, one line)``); anything else is 404. Served by ``syndicator worker
    --listen``, and by serve's :class:`callbacks.App` for those two paths."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/metrics":
            body, status, kind = metrics.text(), "200 OK", CONTENT_TYPE
        elif path == "/healthz":
            ok, why = healthy()
            body, status, kind = why.encode() + b"\n", "200 OK" if ok else "503 Service Unavailable", _TEXT
        else:
            body, status, kind = b"not found\n", "404 Not Found", _TEXT
        start_response(
            status, [("Content-Type", kind), ("Content-Length", str(len(body))), ("Cache-Control", "no-store")]
        )
        return [body]

    return app
