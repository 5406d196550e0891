"""Subscription lists -> the feeds they give: OPML and planet INI files, for ``syndicator import``.

Formats (:func:`read_list`), told apart by the first character:

* OPML (``<``, or UTF-16 text that starts with it): every ``<outline>``
  with an ``xmlUrl``, nested ones (categories) included, as listparser
  reads them: the name is ``text``, else ``title``; outlines of
  ``type="source"`` are other lists, not feeds. The file is read streamed
  by lxml's pull parser, strictly (a malformed file is refused), under the
  XML encoding rules (XML 1.0 appendix F: a byte order mark, else the
  declaration, else UTF-8; listparser itself read bytes with lxml's HTML
  parser, as Latin-1, and garbled every non-ASCII name), with no DTD
  loaded, no network and no entity resolved; a file that declares an
  entity is refused (external entities read local files, nested ones
  expand without bound: "billion laughs"), and so is a value (attribute or
  text) over libxml2's limit of :data:`MAX_VALUE_BYTES`. Each element is
  dropped once read, so memory follows the feeds found, not the file.
* Planet INI (anything else), read with configparser: Planet Venus and
  Planet 2.0 have one ``[FEED-URL]`` section per feed with ``name`` (and
  ``link``); pluto has ``[id]`` sections with ``feed``, ``title`` or
  ``name``, and ``link``, and may start with keys outside any section. The
  ``[Planet]`` section (any case) is the planet's own, and sections it names
  in ``filters`` or ``template_files`` configure those (Venus's rule). A
  value written in quotes (``name = "Menno's Musings"``) loses them. The
  text is UTF-8 (a leading byte order mark is dropped); a file
  that is not UTF-8 is read in the ``encoding`` its ``[Planet]`` section
  names, when it names one.

Any list: at most :data:`MAX_LIST_BYTES` and :data:`MAX_LIST_FEEDS` feeds,
else refused in one line. lxml is imported inside the function that uses it.
"""

from __future__ import annotations

import ast
import configparser
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from syndicator.errors import ConfigError

#: The largest subscription list read, in bytes (64 MiB: a list of 100,000 feeds takes about 15 MiB).
MAX_LIST_BYTES = 64 * 2**20
#: The most feeds one list may give (its outlines with an ``xmlUrl``, or its INI sections).
MAX_LIST_FEEDS = 100_000
#: The longest value (attribute or text) libxml2 reads without its "huge" option, in bytes.
MAX_VALUE_BYTES = 10_000_000

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
        ConfigError: the file cannot be read, is larger than :data:`MAX_LIST_BYTES`,
            gives more than :data:`MAX_LIST_FEEDS` feeds, is malformed XML, declares
            an XML entity, is XML but not OPML, or is neither OPML nor INI; the
            message starts with the path.
    """
    try:
        with path.open("rb") as file:
            head = file.read(_SNIFF)
            if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<") or _utf16_xml(head):
                return _read_opml(path, head, file)
            data = head + _read_bounded(path, file, len(head))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from error
    return _read_ini(path, _ini_text(path, data))


#: Bytes read before telling OPML from INI: the first non-blank character tells.
_SNIFF = 64 * 1024
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _utf16_xml(head: bytes) -> bool:
    """True when ``head`` is UTF-16 text (a byte order mark) that starts with ``<``."""
    text = head[:512].decode("utf-16", "ignore") if head.startswith(_UTF16_BOMS) else ""
    return text.lstrip("\ufeff \t\r\n").startswith("<")


#: Bytes read at a time.
_CHUNK = 64 * 1024


def _read_bounded(path: Path, file: BinaryIO, done: int) -> bytes:
    """The rest of ``file`` after ``done`` bytes, refused past :data:`MAX_LIST_BYTES` in all."""
    data = file.read(max(0, MAX_LIST_BYTES + 1 - done))
    if done + len(data) > MAX_LIST_BYTES:
        raise ConfigError(_too_large(path))
    return data


def _too_large(path: Path) -> str:
    return f"{path}: larger than {MAX_LIST_BYTES // 2**20} MiB: split the list, or remove what is not a feed"


def _read_opml(path: Path, head: bytes, file: BinaryIO) -> list[Candidate]:
    """OPML, read streamed by lxml's pull parser (no DTD loaded, no network, no entity resolved):
    the XML encoding rules apply (a BOM, else the declaration, else UTF-8)."""
    from lxml import etree

    parser = etree.XMLPullParser(
        events=("start", "end"),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    reader = _Outlines(path)
    size, chunk = 0, head
    try:
        while chunk:
            size += len(chunk)
            if size > MAX_LIST_BYTES:
                raise ConfigError(_too_large(path))
            parser.feed(chunk)
            reader.take(parser.read_events())
            chunk = file.read(_CHUNK)
        parser.close()
        reader.take(parser.read_events())
    except etree.XMLSyntaxError as error:
        raise ConfigError(f"{path}: {_xml_problem(error, reader.found)}") from error
    if not reader.started:
        raise ConfigError(f"{path}: malformed XML: no element found")
    return reader.found


def _xml_problem(error: Exception, found: list[Candidate]) -> str:
    """libxml2's complaint in one line (``malformed XML: ...``), or what one of its limits means;
    ``found``: the feeds read before it, to name the place (libxml2's line is past a huge value)."""
    message = " ".join(str(getattr(error, "msg", "") or error).split())
    after = f"after feed {len(found)} <{found[-1].feed}>" if found else "before the first feed"
    if "Resource limit exceeded" in message:
        return f"a value longer than {MAX_VALUE_BYTES:,} bytes {after}: refused"
    if "amplification" in message:
        return f"entities that expand too far {after}: refused"
    return f"malformed XML: {message}"


class _Outlines:
    """The feeds of an OPML document, from lxml's pull events; each element is dropped once read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.started = False
        self.found: list[Candidate] = []

    def take(self, events: Iterable[tuple[str, Any]]) -> None:
        for event, element in events:
            if not self.started:
                self._root(element)
            if event == "start":
                if _local(element.tag).lower() == "outline":
                    self._outline(element)
                continue
            element.clear()  # "end": nothing of it is needed any more
            parent = element.getparent()
            while parent is not None and element.getprevious() is not None:
                del parent[0]

    def _root(self, root: Any) -> None:
        self.started = True
        dtd = root.getroottree().docinfo.internalDTD
        entity = next(iter(dtd.iterentities()), None) if dtd is not None else None
        if entity is not None:
            raise ConfigError(
                f"{self.path}: declares the XML entity {entity.name!r}: refused (an entity can read "
                "local files or expand without bound; OPML needs none)"
            )
        if not isinstance(root.tag, str) or _local(root.tag) != "opml":
            raise ConfigError(f"{self.path}: not an OPML file (its root element is <{_local(str(root.tag))}>)")

    def _outline(self, element: Any) -> None:
        attributes = {_local(key).lower(): value.strip() for key, value in element.attrib.items()}
        url = attributes.get("xmlurl")
        if not url or attributes.get("type", "").lower() == "source":  # type="source": another list
            return
        if len(self.found) >= MAX_LIST_FEEDS:
            raise ConfigError(f"{self.path}: more than {MAX_LIST_FEEDS:,} feeds: split the list")
        name = attributes.get("text") or attributes.get("title", "")
        self.found.append(Candidate(url, name, attributes.get("htmlurl") or None))


def _local(tag: str) -> str:
    """An XML name without its ``{namespace}``."""
    return tag.rsplit("}", 1)[-1]


def _ini_text(path: Path, data: bytes) -> str:
    """An INI file's text: UTF-8 (a BOM dropped), else the encoding its ``[Planet]`` section names
    (Venus's and Planet 2.0's ``encoding``), else refused naming the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        declared = _declared_encoding(data.decode("latin-1"))
        try:
            if declared is not None:
                return data.decode(declared)
        except (LookupError, UnicodeDecodeError):
            pass
        raise ConfigError(f"{path}: not an OPML file, and not UTF-8 text (byte {error.start})") from error


def _declared_encoding(text: str) -> str | None:
    """The ``encoding`` a planet INI file's ``[Planet]`` section gives, or None."""
    match = _ENCODING.search(text)
    return match[1] if match else None


#: ``encoding = NAME`` in a ``[Planet]`` section (any case), before the next section.
_ENCODING = re.compile(
    r"^\[planet\][ \t]*$(?:(?!^\[).)*?^[ \t]*encoding[ \t]*[=:][ \t]*([\w.:-]+)",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)


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
    if len(feeds) > MAX_LIST_FEEDS:
        raise ConfigError(f"{path}: more than {MAX_LIST_FEEDS:,} feeds: split the list")
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
