"""MkDocs hook: the pages made from the code at build time, so they cannot go stale and are never
committed. A page holds a block from a line ``<!-- generated: NAME -->`` to a line
``<!-- end generated -->`` (between them, a word for whoever reads the page unbuilt, on GitHub say); the
hook puts in its place the Markdown that :data:`GENERATORS` makes for NAME:

- ``settings``: every optional setting of sites.yaml, from the config table (syndicator/config/settings.py);
- ``sitesettings``: the settings a site may give, from syndicator/config/sitesettings.py;
- ``commands``: every command with its synopsis, help and options, from the click commands (syndicator/cli).

An unknown NAME fails the build. The build runs in the project's venv, which has syndicator installed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from syndicator.cli.reference import commands_reference
from syndicator.config.reference import settings_table, site_settings_table

GENERATORS: dict[str, Callable[[], str]] = {
    "settings": settings_table,
    "sitesettings": site_settings_table,
    "commands": commands_reference,
}
MARKER = re.compile(r"^<!-- generated: ([a-z]+) -->\n.*?^<!-- end generated -->$", re.MULTILINE | re.DOTALL)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """The page's Markdown with each generated block replaced by what its generator makes."""

    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{page.file.src_path}: no generator named {name!r} (known: {', '.join(GENERATORS)})")
        return GENERATORS[name]()

    return MARKER.sub(generated, markdown)
