"""The settings page of the docs, made from :data:`settings.SETTINGS`: :func:`settings_table`, a Markdown
table of every optional setting of sites.yaml (its name, default, what it takes and what it means), and
:func:`site_settings_table`, of those a site may give (:data:`sitesettings.SITE_SETTINGS`).

The docs' MkDocs hook (docs/hooks/generate.py) puts it in docs/reference/settings.md at build time, so the
page says what the code reads and cannot go stale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from syndicator.config.readers import DURATIONS, TAKES
from syndicator.config.settings import SETTINGS, Setting
from syndicator.config.sitesettings import SITE_SETTINGS
from syndicator.values import bound_text


def shown_default(setting: Setting) -> str:
    """The default of ``setting`` as the page shows it (Markdown): ``8``, ``4 days``, ``false``, none."""
    value: Any = setting.default
    if value in (None, "", ()) or (not isinstance(value, int | float) and not value):  # Filters(): none
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if setting.read in DURATIONS:
        return bound_text(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value.as_posix() if isinstance(value, Path) else value}`"


def _cell(text: str) -> str:
    """``text`` fit for a Markdown table cell: ``|`` escaped, ``<`` written as an entity."""
    return text.replace("|", "\\|").replace("<", "&lt;")


def settings_table() -> str:
    """Every optional setting as a Markdown table, in the order sites.yaml is read (str, one row each).

    Raises:
        KeyError: a setting's reader does not say what it takes (:data:`readers.TAKES`).
    """
    rows = ["| setting | default | takes | meaning |", "|---|---|---|---|"]
    for setting in SETTINGS.values():
        cells = (f"`{setting.name}`", shown_default(setting), TAKES[setting.read], setting.means)
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def site_settings_table() -> str:
    """Every setting a site may give as a Markdown table, in the order they are read (str, one row each):
    its name, whether it overrides the planet's setting of that name, what it takes and what it means."""
    rows = ["| site setting | overrides the planet's | takes | meaning |", "|---|---|---|---|"]
    for setting in SITE_SETTINGS.values():
        cells = (f"`{setting.name}`", "yes" if setting.planet else "no", TAKES[setting.read], setting.means)
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows) + "\n"
