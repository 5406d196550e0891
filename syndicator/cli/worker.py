"""``syndicator worker``: poll into a PostgreSQL state shared with other workers, claiming due
sources with leases, until stopped by a signal."""

from __future__ import annotations

import logging
import math
import os
import signal
import threading
from dataclasses import replace
from pathlib import Path

import click

from syndicator.cli.logs import LIFECYCLE, setup_logging
from syndicator.cli.options import STATE_OPTION, VERBOSITY, config_option, host_port, with_state, workers_option
from syndicator.cli.style import Command, CommandError
from syndicator.config.load import load_config
from syndicator.configtypes import Config
from syndicator.drivers.signals import handle_on_a_thread
from syndicator.errors import SyndicatorError

lifecycle = logging.getLogger(LIFECYCLE)


def _finite(_context: click.Context, parameter: click.Parameter, value: float | None) -> float | None:
    """A number option's value, refusing nan (which passes FloatRange: it compares false with both ends)."""
    if value is not None and math.isnan(value):
        raise click.BadParameter(f"{value} is not a number", param=parameter)
    return value


@click.command(cls=Command)
@config_option("The site list to read.")
@STATE_OPTION
@workers_option(f"Fetch threads of this process (default {Config.workers}).")
@click.option("--name", metavar="NAME", help="This worker's name in the leases (default: host name and process id).")
@click.option(
    "--lease",
    type=click.FloatRange(10, 86400),
    callback=_finite,
    metavar="SECONDS",
    help="Seconds a claimed source is held before another worker may take it (default: twice a "
    "fetch's deadline, at least 60).",
)
@click.option(
    "--listen",
    "listen",
    callback=host_port,
    metavar="HOST:PORT",
    help="Serve this worker's /metrics and /healthz there (default: no HTTP server).",
)
@VERBOSITY
def worker(
    config_path: Path,
    state: str | None,
    workers: int | None,
    name: str | None,
    lease: float | None,
    listen: tuple[str, int] | None,
    verbose: int,
    quiet: int,
) -> None:
    """Poll into a PostgreSQL state shared with other workers.

    Runs until SIGTERM or Ctrl-C; SIGHUP reads sites.yaml again. Claims due
    sources with leases, so no source is fetched twice at once and per-host
    limits hold across every worker. Renders nothing: publish with build and
    its no-fetch option.
    """
    from syndicator.drivers.worker import WorkerHealth, WorkerOptions, metrics_server, run_worker

    setup_logging(verbose, quiet)
    stopping = threading.Event()
    try:
        config = load_config(config_path)
        if workers is not None:
            config = replace(config, workers=workers)
        config = with_state(config, state, os.environ)
        options = WorkerOptions(lease=lease) if name is None else WorkerOptions(name=name, lease=lease)
        reload = threading.Event()
        handle_on_a_thread({signal.SIGTERM: stopping.set, signal.SIGINT: stopping.set, signal.SIGHUP: reload.set})
        health = WorkerHealth()
        metrics, server = metrics_server(listen, stopping, health)
        try:
            stored = run_worker(config, options, stopping, metrics, health, reload)
        finally:
            if server is not None:
                server.close()
    except SyndicatorError as error:
        raise CommandError(error) from error
    lifecycle.info("worker %s: stopped after storing %d observations", options.name, stored)
