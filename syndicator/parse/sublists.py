"""Subscription lists and old planets' configs -> their feeds and settings: OPML, planet INI and rawdog
files, for ``syndicator import`` and ``init``.

Formats (:func:`read_planet`), told apart by their first character and their lines:

* OPML (``<``, or UTF-16 text that starts with it): every ``<outline>``
  with an ``xmlUrl``, nested ones (categories) included, as listparser
  reads them: the name is ``text``, else ``title``; outlines of
  ``type="source"`` are other lists, not feeds; the text of each element of
  ``<head>`` (``title``, ``ownerName``...) is the list's settings. The file is read streamed
  by lxml's pull parser, strictly (a malformed file is refused), under the
  XML encoding rules (XML 1.0 appendix F: a byte order mark, else the
  declaration, else UTF-8; listparser itself read bytes with lxml's HTML
  parser, as Latin-1, and garbled every non-ASCII name), with no DTD
  loaded, no network and no entity resolved; a file that declares an
  entity is refused (external entities read local files, nested ones
  expand without bound: "billion laughs"), and so is a value (attribute or
  text) over libxml2's limit of :data:`MAX_VALUE_BYTES`. Each element is
  dropped once read, so memory follows the feeds found, not the file.
* rawdog's config (a ``feed PERIOD URL`` line, no ``[section]``): :mod:`rawdog`.
* Planet INI (anything else): Planet Venus, Planet 2.0 and pluto, :mod:`planetini`.

Any list: at most :data:`MAX_LIST_BYTES` and :data:`MAX_LIST_FEEDS` feeds,
else refused in one line. lxml is imported inside the function that uses it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from syndicator.errors import ConfigError
from syndicator.parse.listtypes import Candidate, OldPlanet
from syndicator.parse.planetini import ini_text, read_ini
from syndicator.parse.rawdog import is_rawdog, read_rawdog

__all__ = ["MAX_LIST_BYTES", "MAX_LIST_FEEDS", "Candidate", "OldPlanet", "read_list", "read_planet"]

#: The largest subscription list read, in bytes (64 MiB: a list of 100,000 feeds takes about 15 MiB).
MAX_LIST_BYTES = 64 * 2**20
#: The most feeds one list may give (its outlines with an ``xmlUrl``, or its INI sections).
MAX_LIST_FEEDS = 100_000
#: The longest value (attribute or text) libxml2 reads without its "huge" option, in bytes.
MAX_VALUE_BYTES = 10_000_000


def read_list(path: Path) -> list[Candidate]:
    """The feeds a subscription list gives, in file order, repeats included (:func:`read_planet`'s feeds).

    Raises:
        ConfigError: as :func:`read_planet`.
    """
    return read_planet(path).feeds


def read_planet(path: Path) -> OldPlanet:
    """An old planet's config or a subscription list: its settings and its feeds.

    Args:
        path: an OPML file, a Planet Venus / Planet 2.0 / pluto INI file, or a rawdog config.
    Returns:
        the OldPlanet (URLs and names not checked yet).
    Raises:
        ConfigError: the file cannot be read, is larger than :data:`MAX_LIST_BYTES`,
            gives more than :data:`MAX_LIST_FEEDS` feeds, is malformed XML, declares
            an XML entity, is XML but not OPML, or is neither OPML, rawdog nor INI; the
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
    if is_rawdog(data.decode("latin-1")):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise ConfigError(f"{path}: not UTF-8 text (byte {error.start}): save it as UTF-8") from error
        return read_rawdog(path, text, MAX_LIST_FEEDS)
    return read_ini(path, ini_text(path, data), MAX_LIST_FEEDS)


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


def _read_opml(path: Path, head: bytes, file: BinaryIO) -> OldPlanet:
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
    return OldPlanet("opml", tuple(reader.head), reader.found)


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
        self.head: list[tuple[str, str]] = []  # the <head> elements' text: (name in lower case, text)

    def take(self, events: Iterable[tuple[str, Any]]) -> None:
        for event, element in events:
            if not self.started:
                self._root(element)
            if event == "start":
                if _local(element.tag).lower() == "outline":
                    self._outline(element)
                continue
            parent = element.getparent()
            if parent is not None and _local(str(parent.tag)).lower() == "head" and isinstance(element.tag, str):
                self.head.append((_local(element.tag).lower(), " ".join((element.text or "").split())))
            element.clear()  # "end": nothing of it is needed any more
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
