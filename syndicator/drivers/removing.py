"""``syndicator remove NAME``: one site taken out of sites.yaml, every other byte of the file kept.

read sites.yaml (load_config: the sites; ruamel.yaml round trip: where each list item starts)
| cut the site's lines | check and replace the file (:func:`sitesfile.replace_text`).

A site's lines run from its ``-`` to the line before the next site's; blank and comment lines at
the end of that run are kept, as they stand before what follows (the next site, the next key).
Comments inside the site's own block go with it; every other comment and the layout stay.
The source's stored state is kept: its posts leave the published pages at the next build (which
publishes the sites listed), and the state is there again if the site is added back.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from syndicator.config.load import load_config
from syndicator.config.yamlfile import read_text, top_key
from syndicator.configtypes import Config, Site
from syndicator.drivers.sitesfile import replace_text
from syndicator.errors import ConfigError

__all__ = ["remove_site"]


def remove_site(config_path: Path, name: str) -> Site:
    """Remove the site named ``name`` (white space runs as one space, as sites.yaml's names are read)
    from ``config_path``, keeping the rest of the file as it is, atomically.

    Returns:
        the Site removed.
    Raises:
        ConfigError: the file is missing or invalid (load_config's message), no site has that name
            (the message suggests close names), it is the only site (a planet lists at least one),
            or its ``sites`` list is not written one ``- name:`` block per site; nothing is written.
    """
    config = load_config(config_path)
    wanted = " ".join(name.split())
    names = [site.name for site in config.sites]
    if wanted not in names:
        raise ConfigError(f"no site named {name!r} in {config_path}{_suggestion(wanted, names)}")
    index = names.index(wanted)
    if len(names) == 1:
        raise ConfigError(f"{wanted!r} is the only site in {config_path}; a planet lists at least one")
    text = read_text(config_path)
    lines = text.splitlines(keepends=True)
    start, end = _site_lines(text, config_path, lines, index)
    kept = config.sites[:index] + config.sites[index + 1 :]

    def check(new: Config) -> bool:
        return new.sites == kept

    replace_text(config_path, "".join(lines[:start] + lines[end:]), check, f"without {wanted!r}")
    return config.sites[index]


def _site_lines(text: str, path: Path, lines: list[str], index: int) -> tuple[int, int]:
    """(first line, line after the last) of the ``index``-th site of ``sites``, 0-based, as the module
    docstring says. Raises ConfigError for a ``sites`` list that is not a block list."""
    sites = top_key(text, path, "sites")
    if sites is None or sites.value != "block list":
        raise ConfigError(f"{path}: sites: write one '- name:' block per site (not a [...] list) to remove one")
    starts = [_dash_line(lines, line, column) for line, column in sites.items]
    start = starts[index]
    if index + 1 < len(starts):
        end = starts[index + 1]
    else:
        end = sites.next_key_line if sites.next_key_line is not None else len(lines)
        end = next((i for i in range(start + 1, end) if lines[i].startswith(("---", "..."))), end)
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return start, end


def _dash_line(lines: list[str], line: int, column: int) -> int:
    """The line of the ``-`` of the list item whose value starts at (``line``, ``column``): that line, or
    the line above for an item written ``-`` alone on its line."""
    if "-" in lines[line][:column]:
        return line
    above = line - 1
    while above > 0 and (not lines[above].strip() or lines[above].lstrip().startswith("#")):
        above -= 1
    return above


def _suggestion(name: str, names: list[str]) -> str:
    """``; did you mean 'X'?`` (or ``'X' or 'Y'``) for names close to ``name`` (case aside), else ""."""
    folded = {known.casefold(): known for known in names}
    close = difflib.get_close_matches(name.casefold(), list(folded), n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(folded[match]) for match in close) + "?"
