"""Subscription lists -> the feeds they give: OPML and planet INI files, for ``syndicator import``.

Formats (:func:`read_list`), told apart by the first character:

* OPML (``<``): every ``<outline>`` with an ``xmlUrl``, nested ones
  (categories) included, as listparser reads it: the name is ``text``, else
  ``title``; outlines of ``type="source"`` are other lists, not feeds.
  listparser reads leniently (lxml's HTML parser, recovering) and keeps
  neither ``htmlUrl`` nor repeated outlines, so the file is first parsed
  strictly with xml.etree: a malformed file is refused, and that parse gives
  each feed's home page and its repeated outlines.
* Planet INI (anything else), read with configparser: Planet Venus and
  Planet 2.0 have one ``[FEED-URL]`` section per feed with ``name`` (and
  ``link``); pluto has ``[id]`` sections with ``feed``, ``title`` or
  ``name``, and ``link``, and may start with keys outside any section. The
  ``[Planet]`` section (any case) is the planet's own, and sections it names
  in ``filters`` or ``template_files`` configure those (Venus's rule). A
  value written in quotes (``name = "Menno's Musings"``) loses them.

listparser is imported here only, inside the function that uses it.
"""

from __future__ import annotations

import ast
import configparser
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

#: The section a pluto file's leading keys are read into (configparser wants a section first).
_TOP = "syndicator:top"


@dataclass(frozen=True)
class Candidate:
    """A feed as a subscription list gives it.

    Attributes:
        feed: the feed URL as written (not checked yet).
        name: the name given (raw text, possibly empty).
        link: the home page given, or None (not checked yet).
    """

    feed: str
    name: str = ""
    link: str | None = None



def read_list(path: Path) -> list[Candidate]:
    """The feeds a subscription list gives, in file order, repeats included.

    Args:
        path: an OPML file, or a Planet Venus / Planet 2.0 / pluto INI file.
    Returns:
        a list of Candidate (URLs and names not checked yet).
    Raises:
        ConfigError: the file cannot be read, is malformed XML, is XML but
            not OPML, or is neither OPML nor INI; the message starts with the path.
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from error
    if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
        return _read_opml(path, data)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not an OPML file, and not UTF-8 text (byte {error.start})") from error
    return _read_ini(path, text)


def _read_opml(path: Path, data: bytes) -> list[Candidate]:
    import listparser

    try:
        root = ET.fromstring(data)  # noqa: S314 - a local file the user names; expat bounds entity expansion
    except ET.ParseError as error:
        raise ConfigError(f"{path}: malformed XML: {error}") from error
    if _local(root.tag) != "opml":
        raise ConfigError(f"{path}: not an OPML file (its root element is <{_local(root.tag)}>)")
    homes: dict[str, str] = {}
    repeats: dict[str, list[str]] = {}  # feed URL -> the names of its outlines after the first
    for element in root.iter():
        attributes = {_local(key).lower(): value.strip() for key, value in element.attrib.items()}
        url = attributes.get("xmlurl")
        if _local(element.tag).lower() == "outline" and url:
            repeats.setdefault(url, []).append(attributes.get("text") or attributes.get("title", ""))
            homes.setdefault(url, attributes.get("htmlurl", ""))
    found: list[Candidate] = []
    for feed in listparser.parse(data).feeds:
        home = homes.get(feed.url) or None
        found.append(Candidate(feed.url, feed.title, home))
        found += [Candidate(feed.url, name, home) for name in repeats.get(feed.url, [])[1:]]
    return found


def _local(tag: str) -> str:
    """An XML name without its ``{namespace}``."""
    return tag.rsplit("}", 1)[-1]


def _read_ini(path: Path, text: str) -> list[Candidate]:
    parser, shift = _ini(text), 0
    if parser is None:  # pluto: the planet's keys come before any section
        parser, shift = _ini(f"[{_TOP}]\n{text}"), 1
    if not isinstance(parser, configparser.ConfigParser):
        raise ConfigError(f"{path}: not an OPML file nor a planet INI file: {_ini_problem(parser, shift)}")
    planet = next((parser[s] for s in parser.sections() if s.lower() == "planet"), None)
    settings = {_TOP} | {s for s in parser.sections() if s.lower() == "planet"}
    for key in ("filters", "template_files"):
        named = planet.get(key, "").split() if planet is not None else []
        settings |= set(named) | {name.rsplit("/", 1)[-1] for name in named}
    feeds = [parser[s] for s in parser.sections() if s not in settings]
    if not feeds and planet is None:
        raise ConfigError(f"{path}: not an OPML file nor a planet INI file: no [Planet] section and no feeds")
    found = []
    for section in feeds:
        value = {key: _unquoted(text) for key, text in section.items()}
        if "feed" in value:  # pluto
            name = value.get("title") or value.get("name") or section.name
            found.append(Candidate(value["feed"], name, value.get("link")))
        else:  # Venus: the section's name is the feed
            found.append(Candidate(section.name, value.get("name", ""), value.get("link")))
    return found


def _unquoted(text: str) -> str:
    """An INI value without the pair of double or single quotes around it, if any (``"Menno's Musings"``)."""
    text = text.strip()
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'" else text


def _ini(text: str) -> configparser.ConfigParser | configparser.Error | None:
    """``text`` read by configparser (no interpolation: URLs hold ``%``), its error, or None when it
    needs a section first."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.MissingSectionHeaderError:
        return None
    except configparser.Error as error:
        return error
    return parser


def _ini_problem(error: configparser.Error | None, shift: int) -> str:
    """What configparser found wrong, in one line; ``shift``: lines added before the file's first."""
    if isinstance(error, configparser.ParsingError) and error.errors:
        line, content = error.errors[0]  # content: the repr() of the line
        return f"line {line - shift}: cannot read {ast.literal_eval(content).strip()!r}"
    return " ".join(error.message.split()) if error is not None else "no section"
