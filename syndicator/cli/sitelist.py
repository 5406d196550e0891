"""The commands that find feeds and edit the list in sites.yaml: ``init`` (a new sites.yaml from an
old planet's config), ``discover``, ``import`` (an OPML or INI list), ``add`` (one site) and
``remove`` (one site)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from syndicator.cli.options import config_option
from syndicator.cli.style import Command, CommandError
from syndicator.configtypes import Config
from syndicator.errors import FeedError, SyndicatorError
from syndicator.values import url_problem


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


@click.command(cls=Command)
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


@click.command(cls=Command, name="import")
@click.argument("file", type=click.Path(path_type=Path))
@config_option("The site list to add to.")
@click.option("--dry-run", is_flag=True, help="Print what would be added; write nothing.")
def import_(file: Path, config_path: Path, dry_run: bool) -> None:
    """Add the feeds of an OPML file, a Planet Venus / pluto INI file or a rawdog config to sites.yaml.

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


def _optional_http_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    return None if value is None else _http_url(ctx, param, value)


@click.command(cls=Command)
@click.argument("old_config", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=Path("sites.yaml"),
    show_default=True,
    help="The sites.yaml to write.",
)
@click.option("--force", is_flag=True, help="Replace the output file if it exists.")
@click.option("--title", help="The planet's title (default: the old config's).")
@click.option("--link", callback=_optional_http_url, help="The planet's public home page (default: the old config's).")
def init(old_config: Path, output: Path, force: bool, title: str | None, link: str | None) -> None:
    """Write a new sites.yaml from an old planet's config.

    OLD_CONFIG is a Planet Venus or Planet 2.0 config, a pluto INI file, a
    rawdog config or an OPML list. Its settings that syndicator has are
    carried over, and so are its sites with their names, links, faces and
    template values; everything else is printed as "not supported: ..." and
    written as a comment at the top of the new file.
    """
    from syndicator.drivers.moving import init_planet  # here: other commands need not load ruamel.yaml

    if title is not None and not title.strip():
        raise click.BadParameter("must be non-empty text", param_hint="--title")
    try:
        moved = init_planet(old_config, output, force=force, title=title and title.strip(), link=link)
    except SyndicatorError as error:
        raise CommandError(error) from error
    for line in moved.lines():
        click.echo(line)


@click.command(cls=Command)
@click.argument("url", callback=_http_url)
@click.option("--name", metavar="NAME", help="The site's name (default: the feed's title).")
@config_option("The site list to add to.")
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


@click.command(cls=Command)
@click.argument("name")
@config_option("The site list to remove the site from.")
def remove(name: str, config_path: Path) -> None:
    """Remove the site called NAME from sites.yaml, keeping the file's comments and layout.

    Its posts leave the published pages at the next build. To stop checking a
    site for a while but keep its posts, write `enabled: false` in its entry
    instead.
    """
    from syndicator.drivers.removing import remove_site  # here: other commands need not load ruamel.yaml

    try:
        site = remove_site(config_path, name)
    except SyndicatorError as error:
        raise CommandError(error) from error
    click.echo(f"removed {site.name} <{site.feed}>; its posts leave the published pages at the next build")
