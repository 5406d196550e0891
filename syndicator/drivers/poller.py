"""``serve``'s poller thread: one batch of due sources at a time through the poll path.

serve's loop plans a batch (:mod:`planner`) and hands it over
(:meth:`BatchPoller.put`); the poller runs it through the poll path
(:meth:`poll.path.Poller.observe`: ``observe = fetch | parse`` in the host
pool, with its workers, per-host limits and pacing, the host breaker),
puts each observation on the loop's event queue as
``("observation", observation)``, then ``("batch_done", [source URL...])``.
When serve stops, the batch is left within 0.2 s: fetches still running
are abandoned, and their sources stay due.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future
from typing import Any

from syndicator.configtypes import Config
from syndicator.poll.path import Poller
from syndicator.poll.pool import wait_first

__all__ = ["BatchPoller"]

log = logging.getLogger("syndicator")


class _Stopped(Exception):
    """Raised inside the pool's wait to abandon a batch when serve stops."""


class BatchPoller:
    """serve's poller; see the module docstring.

    Args:
        config: the configuration of the poll path; ``config`` is set again when sites.yaml is read
            again, and the path takes it between two batches (:meth:`poll.path.Poller.reconfigure`).
        events: serve's event queue, where observations go.
        stopping: set when serve stops.

    Raises:
        ConfigError: a CA bundle variable names a missing path (the Fetcher is made at once).
    """

    def __init__(self, config: Config, events: queue.Queue[tuple[str, Any]], stopping: threading.Event) -> None:
        self.config = config
        self.path = Poller(config, wait=self._wait_or_stop)
        self.path.open()  # serve always fetches
        self._events = events
        self._stopping = stopping
        self._batches: queue.Queue[list[Any] | None] = queue.Queue()

    def thread(self) -> threading.Thread:
        """The poller thread, not started."""
        return threading.Thread(target=self._poll_batches, name="poller", daemon=True)

    def put(self, batch: list[Any]) -> None:
        """Run ``batch`` (``[now, observe jobs]``, :meth:`planner.Planner.plan`) after the batches before it."""
        self._batches.put(batch)

    def stop(self) -> None:
        """End the thread after the batch it runs (serve stops: ``stopping`` is set)."""
        self._batches.put(None)

    def close(self) -> None:
        """Close the fetcher's connections, once the thread has ended (or was abandoned at a stop)."""
        self.path.close()

    def _poll_batches(self) -> None:
        """The poller thread: run each batch through the poll path, handing observations to the loop."""
        while True:
            batch = self._batches.get()
            if batch is None or self._stopping.is_set():
                return
            now, jobs = batch
            if self.path.config is not self.config:  # sites.yaml was read again: taken between two batches
                self.path.reconfigure(self.config)
            started = time.monotonic()
            try:
                for observation in self.path.observe(jobs, now, started):
                    self._events.put(("observation", observation))
                    if self._stopping.is_set():
                        raise _Stopped
            except _Stopped:
                log.info("serve: stopping; fetches still running are abandoned (their sources stay due)")
            except Exception:  # a bug of ours: logged; the sources of the batch are planned again
                log.exception("serve: a batch of fetches failed")
            finally:
                self._events.put(("batch_done", [job.request.source for job in jobs]))

    def _wait_or_stop(self, futures: set[Future[Any]], timeout: float | None) -> set[Future[Any]]:
        """The pool's wait, in slices, raising _Stopped when serve stops."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._stopping.is_set():
                raise _Stopped
            left = 0.2 if deadline is None else min(0.2, max(0.0, deadline - time.monotonic()))
            done = wait_first(futures, left)
            if done or (deadline is not None and time.monotonic() >= deadline):
                return done
