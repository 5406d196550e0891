"""The options several commands share: --config, --now (:class:`IsoTime`), the site folders, --fail-on,
--state, --workers, --listen and -v/-q; and :func:`with_state`, the state URL they choose."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from syndicator.config.readers import state_url
from syndicator.config.settings import WORKERS_MAX
from syndicator.configtypes import Config

#: A click decorator adding options to a command.
Decorator = Callable[[Any], Any]


def _stacked(*options: Decorator) -> Decorator:
    """The options as one decorator; ``--help`` lists them in the order given."""

    def apply(command: Any) -> Any:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def config_option(help_text: str) -> Decorator:
    """``--config PATH`` (parameter ``config_path``, default sites.yaml), with this help."""
    return click.option(
        "--config",
        "config_path",
        default="sites.yaml",
        show_default=True,
        type=click.Path(path_type=Path),
        help=help_text,
    )


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


def now_option(help_text: str) -> Decorator:
    """``--now ISO-8601-TIME`` (parameter ``now_given``, an :class:`IsoTime`), with this help."""
    return click.option("--now", "now_given", type=IsoTime(), metavar="ISO-8601-TIME", help=help_text)


def current_time(now_given: datetime | None) -> datetime:
    """The command's clock: the --now value, else the wall clock (aware UTC)."""
    return now_given if now_given is not None else datetime.now(UTC)


#: The --output, --cache and --templates options of build and serve.
SITE_FOLDERS = _stacked(
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

#: --state URL, read by :func:`with_state`.
STATE_OPTION = click.option(
    "--state",
    "state",
    metavar="URL",
    help="The state's PostgreSQL database, postgresql://... (default: $SYNDICATOR_STATE, else 'state' in "
    "sites.yaml, else the SQLite database in the cache folder).",
)


def with_state(config: Any, state: str | None, environ: Mapping[str, str]) -> Any:
    """``config`` with the state URL of --state, else $SYNDICATOR_STATE, else its own.

    Raises:
        ConfigError: a value that is not a postgresql:// URL, naming where it came from.
    """
    if state is not None:
        return replace(config, state=state_url(state, "--state"))
    if environ.get("SYNDICATOR_STATE"):
        return replace(config, state=state_url(environ["SYNDICATOR_STATE"], "SYNDICATOR_STATE"))
    return config


def workers_option(help_text: str) -> Decorator:
    """``--workers N``, from 1 to WORKERS_MAX fetch threads, with this help."""
    return click.option("--workers", type=click.IntRange(1, WORKERS_MAX), metavar="N", help=help_text)


def host_port(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, int] | None:
    """A --listen value HOST:PORT (IPv6 in brackets) as (host, port), None when not given; else a usage error."""
    if value is None:
        return None
    host, sep, port = value.strip().rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise click.BadParameter(f"{value!r} is not HOST:PORT (for example 127.0.0.1:8080)", ctx, param)
    return host, int(port)


#: -v and -q: more or fewer log lines (see :func:`syndicator.cli.logs.setup_logging`).
VERBOSITY = _stacked(
    click.option("-v", "--verbose", count=True, help="More log lines (repeatable)."),
    click.option("-q", "--quiet", count=True, help="Fewer log lines (repeatable)."),
)

#: ``--fail-on N`` (parameter ``fail_on``): the failing sites a command accepts before it exits 8.
FAIL_ON = click.option(
    "--fail-on",
    "fail_on",
    type=click.IntRange(min=0),
    metavar="N",
    help="Exit 8 when more than N sites are failing (failing, gone or denied), for cron jobs and CI.",
)


def failing_sites(failed: int, allowed: int) -> str:
    """The message of a command that exits 8: how many sites fail, and how many were allowed."""
    sites = f"{failed} site{'s' * (failed != 1)} {'are' if failed != 1 else 'is'} failing"
    return f"{sites}, more than the {allowed} allowed (--fail-on {allowed}); `syndicator status --failing` lists them"
