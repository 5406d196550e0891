"""``syndicator status``: each site's polling state, as text or JSON, read from the cache
without changing it."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import click

from syndicator.cli.options import (
    FAIL_ON,
    STATE_OPTION,
    config_option,
    current_time,
    failing_sites,
    now_option,
    with_state,
)
from syndicator.cli.style import Command, CommandError
from syndicator.config.credentials import secrets_warnings
from syndicator.config.duplicates import duplicate_feeds
from syndicator.config.load import load_config
from syndicator.configtypes import Config
from syndicator.drivers.status import delivery_totals, status_text, totals_line
from syndicator.drivers.status import status as site_status
from syndicator.errors import FailingSitesExit, SyndicatorError
from syndicator.health import TROUBLE


@click.command(cls=Command)
@config_option("The site list to read.")
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    help=f"State folder to read (default: 'cache' in sites.yaml, else {Config.cache}/).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list with one object per site).")
@now_option("Judge due and stale as if at this time (default: the clock).")
@click.option(
    "--failing",
    is_flag=True,
    help="Show only the sites in trouble (failing, gone, denied or stale); exit 8 when any site fails.",
)
@click.option(
    "--planet",
    metavar="NAME",
    help="Show only the sites of this planet of 'planets:' in sites.yaml ('main': the file's own).",
)
@FAIL_ON
@STATE_OPTION
def status(
    config_path: Path,
    cache: Path | None,
    as_json: bool,
    now_given: datetime | None,
    failing: bool,
    fail_on: int | None,
    planet: str | None,
    state: str | None,
) -> None:
    """Show each site's polling state: URLs, times, interval and why, failures, validators.

    Reads the cache without changing it; safe while a build runs. The text
    ends with a line of totals. Each site names the planets that list it when sites.yaml has
    'planets:'. With --failing or --fail-on, exits 8 when
    more sites fail than allowed, for cron jobs and CI monitors.
    """
    now = current_time(now_given)
    try:
        config = load_config(config_path)
        for line in [*duplicate_feeds(config), *secrets_warnings(config)]:
            click.echo(f"syndicator: warning: {line}", err=True)
        if cache is not None:
            config = replace(config, cache=cache)
        config = with_state(config, state, os.environ)
        rows = site_status(config, now, planet)
        delivered = delivery_totals(config)
    except SyndicatorError as error:
        raise CommandError(error) from error
    shown = [row for row in rows if row["health"] in TROUBLE or row["stale"]] if failing else rows
    if as_json:
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
    else:
        for row in shown:
            click.echo(status_text(row))
        click.echo(totals_line(rows, delivered))
    allowed = fail_on if fail_on is not None else 0 if failing else None
    failed = sum(row["health"] in TROUBLE for row in rows)
    if allowed is not None and failed > allowed:
        raise CommandError(FailingSitesExit(failing_sites(failed, allowed)))
