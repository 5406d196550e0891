"""The ``syndicator`` command. The only module that imports click.

Exit codes: 0 success; 1 an unexpected error (a bug: please report it with
the traceback); 2 bad sites.yaml or command-line usage; 3 the build found no
entries at all and published nothing; 4 another build holds the cache or the
output folder; 5 the state database cannot be used; 6 the site could not be
written; 7 the site was published, but some sources hit an internal error (a
bug: please report it with the tracebacks logged).
"""

from __future__ import annotations

import inspect
import json
import logging
import math
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import click

from syndicator import __version__
from syndicator.config.load import load_config
from syndicator.config.readers import state_url
from syndicator.config.settings import WORKERS_MAX
from syndicator.configtypes import Config
from syndicator.drivers.pipeline import BuildOptions
from syndicator.drivers.pipeline import build as run_build
from syndicator.drivers.signals import handle_on_a_thread
from syndicator.drivers.status import delivery_totals, status_text, totals_line
from syndicator.drivers.status import status as site_status
from syndicator.errors import ConfigError, FeedError, InternalErrorsExit, SyndicatorError
from syndicator.health import TROUBLE
from syndicator.values import url_problem

log = logging.getLogger("syndicator")


class CommandError(click.ClickException):
    """A SyndicatorError shown as one line, with that error's exit code."""

    def __init__(self, error: SyndicatorError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]  # click reads it per instance

    def show(self, file: Any = None) -> None:
        click.echo(f"syndicator: error: {self.format_message()}", err=True)


class UsageLine(click.ClickException):
    """A click usage error (unknown option, bad value, missing argument) in the style of every
    other error: ``syndicator: error: MESSAGE`` on one line, then the help to read; exit code 2."""

    exit_code = 2

    def __init__(self, error: click.UsageError, command_path: str) -> None:
        super().__init__(" ".join(error.format_message().splitlines()))
        self.command_path = command_path

    def show(self, file: Any = None) -> None:
        click.echo(f"syndicator: error: {self.format_message()}", err=True)
        click.echo(f"Try '{self.command_path} --help'.", err=True)


def _usage_line(
    error: click.UsageError, command: click.Command, info_name: str | None, parent: click.Context | None
) -> UsageLine:
    """``error`` as a :class:`UsageLine`, naming the command it is about (click's parser leaves
    ``error.ctx`` unset for some errors, such as an option missing its value)."""
    ctx = error.ctx or click.Context(command, info_name=info_name, parent=parent)
    return UsageLine(error, ctx.command_path)


class _Command(click.Command):
    """A command whose line in ``syndicator --help`` is its help's first sentence, whole
    (click's default cuts it at about 45 characters with "..."), and whose usage errors
    are :class:`UsageLine`."""

    def get_short_help_str(self, limit: int = 45) -> str:
        return first_sentence(self.help or "")

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise _usage_line(error, self, info_name, parent) from error


def first_sentence(text: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    words = " ".join(inspect.cleandoc(text).split("\n\n")[0].split())
    end = words.find(". ")
    return words if end < 0 else words[: end + 1]


class _Group(click.Group):
    """The ``syndicator`` group: its commands are :class:`_Command`, and a usage error of the
    group (an unknown option or command) is a :class:`UsageLine` too."""

    command_class = _Command

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise  # `syndicator` alone prints the help
        except click.UsageError as error:
            raise _usage_line(error, self, info_name, parent) from error

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise _usage_line(error, self, ctx.info_name, ctx.parent) from error


class LogHandler(logging.StreamHandler):
    """Log records as lines on a stream: ``syndicator: LEVEL: MESSAGE``.

    While a progress bar is drawn on that stream (``bar_shown``), a record
    first clears the bar's line, so no log line is written onto the bar; the
    bar draws itself again on the line below at its next step.
    """

    CLEAR_LINE = "\r\033[K"  # back to the start of the line, then erase to its end (ANSI)

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self.bar_shown = False

    def format(self, record: logging.LogRecord) -> str:
        return f"syndicator: {record.levelname.lower()}: {record.getMessage()}"

    def emit(self, record: logging.LogRecord) -> None:
        try:
            # One write, so a bar drawn from another thread cannot come between the clearing and the line.
            self.stream.write((self.CLEAR_LINE if self.bar_shown else "") + self.format(record) + self.terminator)
            self.flush()
        except Exception:
            self.handleError(record)


def _setup_logging(verbose: int, quiet: int) -> LogHandler:
    level = logging.WARNING + 10 * (quiet - verbose)
    logger = logging.getLogger("syndicator")
    logger.handlers.clear()
    handler = LogHandler(sys.stderr)
    logger.addHandler(handler)
    logger.setLevel(max(logging.DEBUG, min(level, logging.CRITICAL)))
    logger.propagate = False
    return handler


def progress_shown(stream: TextIO, quiet: int, environ: Mapping[str, str]) -> bool:
    """Whether a build draws a progress bar on ``stream``: only for a person watching, so not
    with ``-q``, not when the stream is not a terminal, and not in CI (the ``CI`` variable set
    to anything but empty, ``false`` or ``0``, as CI services set it)."""
    in_ci = environ.get("CI", "").strip().lower() not in ("", "false", "0")
    return quiet == 0 and not in_ci and stream.isatty()


#: The years a --now time may fall in (inclusive).
NOW_YEARS = (1995, 2999)


class IsoTime(click.ParamType):
    """A ``--now`` value: an ISO 8601 time read by ``datetime.fromisoformat``.

    ``2026-11-30T12:00:00Z``, ``2026-11-30T13:00:00+01:00`` and
    ``2026-11-30`` (midnight) are accepted; no zone means UTC; ``t`` and
    ``z`` may be lower case (RFC 3339 section 5.6). Years outside
    :data:`NOW_YEARS` are refused (the schedule adds days to ``now``).
    Converts to an aware UTC datetime; anything else is a usage error (exit 2).
    """

    name = "iso-8601-time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            parsed = datetime.fromisoformat(str(value).upper())
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 time such as 2026-11-30T12:00:00Z", param, ctx)
        if not NOW_YEARS[0] <= parsed.year <= NOW_YEARS[1]:
            self.fail(f"{value!r} is outside the years {NOW_YEARS[0]}-{NOW_YEARS[1]}", param, ctx)
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)


def _now(value: datetime | None) -> datetime:
    """The build's clock: the --now value, else the wall clock (aware UTC)."""
    return value if value is not None else datetime.now(UTC)


def _site_folders(command: Any) -> Any:
    """The --output, --cache and --templates options of build and serve."""
    for option in reversed(
        (
            click.option(
                "--output",
                type=click.Path(file_okay=False, path_type=Path),
                help=f"Folder to publish into (default: 'output' in sites.yaml, else {Config.output}/).",
            ),
            click.option(
                "--cache",
                type=click.Path(file_okay=False, path_type=Path),
                help=f"State folder kept between builds (default: 'cache' in sites.yaml, else {Config.cache}/).",
            ),
            click.option(
                "--templates",
                type=click.Path(file_okay=False, exists=True, path_type=Path),
                help="Folder of templates that override the bundled ones.",
            ),
        )
    ):
        command = option(command)
    return command


_STATE_OPTION = click.option(
    "--state",
    "state",
    metavar="URL",
    help="The state's PostgreSQL database, postgresql://... (default: $SYNDICATOR_STATE, else 'state' in "
    "sites.yaml, else the SQLite database in the cache folder).",
)


def _finite(_context: click.Context, parameter: click.Parameter, value: float | None) -> float | None:
    """A number option's value, refusing nan (which passes FloatRange: it compares false with both ends)."""
    if value is not None and math.isnan(value):
        raise click.BadParameter(f"{value} is not a number", param=parameter)
    return value


def _with_state(config: Any, state: str | None, environ: Mapping[str, str]) -> Any:
    """``config`` with the state URL of --state, else $SYNDICATOR_STATE, else its own.

    Raises:
        ConfigError: a value that is not a postgresql:// URL, naming where it came from.
    """
    if state is not None:
        return replace(config, state=state_url(state, "--state"))
    if environ.get("SYNDICATOR_STATE"):
        return replace(config, state=state_url(environ["SYNDICATOR_STATE"], "SYNDICATOR_STATE"))
    return config


@click.group(name="syndicator", cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="syndicator")
def main() -> None:
    """Build a planet-style static site from the feeds listed in sites.yaml."""


@main.command()
@click.option(
    "--config",
    "config_path",
    default="sites.yaml",
    show_default=True,
    type=click.Path(path_type=Path),
    help="The site list to read.",
)
@_site_folders
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
@click.option("--workers", type=click.IntRange(1, WORKERS_MAX), help=f"Fetch threads (default {Config.workers}).")
@click.option(
    "--now",
    "now_given",
    type=IsoTime(),
    metavar="ISO-8601-TIME",
    help="Run as if at this time, for testing and replaying (default: the clock).",
)
@_STATE_OPTION
@click.option(
    "--restore-from",
    "restore_from",
    metavar="URL-OR-PATH",
    help="Where to load the state from when the cache folder is empty (default: 'restore_from' in sites.yaml).",
)
@click.option("-v", "--verbose", count=True, help="More log lines (repeatable).")
@click.option("-q", "--quiet", count=True, help="Fewer log lines (repeatable).")
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
    verbose: int,
    quiet: int,
) -> None:
    """Fetch the feeds that are due and publish the site.

    Also writes the build's figures to report.json in the cache folder.
    """
    handler = _setup_logging(verbose, quiet)
    now = _now(now_given)
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
        config = _with_state(replace(config, **changes), state, os.environ)
        if no_fetch and (force or site_names):
            raise click.UsageError("--no-fetch fetches nothing: it cannot be given with --force or --site")
        options = BuildOptions(now=now, force=force, fetch=not no_fetch, sites=site_names, templates=templates)
        shown = progress_shown(handler.stream, quiet, os.environ)
        report = _build_with_progress(config, options, handler if shown else None)
    except SyndicatorError as error:
        raise CommandError(error) from error
    except KeyboardInterrupt:
        # The store is closed and unlocked by now; every feed finished so far is saved.
        click.echo("syndicator: interrupted; feeds finished so far are saved, nothing was published", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)  # fetches still running are abandoned rather than waited for
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


def _location(value: str) -> str:
    """A --restore-from value: an http(s) URL as given, or a path made absolute (it is read
    relative to sites.yaml otherwise)."""
    problem = url_problem(value)
    if problem is None:
        return value.strip()
    if "://" in value:
        raise ConfigError(f"--restore-from: {problem}")
    return str(Path(value).resolve())


def _build_with_progress(config: Any, options: BuildOptions, handler: LogHandler | None) -> Any:
    """Run the build; with a handler, draw a progress bar on its stream while feeds are fetched.

    The bar is drawn from the first fetched feed and finished (its line ended)
    after the last one; meanwhile the handler clears the bar's line before each
    log line.
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


@main.command()
@click.option(
    "--config",
    "config_path",
    default="sites.yaml",
    show_default=True,
    type=click.Path(path_type=Path),
    help="The site list to read.",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    help=f"State folder to read (default: 'cache' in sites.yaml, else {Config.cache}/).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list with one object per site).")
@click.option(
    "--now",
    "now_given",
    type=IsoTime(),
    metavar="ISO-8601-TIME",
    help="Judge due and stale as if at this time (default: the clock).",
)
@click.option("--failing", is_flag=True, help="Show only the sites in trouble: failing, gone, denied or stale.")
@_STATE_OPTION
def status(
    config_path: Path, cache: Path | None, as_json: bool, now_given: datetime | None, failing: bool, state: str | None
) -> None:
    """Show each site's polling state: URLs, times, interval and why, failures, validators.

    Reads the cache without changing it; safe while a build runs. The text
    ends with a line of totals.
    """
    now = _now(now_given)
    try:
        config = load_config(config_path)
        if cache is not None:
            config = replace(config, cache=cache)
        config = _with_state(config, state, os.environ)
        rows = site_status(config, now)
        delivered = delivery_totals(config)
    except SyndicatorError as error:
        raise CommandError(error) from error
    shown = [row for row in rows if row["health"] in TROUBLE or row["stale"]] if failing else rows
    if as_json:
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    for row in shown:
        click.echo(status_text(row))
    click.echo(totals_line(rows, delivered))


def _http_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """The argument as a stripped http(s) URL; else a usage error (exit 2) before any network."""
    problem = url_problem(value)
    if problem is not None:
        raise click.BadParameter(problem, ctx, param)
    return value.strip()


class _Seconds(click.FloatRange):
    """A number of seconds from 0.1 to 120: click's FloatRange, which lets NaN through, without it."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number of seconds.", param, ctx)
        return number


SECONDS = _Seconds(0.1, 120)


@main.command()
@click.argument("url", callback=_http_url)
@click.option(
    "--timeout", type=SECONDS, default=Config.timeout, show_default=True, help="Seconds to wait for the server."
)
def discover(url: str, timeout: float) -> None:
    """Print the feed URLs of a site, one per line.

    That is URL itself if it is a feed, else the feeds its page advertises
    with <link rel="alternate">.
    """
    from syndicator.poll.observe import discover as run_discover  # here: other commands need not load requests

    try:
        feeds = run_discover(url, datetime.now(UTC), timeout=timeout)
    except FeedError as error:
        raise CommandError(FeedError(error.url, f"{error.url}: {error.message}")) from error
    except SyndicatorError as error:  # a CA bundle variable naming nothing
        raise CommandError(error) from error
    if not feeds:
        raise CommandError(FeedError(url, f"{url}: an HTML page that advertises no feed"))
    for feed in feeds:
        click.echo(feed)


@main.command(name="import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--config",
    "config_path",
    default="sites.yaml",
    show_default=True,
    type=click.Path(path_type=Path),
    help="The site list to add to.",
)
@click.option("--dry-run", is_flag=True, help="Print what would be added; write nothing.")
def import_(file: Path, config_path: Path, dry_run: bool) -> None:
    """Add the feeds of an OPML file or a Planet Venus / pluto INI file to sites.yaml.

    Feeds already listed, listed twice, or not http(s) URLs are skipped and
    reported; a name already taken gets " (2)". The file's comments and
    layout are kept.
    """
    from syndicator.drivers.importing import import_list  # here: other commands need not load ruamel.yaml

    try:
        result = import_list(config_path, file, dry_run=dry_run)
    except SyndicatorError as error:
        raise CommandError(error) from error
    for line in result.lines(dry_run):
        click.echo(line)


@main.command()
@click.argument("url", callback=_http_url)
@click.option("--name", help="The site's name (default: the feed's title).")
@click.option(
    "--config",
    "config_path",
    default="sites.yaml",
    show_default=True,
    type=click.Path(path_type=Path),
    help="The site list to add to.",
)
@click.option(
    "--timeout", type=SECONDS, default=Config.timeout, show_default=True, help="Seconds to wait for the server."
)
def add(url: str, name: str | None, config_path: Path, timeout: float) -> None:
    """Add the feed of URL (a feed, or a page advertising one) to sites.yaml as a site."""
    from syndicator.drivers.importing import add_site  # here: other commands need not load requests or ruamel.yaml

    try:
        site = add_site(config_path, url, name, datetime.now(UTC), timeout=timeout)
    except SyndicatorError as error:
        raise CommandError(error) from error
    click.echo(f"added {site.name} <{site.feed}>")


def _listen(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, int] | None:
    """A --listen value HOST:PORT (IPv6 in brackets) as (host, port), None when not given; else a usage error."""
    if value is None:
        return None
    host, sep, port = value.strip().rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise click.BadParameter(f"{value!r} is not HOST:PORT (for example 127.0.0.1:8080)", ctx, param)
    return host, int(port)


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


@main.command()
@click.option(
    "--config",
    "config_path",
    default="sites.yaml",
    show_default=True,
    type=click.Path(path_type=Path),
    help="The site list to read (read again when it changes).",
)
@_site_folders
@click.option("--workers", type=click.IntRange(1, WORKERS_MAX), help=f"Fetch threads (default {Config.workers}).")
@click.option(
    "--listen",
    default="127.0.0.1:8080",
    show_default=True,
    callback=_listen,
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
@_STATE_OPTION
@click.option(
    "--heartbeat",
    type=click.FloatRange(60, 30 * 86400),
    metavar="SECONDS",
    help="Seconds between polls of a feed whose push is healthy (default: max_interval).",
)
@click.option("-v", "--verbose", count=True, help="More log lines (repeatable).")
@click.option("-q", "--quiet", count=True, help="Fewer log lines (repeatable).")
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
    import signal

    from syndicator.drivers.serve import ServeOptions, Server

    handler = _setup_logging(verbose, quiet)
    waitress = logging.getLogger("waitress")  # its lines (a connection limit reached) in our form
    waitress.handlers.clear()
    waitress.addHandler(handler)
    waitress.propagate = False
    try:
        config = load_config(config_path)
        overrides: dict[str, Any] = {}
        if output is not None:
            overrides["output"] = output.resolve()
        if cache is not None:
            overrides["cache"] = cache.resolve()
        if workers is not None:
            overrides["workers"] = workers
        config = _with_state(replace(config, **overrides), state, os.environ)
        if config.state is not None:
            overrides["state"] = config.state
        server = Server(
            config,
            ServeOptions(
                host=listen[0],
                port=listen[1],
                public_url=public_url,
                templates=templates,
                heartbeat=heartbeat,
                overrides=overrides,
            ),
        )
        actions = {signal.SIGTERM: server.stop, signal.SIGINT: server.stop}
        if hasattr(signal, "SIGHUP"):
            actions[signal.SIGHUP] = server.reload
        handle_on_a_thread(actions)
        server.run()
    except SyndicatorError as error:
        raise CommandError(error) from error
    if any(thread.name.startswith("fetch") and thread.is_alive() for thread in threading.enumerate()):
        # Fetches still running were abandoned (their sources stay due); the state is saved and the locks
        # are released, so the process does not wait for their timeouts.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


@main.command()
@click.option(
    "--config",
    "config_path",
    default="sites.yaml",
    show_default=True,
    type=click.Path(path_type=Path),
    help="The site list to read.",
)
@_STATE_OPTION
@click.option(
    "--workers", type=click.IntRange(1, WORKERS_MAX), help=f"Fetch threads of this process (default {Config.workers})."
)
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
    callback=_listen,
    metavar="HOST:PORT",
    help="Serve this worker's /metrics and /healthz there (default: no HTTP server).",
)
@click.option("-v", "--verbose", count=True, help="More log lines (repeatable).")
@click.option("-q", "--quiet", count=True, help="Fewer log lines (repeatable).")
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
    import signal

    from syndicator.drivers.worker import WorkerHealth, WorkerOptions, metrics_server, run_worker

    _setup_logging(verbose, quiet)
    stopping = threading.Event()
    try:
        config = load_config(config_path)
        if workers is not None:
            config = replace(config, workers=workers)
        config = _with_state(config, state, os.environ)
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
    log.warning("worker %s: stopped after storing %d observations", options.name, stored)
