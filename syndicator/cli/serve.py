"""``syndicator serve``: poll continuously, take WebSub pushes and publish after changes, until
stopped by a signal."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from syndicator.cli.logs import LogHandler, setup_logging
from syndicator.cli.options import (
    SITE_FOLDERS,
    STATE_OPTION,
    VERBOSITY,
    config_option,
    host_port,
    with_state,
    workers_option,
)
from syndicator.cli.style import Command, CommandError
from syndicator.config.load import load_config
from syndicator.configtypes import Config
from syndicator.drivers.signals import handle_on_a_thread
from syndicator.errors import SyndicatorError
from syndicator.values import url_problem


def _public_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --public-url value: an http(s) URL without credentials, query or fragment (callbacks are paths under it)."""
    if value is None:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(value.strip())
    problem = url_problem(value)
    if "@" in parts.netloc:
        problem = "a URL with credentials: every hub would be sent them in each callback URL"
    elif problem is None and (parts.query or parts.fragment or "?" in value or "#" in value):
        problem = f"{value.strip()!r} has a query or fragment; the callbacks are paths under this URL"
    if problem is not None:
        raise click.BadParameter(problem, ctx, param)
    return value.strip()


@click.command(cls=Command)
@config_option("The site list to read (read again when it changes).")
@SITE_FOLDERS
@workers_option(f"Fetch threads (default {Config.workers}).")
@click.option(
    "--listen",
    default="127.0.0.1:8080",
    show_default=True,
    callback=host_port,
    metavar="HOST:PORT",
    help="Where the HTTP server for WebSub callbacks, /metrics and /healthz listens.",
)
@click.option(
    "--public-url",
    callback=_public_url,
    metavar="URL",
    help="The URL at which hubs reach that server (for example https://planet.example.org/push); "
    "without it, no WebSub subscriptions are made.",
)
@STATE_OPTION
@click.option(
    "--heartbeat",
    type=click.FloatRange(60, 30 * 86400),
    metavar="SECONDS",
    help="Seconds between polls of a feed whose push is healthy (default: max_interval).",
)
@VERBOSITY
def serve(
    config_path: Path,
    output: Path | None,
    cache: Path | None,
    templates: Path | None,
    workers: int | None,
    listen: tuple[str, int],
    public_url: str | None,
    state: str | None,
    heartbeat: float | None,
    verbose: int,
    quiet: int,
) -> None:
    """Poll continuously, take WebSub pushes, and publish the site after changes.

    Runs until SIGTERM or Ctrl-C, then stops cleanly; SIGHUP (or a change
    of sites.yaml) reads the site list again. Holds the cache, so no build
    runs beside it.
    """
    from syndicator.drivers.serve import ServeOptions, Server

    _log_waitress_to(setup_logging(verbose, quiet))
    try:
        config, overrides = _serve_config(config_path, output, cache, workers, state)
        options = ServeOptions(
            host=listen[0],
            port=listen[1],
            public_url=public_url,
            templates=templates,
            heartbeat=heartbeat,
            overrides=overrides,
        )
        server = Server(config, options)
        _handle_signals(stop=server.stop, reload=server.reload)
        server.run()
    except SyndicatorError as error:
        raise CommandError(error) from error
    if any(thread.name.startswith("fetch") and thread.is_alive() for thread in threading.enumerate()):
        # Fetches still running were abandoned (their sources stay due); the state is saved and the locks
        # are released, so the process does not wait for their timeouts.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def _log_waitress_to(handler: LogHandler) -> None:
    """Write the HTTP server's (waitress's) log lines, such as a connection limit reached, through
    ``handler``, in the form of ours."""
    waitress = logging.getLogger("waitress")
    waitress.handlers.clear()
    waitress.addHandler(handler)
    waitress.propagate = False


def _serve_config(
    config_path: Path, output: Path | None, cache: Path | None, workers: int | None, state: str | None
) -> tuple[Config, dict[str, Any]]:
    """The site list at ``config_path`` with the command line's folders, workers and state, and
    those overrides alone (folders made absolute), for the server to apply again on each reload.

    Raises:
        ConfigError: a bad sites.yaml or state URL.
    """
    config = load_config(config_path)
    overrides: dict[str, Any] = {}
    if output is not None:
        overrides["output"] = output.resolve()
    if cache is not None:
        overrides["cache"] = cache.resolve()
    if workers is not None:
        overrides["workers"] = workers
    config = with_state(replace(config, **overrides), state, os.environ)
    if config.state is not None:
        overrides["state"] = config.state
    return config, overrides


def _handle_signals(stop: Callable[[], None], reload: Callable[[], None]) -> None:
    """Call ``stop`` on SIGTERM and SIGINT, and ``reload`` on SIGHUP where there is one."""
    actions = {signal.SIGTERM: stop, signal.SIGINT: stop}
    if hasattr(signal, "SIGHUP"):
        actions[signal.SIGHUP] = reload
    handle_on_a_thread(actions)
