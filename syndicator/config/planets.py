"""The ``planets:`` list of sites.yaml: more planets published from the same file, the same state and
one poller (docs/planets.md).

Each item is a mapping read with the same settings table as the top level (:data:`settings.SETTINGS`),
a setting left out taking the top level's value. Besides those it takes ``name`` (required: a slug,
shown in status and metrics), ``sites`` (names of top-level sites, and/or site mappings of its own),
``view_of`` (every site of another planet, whose filters apply too), ``templates`` (its own templates
folder) and ``output`` (required, distinct from every other planet's). The settings of the poller are
refused inside a planet: there is one poller, one state and one schedule for every planet.

An error names the file's line and the field's path, e.g. ``planets[1].output``.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from syndicator.config.credentials import Secrets
from syndicator.config.fields import FieldError, check_duplicate, http_url, text
from syndicator.config.settings import SETTINGS, read_setting
from syndicator.config.sites import read_sites
from syndicator.config.yamlfile import LineDict
from syndicator.configtypes import MAIN_PLANET, POLLER_FIELDS, Config, Site

__all__ = ["read_planets"]

#: What a planet takes besides the settings of the table.
_OWN_KEYS = ("name", "title", "link", "sites", "view_of", "templates")
#: A planet's name: a slug of lower-case letters, digits, ``-`` and ``_``, at most 40 characters.
_SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


def read_planets(data: LineDict, top: Config) -> tuple[Config, ...]:
    """The planets of the top-level mapping ``data`` (its ``planets`` key; () without one), each a whole
    Config made from ``top`` (the file's own planet, already read) and the item's settings.

    Raises:
        FieldError: ``planets`` is not a list of mappings, or an item is invalid: a key it does not
            take, a setting of the poller, a name that is missing, not a slug or used twice, an output
            missing or shared, a site name not among the top-level sites, a ``view_of`` naming no
            planet before it (the field named ``planets[i].key``).
    """
    if data.get("planets") is None:
        return ()
    items = data["planets"]
    if not isinstance(items, list):
        raise FieldError(data.lines["planets"], "planets", "must be a list of planets, each a mapping with a name")
    planets: list[Config] = []
    for index, item in enumerate(items):
        where = f"planets[{index}]"
        if not isinstance(item, LineDict):
            raise FieldError(data.lines["planets"], where, "must be a mapping with name, output and sites")
        try:
            planets.append(_planet(item, top, planets))
        except FieldError as error:
            raise FieldError(error.line, f"{where}.{error.field}", error.problem) from None
    return tuple(planets)


def _planet(item: LineDict, top: Config, earlier: list[Config]) -> Config:
    """One planet of ``planets:`` (``earlier``: those before it), its errors naming fields from the item."""
    check_duplicate(item, "")
    _check_keys(item)
    name = _name(item, earlier)
    base = top.path.parent
    settings = {key: read_setting(item, key) for key in SETTINGS if key in item and key not in POLLER_FIELDS}
    settings["output"] = base / settings["output"]
    _check_output(item, settings["output"], top, earlier)
    viewed = _viewed(item, top, earlier)
    planet = replace(
        top,
        name=name,
        title=text(item, "title", item["title"]) if "title" in item else top.title,
        link=http_url(item, "link", item["link"]) if "link" in item else top.link,
        sites=_sites(item, top, viewed),
        planets=(),
        view_of=viewed,
        templates=_templates(item, base),
        **{SETTINGS[key].attribute: value for key, value in settings.items()},
    )
    if planet.page_entries > planet.feed_entries and "page_entries" in item:
        raise FieldError(item.lines["page_entries"], "page_entries", "must not exceed feed_entries")
    return planet


def _check_keys(item: LineDict) -> None:
    """Refuse a setting of the poller, a key a planet does not take, and a planet without name or output."""
    for key in item:
        line = item.lines[str(key)]
        if key in POLLER_FIELDS:
            raise FieldError(line, str(key), "is a setting of the poller every planet shares: set it at the top level")
        if key not in _OWN_KEYS and key not in SETTINGS:
            expected = ", ".join(sorted({*_OWN_KEYS, *SETTINGS} - set(POLLER_FIELDS)))
            raise FieldError(line, str(key), f"unknown setting; expected one of {expected}")
    for key in ("name", "output"):
        if key not in item:
            raise FieldError(item.line, key, "is required")
    if "sites" not in item and "view_of" not in item:
        raise FieldError(item.line, "sites", "is required (or view_of, to publish another planet's sites)")


def _name(item: LineDict, earlier: list[Config]) -> str:
    """The planet's name: a slug (:data:`_SLUG`), not ``main`` (the file's own planet), used once."""
    value = item["name"]
    if not isinstance(value, str) or not _SLUG.fullmatch(value):
        raise FieldError(
            item.lines["name"], "name", f"{value!r} is not a name such as django: lower-case letters, digits, - and _"
        )
    if value == MAIN_PLANET:
        raise FieldError(item.lines["name"], "name", f"{MAIN_PLANET!r} is the name of the file's own planet")
    if any(planet.name == value for planet in earlier):
        raise FieldError(item.lines["name"], "name", f"another planet is named {value!r}")
    return value


def _check_output(item: LineDict, output: Path, top: Config, earlier: list[Config]) -> None:
    """Refuse an output folder that is another planet's, inside it, or holds it: each publish replaces
    its folder whole."""
    mine = output.resolve()
    for other in (top, *earlier):
        theirs = Path(other.output).resolve()
        if mine == theirs or theirs in mine.parents or mine in theirs.parents:
            owner = f"planet {other.name!r}" if other.name else "the top level"
            problem = f"{item['output']!r} must be apart from the output folder of {owner} ({other.output})"
            raise FieldError(item.lines["output"], "output", problem)
    cache = Path(top.cache).resolve()
    if cache == mine or mine in cache.parents:
        raise FieldError(item.lines["output"], "output", f"must not hold the cache folder {top.cache}")


def _viewed(item: LineDict, top: Config, earlier: list[Config]) -> Config | None:
    """The planet ``view_of`` names ("" or ``main``: the file's own; else one defined before this one),
    without its ``planets``, or None."""
    if "view_of" not in item:
        return None
    value = item["view_of"]
    if value in ("", None, MAIN_PLANET):
        return replace(top, planets=())
    for planet in earlier:
        if planet.name == value:
            return planet
    names = ", ".join(repr(p.name) for p in earlier) or "none yet"
    problem = f"{value!r} names no planet before this one ('' for the file's own; before it: {names})"
    raise FieldError(item.lines["view_of"], "view_of", problem)


def _sites(item: LineDict, top: Config, viewed: Config | None) -> tuple[Site, ...]:
    """The planet's sites: those of the planet it views, then those ``sites`` names (top-level sites, by
    name) or gives (mappings read as the top level's are), in that order, each name once."""
    sites: list[Site] = list(viewed.sites) if viewed is not None else []
    items = item.get("sites")
    if items is None:
        return tuple(sites)
    if not isinstance(items, list) or not items:
        raise FieldError(item.lines["sites"], "sites", "must be a non-empty list of site names or sites")
    by_name = {site.name: site for site in top.sites}
    for index, entry in enumerate(items):
        where = f"sites[{index}]"
        if isinstance(entry, str):
            if entry not in by_name:
                raise FieldError(item.lines["sites"], where, f"no site named {entry!r} at the top level")
            site = by_name[entry]
        else:
            site = _own_site(item, entry, index, top)
        if any(other.name == site.name for other in sites):
            raise FieldError(item.lines["sites"], where, f"the planet already has a site named {site.name!r}")
        sites.append(site)
    return tuple(sites)


def _own_site(item: LineDict, entry: Any, index: int, top: Config) -> Site:
    """A site mapping of the planet's own, read as a top-level site is (:func:`sites.read_sites`)."""
    one = LineDict(sites=[entry])
    one.lines = {"sites": item.lines["sites"]}
    secrets = Secrets(top.secrets, os.environ)  # a private site of the planet's own (docs/private-feeds.md)
    try:
        return read_sites(one, top.path.parent, secrets.find, (top.min_interval, top.max_interval))[0]
    except FieldError as error:
        raise FieldError(error.line, error.field.replace("sites[0]", f"sites[{index}]", 1), error.problem) from None


def _templates(item: LineDict, base: Path) -> Path | None:
    """The planet's ``templates`` folder (relative to the folder of sites.yaml), or None."""
    value = item.get("templates")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise FieldError(item.lines["templates"], "templates", "must be a folder path")
    return base / value.strip()
