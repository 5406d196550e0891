"""New sites written into sites.yaml, keeping every byte of it.

:func:`open_planet` finds the end of the ``sites`` list and its indentation
(:func:`config.yamlfile.top_key`: ruamel.yaml reads the file round trip);
:func:`write` renders the new entries (quoted where YAML 1.1, which PyYAML
reads, would not read them back as the same text: :func:`config.yamlfile.list_entry`)
and inserts them as text after the last site, since dumping the whole
document would re-space aligned values and rewrite ``~``. The result goes to
a temporary file beside sites.yaml, is checked with load_config (the old
sites' names, then exactly the new sites), and replaces the file with
os.replace; on any error sites.yaml is untouched.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syndicator.config.load import load_config
from syndicator.config.yamlfile import TopKey, list_entry, read_text, top_key
from syndicator.configtypes import Config, Site
from syndicator.errors import ConfigError

__all__ = ["Planet", "entries_text", "open_planet", "replace_text", "write"]

#: A line that ends the YAML document: the ``sites`` list cannot go on past it.
_DOCUMENT_END = re.compile(r"(---|\.\.\.)(\s|$)")
#: A ``sites`` key with no sites yet: empty, ``[]``, ``~`` or ``null``; group 2 keeps a comment.
_EMPTY_SITES = re.compile(r"(\s*sites\s*:)[ \t]*(?:\[[ \t]*\]|~|null|Null|NULL)?([ \t]+#[^\r\n]*)?[ \t]*(?:\r?\n)?")


@dataclass(frozen=True)
class Planet:
    """A sites.yaml to add sites to, as :func:`open_planet` found it.

    Attributes:
        path: the file.
        sites: the sites it lists now, as load_config reads them (none yet: empty).
        user_agent: its User-Agent (load_config's), or None while it lists no site.
        head, tail: its text before and after the place new entries go; ``head``
            ends with a ``sites:`` line (added or cleared when the file had no site).
        dash, indent: the columns of a new entry's ``-`` and of its keys.
        newline: the file's line break ("\\n" or "\\r\\n").
    """

    path: Path
    sites: tuple[Site, ...]
    user_agent: str | None
    head: str
    tail: str
    dash: int
    indent: int
    newline: str


def open_planet(path: Path) -> Planet:
    """Read sites.yaml and find where new sites go: after its last site, or under a ``sites:`` key.

    A file that lists sites must load with load_config as it is; one that
    lists none yet (``sites`` missing, empty, ``[]``, ``~`` or ``null``) is
    checked when the new sites are written.

    Raises:
        ConfigError: the file is missing or unreadable, invalid (load_config's
            message), or its ``sites`` list is not written one ``- name:`` block per site.
    """
    if not path.exists():
        raise ConfigError(
            f"{path}: no such file; write one from the old planet's config with `syndicator init OLD_CONFIG`, "
            "or create it with the planet's title and link (docs/moving-in.md)"
        )
    text = read_text(path)
    try:
        sites = top_key(text, path, "sites")
    except ConfigError:
        load_config(path)  # names the line, when PyYAML too finds the file invalid
        raise
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if "\r\n" in text else "\n"
    if sites is None:
        head = text + ("" if not text or text.endswith("\n") else newline) + "sites:" + newline
        return Planet(path, (), None, head, "", 2, 4, newline)
    if sites.value == "block list":
        config = load_config(path)
        head, tail, dash, indent = _after_last_site(sites, lines, newline)
        return Planet(path, config.sites, config.user_agent, head, tail, dash, indent, newline)
    if sites.value == "other":
        load_config(path)  # names what is wrong with the sites
        raise ConfigError(f"{path}: sites: write one '- name:' block per site (not a [...] list) to add to it")
    assert sites.where is not None  # an empty value's
    line, column = sites.where
    match = _EMPTY_SITES.fullmatch(lines[line])
    if match is None:
        raise ConfigError(f"{path}:{line + 1}: sites: write 'sites:' alone on its line to add to it")
    head = "".join(lines[:line]) + match[1] + (match[2] or "") + newline
    return Planet(path, (), None, head, "".join(lines[line + 1 :]), column + 2, column + 4, newline)


def _after_last_site(sites: TopKey, lines: list[str], newline: str) -> tuple[str, str, int, int]:
    """(head, tail, dash, indent): the text up to the last site's last line, the rest, and the last site's columns.

    The list ends before the next top-level key or the document's end;
    blank and comment lines just before that stay after the new sites.
    """
    assert sites.last_item is not None  # a block list's
    line, indent = sites.last_item
    end = sites.next_key_line if sites.next_key_line is not None else len(lines)
    end = next((i for i in range(line + 1, end) if _DOCUMENT_END.match(lines[i])), end)
    while end > line + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    dash = lines[line].rfind("-", 0, indent)
    if dash < 0 or lines[line][dash + 1 : indent].strip():
        dash = max(0, indent - 2)
    head = "".join(lines[:end])
    return head if head.endswith("\n") else head + newline, "".join(lines[end:]), dash, indent


def entries_text(sites: Sequence[Site], dash: int, indent: int, newline: str = "\n") -> str:
    """YAML block-list entries for ``sites`` (``name``, ``feed``, and ``link``, ``face`` and ``extra`` if any),
    ``-`` at column ``dash`` and keys at column ``indent``; a value is quoted where YAML 1.1 would read it
    as anything but that text.

    A value that any YAML reader reads back as itself unquoted (:func:`_plain`) is written as it is;
    a site with any other value, or with ``extra``, is rendered by ruamel.yaml, whose emitter costs
    about 1 ms a site (a list of 100,000 feeds took minutes).
    """
    step = max(2, indent - dash)
    out: list[str] = []
    for site in sites:
        values: list[tuple[str, Any]] = [("name", site.name), ("feed", site.feed)]
        values += [(key, value) for key, value in (("link", site.link), ("face", site.face)) if value]
        if site.extra:
            out.append(list_entry(dict([*values, ("extra", dict(site.extra))]), dash, step, newline))
        elif all(_plain(value) for _, value in values):
            keys = [
                f"{' ' * dash}{'-' if n == 0 else ' '}{' ' * (step - 1)}{key}: {value}{newline}"
                for n, (key, value) in enumerate(values)
            ]
            out.append("".join(keys))
        else:
            out.append(list_entry(dict(values), dash, step, newline))
    return "".join(out)


#: Characters a plain value may hold after its first (a letter): word characters (Unicode letters and
#: digits), and punctuation that is an indicator only at a value's start or before a space.
_PLAIN_CHARS = re.compile(r"[\w .,/~+()?=&%;!$*:#@'\"-]*")
#: Words YAML 1.1 reads as booleans or null (PyYAML's resolver), compared in lower case.
_YAML11_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


def _plain(value: str) -> bool:
    """True when YAML (1.1 and 1.2) reads ``value`` written unquoted in block context back as that very text:
    it starts with an ASCII letter (no indicator, number, date or sexagesimal), holds only :data:`_PLAIN_CHARS`,
    has no ``": "`` or ``" #"`` and does not end with a space or colon, and is not a YAML 1.1 boolean or null."""
    return (
        value[:1].isascii()
        and value[:1].isalpha()
        and _PLAIN_CHARS.fullmatch(value, 1) is not None
        and ": " not in value
        and " #" not in value
        and value[-1] not in " :"
        and value.lower() not in _YAML11_WORDS
    )


def write(planet: Planet, sites: Sequence[Site]) -> None:
    """Add ``sites`` after the planet's last site, keeping every other byte, atomically.

    The new text must load with load_config, listing the old sites and then
    exactly ``sites`` (:func:`replace_text`). On any error the file is as it was.

    Raises:
        ConfigError: the result would not be valid (load_config's message,
            naming sites.yaml), or the folder cannot be written.
    """
    text = planet.head + entries_text(sites, planet.dash, planet.indent, planet.newline) + planet.tail
    old = len(planet.sites)

    def check(config: Config) -> bool:
        names = [s.name for s in config.sites[:old]]
        return names == [s.name for s in planet.sites] and config.sites[old:] == tuple(sites)

    replace_text(planet.path, text, check, "with the new sites")


def replace_text(path: Path, text: str, check: Callable[[Config], bool], change: str) -> None:
    """Replace sites.yaml ``path`` with ``text``, atomically, once it loads and reads back as meant.

    The text goes to a temporary file beside the file (a symlink's target),
    with the file's permissions (a new file's: as the umask allows), and must load with load_config and pass
    ``check`` (a False answer is a bug of ours: AssertionError); then it
    replaces the file (os.replace). On any error the file is as it was.

    Args:
        change: what the text changes, for the error (``with the new sites``).
    Raises:
        ConfigError: the result would not be valid (load_config's message naming ``path``,
            then ``(change; path was not changed)``), or the folder cannot be written.
    """
    target = Path(os.path.realpath(path))
    if not target.parent.is_dir():
        raise ConfigError(f"{path}: cannot write: there is no folder {target.parent}; create it first")
    try:
        handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise ConfigError(f"{path}: cannot write: {error.strerror or error}") from error
    temporary = Path(name)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(text.encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, _mode(target))
        try:
            config = load_config(temporary)
        except ConfigError as error:
            message = str(error).replace(str(temporary), str(path))
            raise ConfigError(f"{message} ({change}; {path} was not changed)") from None
        if not check(config):
            raise AssertionError(f"the new {path} does not read back as written")  # a bug of ours
        os.replace(temporary, target)
    except OSError as error:
        raise ConfigError(f"{path}: cannot write: {error.strerror or error}") from error
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _mode(target: Path) -> int:
    """The permissions the file gets: ``target``'s own, or for a new file read and write as the umask allows."""
    if target.exists():
        return stat.S_IMODE(target.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
