"""When ``serve`` renders the planets, and the render: ``select | render | publish | announce``, as a build does.

Changes are debounced: each planet whose view changed is rendered :data:`RENDER_QUIET` seconds
after the last change, or :data:`RENDER_MAX_WAIT` seconds after the first
when changes keep coming. A render that fails (a template error, a full
disk) is logged and tried again :data:`RENDER_RETRY` seconds later; the
published site stays as it was. Only serve's loop uses a :class:`Rendering`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from syndicator.configtypes import Config
from syndicator.drivers.pipeline import publish_site
from syndicator.drivers.planets import templates_of
from syndicator.drivers.report import BuildReport
from syndicator.errors import EmptyBuildError, RenderError
from syndicator.metrics import Metrics
from syndicator.model import SourceState
from syndicator.state.store import Store

__all__ = ["RENDER_MAX_WAIT", "RENDER_QUIET", "RENDER_RETRY", "Rendering"]

log = logging.getLogger("syndicator")

#: Seconds of quiet after a change before the site is rendered.
RENDER_QUIET = 0.3
#: Seconds after the first unrendered change by which the site is rendered anyway.
RENDER_MAX_WAIT = 5.0
#: Seconds after a failed render (a template error, a full disk) before trying again.
RENDER_RETRY = 60.0


class Rendering:
    """The planets' renders for ``serve``: note changes (:meth:`changed`), render when :meth:`due`.

    One debounce serves every planet of the file (:meth:`Config.all_planets`); a render publishes each
    planet whose view changed: one of whose sites' feeds a change was noted for, or every planet after
    a change that names no feed (a start, sites.yaml read again). A planet whose render fails is tried
    again after :data:`RENDER_RETRY` seconds; the others are published meanwhile.

    Args:
        metrics: counts the renders and the time of the last one.
        clock: the current time (UTC), the render's ``now``.
        templates: a folder of templates overriding the bundled ones, or None.
    """

    def __init__(self, metrics: Metrics, clock: Callable[[], datetime], templates: Path | None) -> None:
        self._metrics = metrics
        self._clock = clock
        self._templates = templates
        self._dirty_since: float | None = None  # time.monotonic() of the first change not rendered
        self._last_change = 0.0
        self._render_after = 0.0
        self._sources: set[str] | None = set()  # the feeds changed since the last render; None: every planet

    @property
    def pending(self) -> bool:
        """True while a change is not rendered yet."""
        return self._dirty_since is not None

    def changed(self, source: str | None = None) -> None:
        """Note a change the pages show, of the feed ``source`` (its planets' views), or of every planet
        (None): render soon (debounced)."""
        moment = time.monotonic()
        self._last_change = moment
        if self._dirty_since is None:
            self._dirty_since = moment
        self._note(source)

    def outdated(self) -> None:
        """Note that the published sites may not show the state (at start): render every planet at once,
        no quiet waited for."""
        self._dirty_since = time.monotonic()
        self._sources = None

    def due(self) -> bool:
        """True when a render is due now: quiet long enough, or changes waiting too long (never during a retry wait)."""
        if self._dirty_since is None:
            return False
        moment = time.monotonic()
        if moment < self._render_after:
            return False
        return moment - self._last_change >= RENDER_QUIET or moment - self._dirty_since >= RENDER_MAX_WAIT

    def until_due(self, longest: float) -> float:
        """Seconds until a render is due (float), at most ``longest``: how long the loop may wait for events."""
        if self._dirty_since is None:
            return longest
        at = min(self._last_change + RENDER_QUIET, self._dirty_since + RENDER_MAX_WAIT)
        return max(0.0, min(longest, at - time.monotonic()))

    def render(self, config: Config, store: Store, states: Mapping[str, SourceState], final: bool = False) -> None:
        """select | render | publish | announce each planet of ``config`` whose view changed, as a build
        does (:func:`pipeline.publish_site`, once per planet); trouble is logged, never fatal.

        ``final``: serve is stopping: nothing is announced to hubs, and a failure is not tried again.
        """
        changed, self._sources, self._dirty_since = self._sources, set(), None
        failed = [
            planet
            for planet in config.all_planets()
            if (changed is None or not changed.isdisjoint(planet.listed_sources))
            and not self._render_one(planet, store, states, final)
        ]
        if failed and not final:
            self._render_after = time.monotonic() + RENDER_RETRY
            self._dirty_since = self._dirty_since or time.monotonic()
            for planet in failed:
                for source in planet.listed_sources:
                    self._note(source)

    def _note(self, source: str | None) -> None:
        """Add ``source`` (None: every planet) to the feeds whose planets the next render publishes."""
        if source is None:
            self._sources = None
        elif self._sources is not None:
            self._sources.add(source)

    def _render_one(self, config: Config, store: Store, states: Mapping[str, SourceState], final: bool) -> bool:
        """Publish one planet (:meth:`render`); False when it failed and is to be tried again."""
        started = time.monotonic()
        report = BuildReport(sites=len(config.sites), sources=len(config.sources))
        planet = f" {config.name}" if config.name else ""
        try:
            publish_site(
                config,
                store,
                states,
                self._clock(),
                templates_of(config, self._templates),  # a planet's own templates folder
                report,
                started,
                log_stale=False,
                announce=not final,
            )
        except EmptyBuildError:
            log.info("serve%s: no entries yet; nothing published", planet)
            return True
        except (RenderError, OSError) as error:  # OSError: report.json could not be written
            if final:
                log.error(
                    "serve%s: %s; the last changes were not published (the next start publishes them)", planet, error
                )
            else:
                log.error("serve%s: %s; trying again in %.0f s", planet, error, RENDER_RETRY)
            return False
        if report.rendered:
            self._metrics.renders.inc()
            self._metrics.last_render.set(time.time())
            log.info(
                "serve%s: published %d entries in %.2f s%s",
                planet,
                report.entries,
                time.monotonic() - started,
                " (stopping)" if final else "",
            )
        return True
