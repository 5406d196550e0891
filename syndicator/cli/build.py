"""``syndicator build``: fetch the feeds that are due and publish the site, with a progress
bar for a person watching."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn, TextIO

import click

from syndicator.cli.logs import LogHandler, setup_logging
from syndicator.cli.options import (
    FAIL_ON,
    SITE_FOLDERS,
    STATE_OPTION,
    VERBOSITY,
    config_option,
    current_time,
    failing_sites,
    now_option,
    with_state,
    workers_option,
)
from syndicator.cli.style import Command, CommandError
from syndicator.config.load import load_config
from syndicator.configtypes import Config
from syndicator.drivers.pipeline import BuildOptions
from syndicator.drivers.pipeline import build as run_build
from syndicator.drivers.signals import Terminated, terminate_as_interrupt
from syndicator.errors import ConfigError, FailingSitesExit, InternalErrorsExit, SyndicatorError
from syndicator.values import url_problem


@click.command(cls=Command)
@config_option("The site list to read.")
@SITE_FOLDERS
@click.option("--force", is_flag=True, help="Fetch every source now, due or not.")
@click.option(
    "--no-fetch",
    "no_fetch",
    is_flag=True,
    help="Fetch nothing: publish the site from the stored state (workers poll, this renders).",
)
@click.option(
    "--site",
    "site_names",
    multiple=True,
    metavar="NAME",
    help="Fetch only this site (repeatable), due or not; others keep their copy.",
)
@workers_option(f"Fetch threads (default {Config.workers}).")
@now_option("Run as if at this time, for testing and replaying (default: the clock).")
@STATE_OPTION
@click.option(
    "--restore-from",
    "restore_from",
    metavar="URL-OR-PATH",
    help="Where to load the state from when the cache folder is empty (default: 'restore_from' in sites.yaml).",
)
@FAIL_ON
@VERBOSITY
def build(
    config_path: Path,
    output: Path | None,
    cache: Path | None,
    templates: Path | None,
    force: bool,
    no_fetch: bool,
    site_names: tuple[str, ...],
    workers: int | None,
    now_given: datetime | None,
    state: str | None,
    restore_from: str | None,
    fail_on: int | None,
    verbose: int,
    quiet: int,
) -> None:
    """Fetch the feeds that are due and publish the site.

    Also writes the build's figures to report.json in the cache folder.
    With --fail-on N, exits 8 after publishing when more than N sites fail.
    """
    handler = setup_logging(verbose, quiet)
    now = current_time(now_given)
    try:
        config = load_config(config_path)
        changes: dict[str, Any] = {}
        if output is not None:
            changes["output"] = output
        if cache is not None:
            changes["cache"] = cache
        if workers is not None:
            changes["workers"] = workers
        if restore_from is not None:
            changes["restore_from"] = _location(restore_from)
        config = with_state(replace(config, **changes), state, os.environ)
        if no_fetch and (force or site_names):
            raise click.UsageError("--no-fetch fetches nothing: it cannot be given with --force or --site")
        options = BuildOptions(now=now, force=force, fetch=not no_fetch, sites=site_names, templates=templates)
        shown = progress_shown(handler.stream, quiet, os.environ)
        with terminate_as_interrupt():
            report = build_with_progress(config, options, handler if shown else None)
    except SyndicatorError as error:
        raise CommandError(error) from error
    except KeyboardInterrupt as stop:
        _end_stopped(stop)
    if quiet < 2:
        click.echo(report.summary())
    if report.internal_errors:
        count = report.internal_errors
        raise CommandError(
            InternalErrorsExit(
                f"published, but {count} source{'s' * (count != 1)} hit an internal error; "
                "please report it with the traceback logged above"
            )
        )
    if fail_on is not None and report.failing_sites > fail_on:
        raise CommandError(FailingSitesExit("published, but " + failing_sites(report.failing_sites, fail_on)))


def _end_stopped(stop: KeyboardInterrupt) -> NoReturn:
    """End a build stopped by Ctrl-C (exit code 130) or SIGTERM (143, :class:`signals.Terminated`), as a
    shell counts them, with one line on stderr.

    The store is closed and unlocked by now, every feed finished so far is saved, and a site being
    written was not swapped in (site.publish): the output is the last site published whole, or none.
    """
    how = "stopped by SIGTERM" if isinstance(stop, Terminated) else "interrupted"
    click.echo(f"syndicator: {how}; feeds finished so far are saved, the published site is as it was", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(getattr(stop, "exit_code", 130))  # fetches still running are abandoned rather than waited for


def _location(value: str) -> str:
    """A --restore-from value: an http(s) URL as given, or a path made absolute (it is read
    relative to sites.yaml otherwise)."""
    problem = url_problem(value)
    if problem is None:
        return value.strip()
    if "://" in value:
        raise ConfigError(f"--restore-from: {problem}")
    return str(Path(value).resolve())


def progress_shown(stream: TextIO, quiet: int, environ: Mapping[str, str]) -> bool:
    """Whether a build draws a progress bar on ``stream``: only for a person watching, so not
    with ``-q``, not when the stream is not a terminal, and not in CI (the ``CI`` variable set
    to anything but empty, ``false`` or ``0``, as CI services set it)."""
    in_ci = environ.get("CI", "").strip().lower() not in ("", "false", "0")
    return quiet == 0 and not in_ci and stream.isatty()


def build_with_progress(config: Any, options: BuildOptions, handler: LogHandler | None) -> Any:
    """Run the build (:func:`syndicator.drivers.pipeline.build`) and return its report; with a
    handler, draw a progress bar on its stream while feeds are fetched.

    The bar is drawn from the first fetched feed and finished (its line ended)
    after the last one; meanwhile the handler clears the bar's line before each
    log line. Raises what the build raises.
    """
    if handler is None:
        return run_build(config, options)
    bar: Any = None

    def finish() -> None:
        if handler.bar_shown:
            bar.__exit__(None, None, None)
            handler.bar_shown = False

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=total, label="fetching", file=handler.stream, show_pos=True)
            bar.__enter__()
            handler.bar_shown = True
        bar.update(1)  # show_pos: each step changes the line, so a bar cleared by a log line is drawn again
        if done == total:
            finish()

    try:
        return run_build(config, replace(options, progress=progress))
    finally:
        finish()
