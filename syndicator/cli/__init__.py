"""The ``syndicator`` command: the click group :func:`main` (the console entry point) and its
commands, one module of this package per family. The only package that imports click.

Exit codes: 0 success; 1 an unexpected error (a bug: please report it with
the traceback); 2 bad sites.yaml or command-line usage; 3 the build found no
entries at all and published nothing; 4 another build holds the cache or the
output folder; 5 the state database cannot be used; 6 the site could not be
written; 7 the site was published, but some sources hit an internal error (a
bug: please report it with the tracebacks logged); 8 more sites are failing than
--fail-on allows (``status --failing``: any); 130 stopped by Ctrl-C (SIGINT) and 143 by
SIGTERM, as a shell counts them (docs/monitoring.md).
"""

from __future__ import annotations

import click

from syndicator import __version__
from syndicator.cli import build, filtertest, preview, serve, sitelist, status, worker
from syndicator.cli.style import Group


@click.group(name="syndicator", cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="syndicator")
def main() -> None:
    """Build a planet-style static site from the feeds listed in sites.yaml."""


for _command in (
    build.build,
    status.status,
    sitelist.init,
    sitelist.discover,
    sitelist.import_,
    sitelist.add,
    sitelist.remove,
    serve.serve,
    preview.preview,
    worker.worker,
    filtertest.filter_,
):
    main.add_command(_command)
