"""sites.yaml -> Config: :func:`load_config` reads and validates the file; :func:`reread` reads it again
for a running ``serve`` or ``worker``.

Everything is validated before any network or state change; an error is a
:class:`ConfigError` whose one-line message names the file, the line and the
field, e.g. ``sites.yaml:12: sites[3].feed: 'ftp://x' is not an http(s) URL``.
The planet's settings are :data:`settings.SETTINGS`; its sites are read by :mod:`config.sites`, the
other planets of ``planets:`` by :mod:`config.planets`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from syndicator import __version__
from syndicator.config.credentials import Secrets
from syndicator.config.fields import FieldError, check_duplicates, http_url, text
from syndicator.config.planets import read_planets
from syndicator.config.settings import SETTINGS, read_setting
from syndicator.config.sites import read_sites
from syndicator.config.yamlfile import LineDict, read_yaml
from syndicator.configtypes import Config
from syndicator.errors import ConfigError
from syndicator.values import number_text

_REQUIRED = ("title", "link", "sites")

#: What a running ``serve`` or ``worker`` keeps from the configuration it started with when it reads
#: sites.yaml again: its state, and the settings its fetcher was made with (its connections and the
#: requests under way use them). A change to these needs a restart.
KEPT_ON_RELOAD = ("state", "timeout", "retries", "max_bytes", "user_agent", "allow_private_networks")


def reread(running: Config, overrides: Mapping[str, Any] | None = None) -> Config:
    """sites.yaml (``running.path``) read again for a running ``serve`` or ``worker``: its sites and
    settings, with :data:`KEPT_ON_RELOAD` taken from ``running`` and ``overrides`` (the command line's
    options: field name -> value) applied over them.

    Raises:
        ConfigError: the file is missing or broken; the caller keeps ``running`` (one error line).
    """
    kept = {name: getattr(running, name) for name in KEPT_ON_RELOAD}
    return replace(load_config(running.path), **(kept | dict(overrides or {})))


def load_config(path: str | Path) -> Config:
    """Read and validate a sites.yaml file.

    Args:
        path: the file to read.
    Returns:
        the validated Config, with ``output`` and ``cache`` resolved against
        the file's folder.
    Raises:
        ConfigError: the file is missing, not YAML, or any field is invalid.
    """
    path = Path(path)
    data = read_yaml(path)
    try:
        return _build(path, data)
    except FieldError as e:
        raise ConfigError(f"{path}:{e.line}: {e.field}: {e.problem}") from None


def _build(path: Path, data: Any) -> Config:
    """The Config of the document ``data`` read from ``path``.

    Raises:
        FieldError: the first field that is missing, unknown, or invalid.
    """
    if not isinstance(data, LineDict):
        raise FieldError(1, "(top level)", "must be a mapping with title, link and sites")
    check_duplicates(data, "")
    known = set(_REQUIRED) | set(SETTINGS) | {"planets"}
    for key in data:
        if key not in known:
            expected = ", ".join(sorted(known))
            raise FieldError(data.lines[str(key)], str(key), f"unknown setting; expected one of {expected}")
    for key in _REQUIRED:
        if key not in data:
            raise FieldError(data.line, key, "is required")
    title = text(data, "title", data["title"])
    link = http_url(data, "link", data["link"])
    settings = {key: read_setting(data, key) for key in SETTINGS if key in data}
    base = path.parent
    for key in ("output", "cache"):
        settings[key] = base / settings.get(key, SETTINGS[key].default)
    if "secrets" in settings:
        settings["secrets"] = base / settings["secrets"]
    contact = settings.pop("user_agent", None) or link
    _check_intervals(data, settings)
    secrets = Secrets(settings.get("secrets"), os.environ, data.lines.get("secrets", 0))
    top = Config(
        path=path,
        title=title,
        link=link,
        sites=read_sites(data, base, secrets.find, _bounds(settings)),
        user_agent=f"syndicator/{__version__} (+{contact})",
        **{SETTINGS[key].attribute: value for key, value in settings.items()},
    )
    return replace(top, planets=read_planets(data, top))


def _bounds(settings: dict[str, Any]) -> tuple[float, float]:
    """The planet's (min_interval, max_interval), seconds: as sites.yaml gives them, else the defaults."""
    low, high = (settings.get(key, SETTINGS[key].default) for key in ("min_interval", "max_interval"))
    return float(low), float(high)


def _check_intervals(data: LineDict, settings: dict[str, Any]) -> None:
    """min_interval <= default_interval <= max_interval, each named with its line."""
    value = {
        key: settings.get(key, SETTINGS[key].default) for key in ("min_interval", "default_interval", "max_interval")
    }
    for low, high in (
        ("min_interval", "default_interval"),
        ("default_interval", "max_interval"),
        ("min_interval", "max_interval"),
    ):
        if value[low] > value[high]:
            key = low if low in data else high
            problem = f"{low} ({number_text(value[low])} s) must not exceed {high} ({number_text(value[high])} s)"
            raise FieldError(data.lines.get(key, data.line), key, problem)
