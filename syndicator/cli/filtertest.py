"""``syndicator filter test``: a dry run of the filters over the stored entries, read-only."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import click

from syndicator.cli.options import STATE_OPTION, config_option, current_time, now_option, with_state
from syndicator.cli.style import Command, CommandError, Group
from syndicator.config.filters import rule_from_text
from syndicator.config.load import load_config
from syndicator.config.union import planet_named
from syndicator.configtypes import MAIN_PLANET
from syndicator.drivers.filtering import totals_line, tried_line, try_filters, with_rules
from syndicator.errors import SyndicatorError


@click.group(name="filter", cls=Group)
def filter_() -> None:
    """Try the filters of sites.yaml, which choose the stored entries the planet publishes."""


@filter_.command(name="test", cls=Command)
@config_option("The site list to read.")
@click.option(
    "--planet",
    "planet_name",
    metavar="NAME",
    help="Try the filters of this planet of `planets:` in sites.yaml (default: the file's own planet).",
)
@click.option(
    "--site", "site_name", metavar="NAME", help="Show only this site's entries; --keep and --drop add to its rules."
)
@click.option(
    "--keep",
    "keep",
    multiple=True,
    metavar="RULE",
    help="Add a keep rule, written as in sites.yaml: --keep 'category: python' (repeatable).",
)
@click.option(
    "--drop",
    "drop",
    multiple=True,
    metavar="RULE",
    help="Add a drop rule, written as in sites.yaml: --drop 'keyword: crypto' (repeatable).",
)
@now_option("Judge ages as if at this time (default: the clock).")
@STATE_OPTION
def test(
    config_path: Path,
    planet_name: str | None,
    site_name: str | None,
    keep: tuple[str, ...],
    drop: tuple[str, ...],
    now_given: datetime | None,
    state: str | None,
) -> None:
    """Show what the filters keep and drop of the stored entries, and why, without fetching or writing.

    Without --keep or --drop it tries the filters of sites.yaml as written now; each of those options
    adds a rule, to the planet's filters, or to the site's with --site. Every entry is printed with
    KEEP or DROP, its date, site and title and the reason (the rule and its line in sites.yaml), newest
    first, site by site; then the totals, with how many the next build publishes (each site's
    items_per_feed newest kept entries, feed_entries in all). Safe while a build runs.
    """
    now = current_time(now_given)
    try:
        config = with_state(planet_named(load_config(config_path), planet_name or MAIN_PLANET), state, os.environ)
        rules = ([rule_from_text(text, "--keep") for text in keep], [rule_from_text(text, "--drop") for text in drop])
        config = with_rules(config, site_name, *rules)
        tried = try_filters(config, now, site_name)
    except SyndicatorError as error:
        raise CommandError(error) from error
    for one in tried:
        click.echo(tried_line(one))
    click.echo(totals_line(tried))
