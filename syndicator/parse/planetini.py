"""Planet INI files -> :class:`listtypes.OldPlanet`: Planet Venus, Planet 2.0 and pluto configs, read with
configparser (no interpolation: URLs hold ``%``), for ``syndicator import`` and ``init``.

* Planet Venus and Planet 2.0 have one ``[FEED-URL]`` section per feed with ``name`` (and ``link``,
  ``face``); other keys of a feed section are passed to Venus's templates (``facewidth``...) and
  kept as the site's ``extra``, but for the ones that steer Venus itself (:data:`VENUS_MACHINERY`:
  filters, normalization overrides), which are dropped. The ``[Planet]`` section (any case) is
  the planet's own; sections it names in ``filters`` or ``template_files`` configure those, and a
  section whose ``content_type`` names a list format is a reading list (Venus's rules, its
  ``planet/config.py``).
* pluto has ``[id]`` sections with ``feed`` (or ``feed_url``, ``xml_url``), ``title`` or ``name``,
  ``link`` (or ``url``, ``html_url``) and ``avatar`` (or ``face``); the rest (``author``,
  ``location``, ``email``...) is kept as ``extra``, but ``include``/``exclude`` filters and
  ``encoding``, which are dropped (pluto's ``models/site.rb``). The planet's keys may come before
  any section.

A value written in quotes (``name = "Menno's Musings"``) loses them. The text is UTF-8 (a leading
byte order mark is dropped); a file that is not UTF-8 is read in the ``encoding`` its ``[Planet]``
section names, when it names one.
"""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path

from syndicator.errors import ConfigError
from syndicator.parse.listtypes import Candidate, OldPlanet

#: The section a pluto file's leading keys are read into (configparser wants a section first).
_TOP = "syndicator:top"
#: Keys of a Venus feed section that steer Venus itself rather than its templates (docs/config.html,
#: docs/normalization.html, docs/filters.html): syndicator has no per-site setting for them.
VENUS_MACHINERY = frozenset(
    {
        "filters",
        "filter",
        "exclude",
        "ignore_in_feed",
        "name_type",
        "title_type",
        "summary_type",
        "content_type",
        "future_dates",
        "xml_base",
        "cache_keep_entries",
        "new_feed_items",
        "items_per_page",
        "days_per_page",
        "activity_threshold",
        "feed_timeout",
        "encoding",
    }
)
#: pluto's names of a feed's URL, home page, name and image, best first (``models/site.rb``).
_PLUTO = {
    "feed": ("feed", "feed_url", "xml_url"),
    "link": ("link", "url", "html_url"),
    "name": ("title", "name"),
    "face": ("avatar", "face"),
}
_PLUTO_KEYS = frozenset(key for keys in _PLUTO.values() for key in keys)
#: pluto's feed keys that steer pluto itself: keyword filters and the feed's character encoding.
PLUTO_MACHINERY = frozenset({"include", "includes", "exclude", "excludes", "encoding", "charset"})
#: A ``content_type`` that makes a Venus section a reading list (Venus's ``reading_lists``).
_LIST_TYPES = ("opml", "foaf", "csv", "config")


def ini_text(path: Path, data: bytes) -> str:
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
        raise ConfigError(
            f"{path}: not an OPML file, and not UTF-8 text (byte {error.start}): save it as UTF-8, "
            "or name its encoding in its [Planet] section (encoding = latin-1)"
        ) from error


def _declared_encoding(text: str) -> str | None:
    """The ``encoding`` a planet INI file's ``[Planet]`` section gives, or None."""
    match = _ENCODING.search(text)
    return match[1] if match else None


#: ``encoding = NAME`` in a ``[Planet]`` section (any case), before the next section.
_ENCODING = re.compile(
    r"^\[planet\][ \t]*$(?:(?!^\[).)*?^[ \t]*encoding[ \t]*[=:][ \t]*([\w.:-]+)",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)


def read_ini(path: Path, text: str, max_feeds: int) -> OldPlanet:
    """The planet INI file ``path`` (its ``text``), at most ``max_feeds`` feeds.

    Raises:
        ConfigError: configparser cannot read it, it has more than ``max_feeds`` feeds, or neither
            a ``[Planet]`` section nor feeds (the message starts with the path).
    """
    unclosed = next((n for n, line in enumerate(text.splitlines(), 1) if _UNCLOSED.match(line)), None)
    if unclosed is not None:
        raise ConfigError(f"{path}: line {unclosed}: a section header without its closing ']'")
    parser, shift = _ini(text), 0
    if parser is None:  # pluto: the planet's keys come before any section
        parser, shift = _ini(f"[{_TOP}]\n{text}"), 1
    if isinstance(parser, configparser.DuplicateSectionError | configparser.DuplicateOptionError):
        raise ConfigError(f"{path}: {_ini_problem(parser, shift)}")
    if not isinstance(parser, configparser.ConfigParser):
        raise ConfigError(f"{path}: not an OPML file nor a planet INI file: {_ini_problem(parser, shift)}")
    planets = [s for s in parser.sections() if s.lower() == "planet" or s == _TOP]
    planet = next((parser[s] for s in planets if s != _TOP), None)
    others = set(planets)
    for key in ("filters", "template_files"):
        named = planet.get(key, "").split() if planet is not None else []
        others |= set(named) | {name.rsplit("/", 1)[-1] for name in named}
    lists = [s for s in parser.sections() if any(t in parser[s].get("content_type", "").lower() for t in _LIST_TYPES)]
    sections = [parser[s] for s in parser.sections() if s not in others and s not in lists]
    if len(sections) > max_feeds:
        raise ConfigError(f"{path}: more than {max_feeds:,} feeds: split the list")
    if not sections and planet is None:
        raise ConfigError(f"{path}: not an OPML file nor a planet INI file: no [Planet] section and no feeds")
    feeds = [_feed(section.name, {key: _unquoted(value) for key, value in section.items()}) for section in sections]
    pluto = _TOP in planets or any(set(_PLUTO["feed"]) & set(parser[s]) for s in parser.sections())
    settings = [(key, _unquoted(value)) for name in planets for key, value in parser[name].items()]
    skipped = [f"[{name}] section" for name in parser.sections() if name in others and name not in planets]
    return OldPlanet(
        "pluto" if pluto else "venus",
        tuple(settings),
        feeds,
        tuple(skipped + [f"reading list <{name}>" for name in lists]),
    )


def _feed(section: str, value: dict[str, str]) -> Candidate:
    """A feed section: pluto's when it names its feed (``feed``...), else Venus's (the section is the feed)."""
    if any(key in value for key in _PLUTO["feed"]):
        first = {field: next((value[k] for k in keys if value.get(k)), None) for field, keys in _PLUTO.items()}
        rest = [(k, v) for k, v in value.items() if k not in _PLUTO_KEYS]
        return Candidate(
            first["feed"] or "",
            first["name"] or section,
            first["link"],
            first["face"],
            tuple((k, v) for k, v in rest if k not in PLUTO_MACHINERY),
            tuple(k for k, _ in rest if k in PLUTO_MACHINERY),
        )
    rest = [(k, v) for k, v in value.items() if k not in ("name", "link", "face")]
    return Candidate(
        section,
        value.get("name", ""),
        value.get("link"),
        value.get("face") or None,
        tuple((k, v) for k, v in rest if k not in VENUS_MACHINERY),
        tuple(k for k, _ in rest if k in VENUS_MACHINERY),
    )


def _unquoted(text: str) -> str:
    """An INI value without the pair of double or single quotes around it, if any (``"Menno's Musings"``)."""
    text = text.strip()
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'" else text


#: A line that opens a section header and never closes it: configparser would read it as a key.
_UNCLOSED = re.compile(r"\s*\[[^\]]*$")


def _ini(text: str) -> configparser.ConfigParser | configparser.Error | None:
    """``text`` read by configparser (no interpolation: URLs hold ``%``), its error, or None when it
    needs a section first."""
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    try:
        parser.read_string(text)
    except configparser.MissingSectionHeaderError:
        return None
    except configparser.Error as error:
        return error
    return parser


def _ini_problem(error: configparser.Error | None, shift: int) -> str:
    """What configparser found wrong, in one line; ``shift``: lines added before the file's first."""
    if isinstance(error, configparser.DuplicateSectionError):
        return f"line {(error.lineno or 0) - shift}: [{error.section}] is listed twice (a site would be lost)"
    if isinstance(error, configparser.DuplicateOptionError):
        where = f"line {(error.lineno or 0) - shift}: "
        return f"{where}{error.option!r} is given twice in [{error.section}]"
    if isinstance(error, configparser.ParsingError) and error.errors:
        line, content = error.errors[0]  # content: the repr() of the line
        return f"line {line - shift}: cannot read {ast.literal_eval(content).strip()!r}"
    return " ".join(error.message.split()) if error is not None else "no section"
