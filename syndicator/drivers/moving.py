"""``syndicator init``: a whole new sites.yaml from an old planet's config (Planet Venus, Planet 2.0,
pluto, rawdog, OPML).

read_planet(OLD) | settings mapped (:mod:`oldsettings`) | plan(no sites yet) | write(sites.yaml).

The old planet's settings that sites.yaml has are written, each with a comment naming the old
key; every other one, and every per-feed setting no site takes, is one line
``not supported: X (why)``, printed and written as a comment at the top of the new file. The
sites are planned by the merge rules of :mod:`merge` (faces, template values as ``extra``), and the
file is written as ``import`` writes one (:func:`sitesfile.write`: checked with load_config, then
swapped in); an existing file is kept unless ``force``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syndicator.config.fields import FieldError, image_problem, text
from syndicator.config.settings import SETTINGS, read_setting
from syndicator.config.yamlfile import LineDict, mapping_text
from syndicator.configtypes import Site
from syndicator.drivers.merge import Skip, plan
from syndicator.drivers.oldsettings import KINDS, MAPPED, feed_reason, reason
from syndicator.drivers.sitesfile import Planet, write
from syndicator.errors import ConfigError
from syndicator.parse.sublists import OldPlanet, read_planet
from syndicator.values import strip_control, url_problem

__all__ = ["Moved", "init_planet"]

#: The longest old value quoted in a "not supported" line, in characters.
_SHOWN_CHARS = 60


@dataclass(frozen=True)
class Moved:
    """What ``init`` wrote.

    Attributes:
        path: the new sites.yaml; source: the old config; kind: its kind (:data:`oldsettings.KINDS`).
        sites: the sites written, in the old config's order.
        skipped: the old config's feeds left out (repeats, URLs that are not http(s)).
        notes: one line per thing not carried over (``not supported: X (why)``), then advice.
    """

    path: Path
    source: Path
    kind: str
    sites: tuple[Site, ...]
    skipped: tuple[Skip, ...]
    notes: tuple[str, ...]

    def lines(self) -> list[str]:
        """What ``init`` prints: the summary line, then each skipped feed and each note (list of str)."""
        linked = sum(site.link is not None for site in self.sites)
        others = " (the others show their feed's own home page after the first build)" * (linked < len(self.sites))
        plural = "site" if len(self.sites) == 1 else "sites"
        summary = (
            f"wrote {self.path} from {self.source} ({KINDS[self.kind]}): {len(self.sites)} {plural}, "
            f"{linked} with a link{others}, {len(self.skipped)} skipped"
        )
        skips = [f"skipped {_shown(s.candidate.name) or '(no name)'}: {s.reason}" for s in self.skipped]
        return [summary, *skips, *self.notes]


def init_planet(
    source: Path, output: Path, *, force: bool = False, title: str | None = None, link: str | None = None
) -> Moved:
    """Write ``output`` (a new sites.yaml) from the old planet's config ``source``.

    Args:
        force: replace ``output`` when it exists.
        title, link: the planet's title and public home page, over what ``source`` says (a
            pluto or OPML file names no home page).
    Returns:
        what was written (Moved).
    Raises:
        ConfigError: ``output`` exists (and not ``force``), ``source`` cannot be read
            (:func:`read_planet`), names no title or link and none was given, or gives no usable
            feed; or the new file cannot be written. Nothing is written then.
    """
    if (output.exists() or output.is_symlink()) and not force:
        raise ConfigError(f"{output}: already exists; give --force to replace it, or --output to write another file")
    old = read_planet(source)
    settings, comments, notes = _settings(old)
    for key, value, given in (("title", title, "--title"), ("link", link, "--link")):
        if value is not None:
            settings[key], comments[key] = value, given
        if key not in settings:
            raise ConfigError(f"{source}: names no {_WHAT[key]} for the planet; give it with {given}")
    result = plan((), old.feeds, str(source))
    if not result.added:
        raise ConfigError(f"{source}: no feed with an http(s) URL to list; nothing was written")
    notes += _feed_notes(old, result.added)
    head = _header(source, old.kind, notes) + _settings_text(settings, comments) + "sites:\n"
    write(Planet(output, (), None, head, "", 2, 4, "\n"), result.added)
    return Moved(output, source, old.kind, result.added, result.skipped, tuple(notes))


_WHAT = {"title": "title", "link": "public home page (link)"}


def _settings(old: OldPlanet) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """({our setting: value}, {our setting: the old key it came from}, not-supported lines) of ``old``'s settings."""
    settings: dict[str, Any] = {}
    comments: dict[str, str] = {}
    notes: list[str] = []
    table = MAPPED[old.kind]
    for key, value in old.settings:
        shown = f"{key} = {_shown(value)}"
        mapped = table.get(key)
        if mapped is None:
            notes.append(f"not supported: {shown} ({reason(old.kind, key)})")
            continue
        if mapped.setting in settings:
            notes.append(f"not supported: {shown} ({mapped.setting} is already set from {comments[mapped.setting]})")
            continue
        converted = mapped.convert(value)
        problem = "off, or not a value syndicator reads" if converted is None else _problem(mapped.setting, converted)
        if problem is not None:
            notes.append(f"not supported: {shown} (as {mapped.setting}: {problem})")
            continue
        settings[mapped.setting], comments[mapped.setting] = converted, key
    return settings, comments, notes


def _problem(setting: str, value: Any) -> str | None:
    """What sites.yaml would say of ``value`` as ``setting``, or None when it reads it."""
    if setting == "link":
        return url_problem(value)
    data = LineDict({setting: value})
    data.lines = {setting: 1}
    try:
        if setting == "title":
            text(data, setting, value)
        elif setting in SETTINGS:
            read_setting(data, setting)
    except FieldError as error:
        return error.problem
    return None


def _feed_notes(old: OldPlanet, sites: tuple[Site, ...]) -> list[str]:
    """Not-supported lines for the per-feed settings, the files' other parts and faces, and the advice on faces."""
    counts = Counter(key for candidate in old.feeds for key in dict.fromkeys(candidate.dropped))
    notes = [f"not supported: per-site {key}, on {n} sites ({feed_reason(key)})" for key, n in counts.items()]
    notes += [f"not supported: {_shown(other)} ({_other_reason(other)})" for other in old.others]
    bad = sum(1 for candidate in old.feeds if candidate.face and image_problem(candidate.face) is not None)
    if bad:
        notes.append(f"not supported: face on {bad} sites (neither an http(s) URL nor a path such as faces/a.png)")
    files = sorted({site.face for site in sites if site.face and "://" not in site.face})
    if files:
        notes.append(
            f"note: {len(files)} faces are image files ({', '.join(files[:3])}{', ...' * (len(files) > 3)}): "
            "put them in a static/ folder beside sites.yaml, at those paths"
        )
    return notes


def _other_reason(other: str) -> str:
    """Why a part of the old config that is neither a setting nor a feed is not carried over."""
    if other.startswith("reading list"):
        return "reading lists are not fetched; save the list and add it with syndicator import"
    if other.startswith("include"):
        return "add that file's feeds with syndicator import"
    return (
        "a Venus template's or filter's own settings; syndicator's templates take none, and its filters are "
        "keep and drop rules of filters (docs/filters.md)"
    )


def _shown(value: str) -> str:
    """An old value on one line, cut to :data:`_SHOWN_CHARS` characters."""
    line = " ".join(strip_control(value).split())
    return line if len(line) <= _SHOWN_CHARS else line[: _SHOWN_CHARS - 1] + "\u2026"


def _header(source: Path, kind: str, notes: list[str]) -> str:
    """The new file's first lines: where it came from and what was not carried over (comments)."""
    lines = [f"# Written by `syndicator init` from {_shown(source.name)} ({KINDS[kind]})."]
    lines += ["# Every old setting and where it goes: docs/moving-in.md. Not carried over, and to do:"] * bool(notes)
    lines += [f"#   {note}" for note in notes]
    return "".join(line + "\n" for line in lines if line) + "\n"


def _settings_text(settings: dict[str, Any], comments: dict[str, str]) -> str:
    """The settings as YAML, title and link first, each with a comment naming the old key it came from."""
    order = ["title", "link", *(key for key in settings if key not in ("title", "link"))]
    out = []
    for key in order:
        line = mapping_text({key: settings[key]}).rstrip("\n")
        out.append(f"{line}  # {_shown(comments[key])}\n" if "\n" not in line else line + "\n")
    return "".join(out) + "\n"
