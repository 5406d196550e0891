"""``syndicator preview``: the output folder served on loopback, to look at the planet in a browser,
until Ctrl-C."""

from __future__ import annotations

from pathlib import Path

import click

from syndicator.cli.options import config_option
from syndicator.cli.style import Command, CommandError
from syndicator.config.load import load_config
from syndicator.config.union import planet_named
from syndicator.configtypes import MAIN_PLANET
from syndicator.errors import SyndicatorError


@click.command(cls=Command)
@config_option("The site list whose output folder is shown (its 'output' setting).")
@click.option(
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to show (default: 'output' in sites.yaml, else public/); sites.yaml is then not read.",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on (0: a free one)."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; another than a loopback one lets other machines see the preview.",
)
@click.option(
    "--planet",
    metavar="NAME",
    help="Show this planet of 'planets:' in sites.yaml (its 'output'; 'main': the file's own, the default).",
)
def preview(config_path: Path, output: Path | None, port: int, host: str, planet: str | None) -> None:
    """Serve the built site on this machine to look at it in a browser, until Ctrl-C.

    Prints the URL to open. Only what a build publishes is served: no
    hidden file (a .git folder), no folder listing.
    """
    from syndicator.drivers.preview import is_loopback, preview_server, url_of  # here: other commands need not

    try:
        folder = output if output is not None else planet_named(load_config(config_path), planet or MAIN_PLANET).output
        server = preview_server(folder, host, port)
    except SyndicatorError as error:
        raise CommandError(error) from error
    url = url_of(server)
    if not is_loopback(host):
        click.echo(f"syndicator: warning: listening on {host}: other machines can see the preview", err=True)
    click.echo(f"Serving {folder} at {url} (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        server.server_close()
