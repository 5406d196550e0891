"""sites.yaml -> Config. The only module that imports yaml.

Everything is validated before any network or state change; an error is a
:class:`ConfigError` whose one-line message names the file, the line and the
field, e.g. ``sites.yaml:12: sites[3].feed: 'ftp://x' is not an http(s) URL``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from syndicator import __version__
from syndicator.configtypes import Config, Delivery, Site
from syndicator.errors import ConfigError
from syndicator.language import language_tag
from syndicator.urls import is_postgres_url, secretless, shown
from syndicator.values import NO_CREDENTIALS, bound_text, number_text, parse_duration, strip_control, url_problem
from syndicator.values import is_http_url as is_http_url  # re-exported: config.is_http_url was public

_SITE_KEYS = ("name", "feed", "link", "face", "language", "extra")
#: A site's name is shown in every output: at most this many characters, none of them control
#: characters (runs of white space, line breaks and tabs included, are one space).
NAME_MAX_CHARS = 200
#: Characters a site's name must not hold: the bidirectional controls (Unicode's Bidi_Control property,
#: UAX #9 section 2: ALM U+061C, LRM/RLM U+200E-F, the embeddings and overrides U+202A-E, the isolates
#: U+2066-9), which reorder the text shown around them, and the invisible ones that hide a difference
#: (zero-width space U+200B, word joiner and invisible operators U+2060-4, byte order mark U+FEFF). The
#: joiners U+200C-D stay: scripts and emoji need them.
NAME_HIDDEN = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_REQUIRED = ("title", "link", "sites")
#: Most fetch threads (the --workers option has the same bound).
WORKERS_MAX = 64
_DAY = 86400.0


class _Setting(NamedTuple):
    """How one optional setting is read: kind (int, number, duration, url, path), default, and bounds.

    Durations are seconds; ints are counts (max_bytes: bytes). The bounds are
    inclusive and documented in README.md ("Configuration").
    """

    kind: str
    default: Any
    minimum: float = 0
    maximum: float = 0


_SETTINGS: dict[str, _Setting] = {
    "workers": _Setting("int", 8, 1, WORKERS_MAX),
    "timeout": _Setting("duration", 15.0, 1, 300),
    "retries": _Setting("int", 1, 0, 5),
    "items_per_feed": _Setting("int", 5, 1, 100),
    "feed_entries": _Setting("int", 1000, 1, 100_000),
    "summary_chars": _Setting("int", 600, 20, 100_000),
    "stale_after": _Setting("duration", 4 * _DAY, 60, 365 * _DAY),
    "max_bytes": _Setting("int", 10 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    "user_agent": _Setting("url", None),
    "output": _Setting("path", "public"),
    "cache": _Setting("path", "cache"),
    # The schedule (README.md, "Polite polling"): first interval, and bounds of every interval.
    "default_interval": _Setting("duration", 3600.0, 60, 7 * _DAY),
    "min_interval": _Setting("duration", 900.0, 60, 7 * _DAY),
    "max_interval": _Setting("duration", _DAY, 60, 7 * _DAY),
    # The request budget the schedule spends where posts are likely (README.md, "How often a feed is checked").
    "requests_per_feed_per_day": _Setting("number", 14.5, 0.1, 1440),
    # Host fairness: requests at once, seconds between starts, failures that skip a host.
    "per_host_concurrency": _Setting("int", 2, 1, 16),
    "host_gap": _Setting("duration", 0.5, 0, 60),
    "host_breaker": _Setting("int", 5, 0, 1000),
    # URLs learned from the network (redirects, advertised feeds and hubs on another host) may reach
    # loopback and private addresses (README.md, "Private networks"; netguard.py).
    "allow_private_networks": _Setting("bool", False),
    # The pages (README.md, "Configuration"): who runs the planet, how it shows times, how much it shows.
    "description": _Setting("text", ""),
    "owner": _Setting("text", ""),
    "logo": _Setting("image", None),
    "favicon": _Setting("image", None),
    "timezone": _Setting("timezone", "UTC"),
    "date_format": _Setting("date_format", "%Y-%m-%d %H:%M %Z"),
    "page_entries": _Setting("int", 60, 1, 10_000),
    "feed_content": _Setting("choice", "full", 0, 0),
    "activity_threshold": _Setting("duration", 180 * _DAY, _DAY, 3650 * _DAY),
    # Running from CI (README.md, "Running from CI"): the state published beside the site, and where to
    # restore it from when the cache folder is empty.
    "snapshot": _Setting("bool", False),
    "restore_from": _Setting("location", None),
    # The planet as a WebSub publisher (README.md, "Your planet as a WebSub publisher"): the hubs its feeds
    # advertise and announce.py notifies; stored as Config.hubs.
    "hub": _Setting("hubs", ()),
    # Where the state lives (README.md, "The state in PostgreSQL"): a postgresql:// URL; absent, the SQLite
    # database in the cache folder.
    "state": _Setting("state", None),
    # Webhooks (README.md, "Deliveries (webhooks)"): where each new or changed entry is POSTed, signed.
    "deliveries": _Setting("deliveries", ()),
}
#: The values a "choice" setting takes, first the default.
_CHOICES = {"feed_content": ("full", "summary")}
#: Longest free text a setting holds (description, owner), and longest date format, in characters.
TEXT_MAX_CHARS = 1000
DATE_FORMAT_MAX_CHARS = 100
#: Most WebSub hubs ``hub`` may name: each is sent a request after every build that changed a feed.
HUBS_MAX = 4
#: Most webhooks ``deliveries`` may name: each event is POSTed to every one of them.
DELIVERIES_MAX = 16


class _LineDict(dict[str, Any]):
    """A mapping that remembers the line (1-based) of itself and each key.

    ``duplicate`` is the first key written twice, as (key, line, first line),
    or None; it is reported by whoever knows the mapping's path.
    """

    line = 0
    lines: dict[str, int]
    duplicate: tuple[str, int, int] | None = None


#: Aliases (``*name``, YAML 1.2 section 3.2.2.2) repeat an anchored value (``&name``) without copying it in
#: the file; written out in full, they may add at most this many values (scalars, lists, mappings) to it. A
#: "billion laughs" file of 1 KB, nine aliases of nine aliases nine levels deep, would add 387 million.
ALIAS_VALUES_MAX = 100_000
#: Most levels of lists and mappings inside one another (aliases written out); more would exhaust the stack.
NESTING_MAX = 64


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A safe loader whose mappings record line numbers and duplicate keys (libyaml's, when PyYAML has it).

    The document's nodes are checked by :func:`_check_nodes` before any value is built from them, so
    aliases and nesting are bounded before they cost memory.
    """

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _check_nodes(node)
        return self.construct_document(node)


def _children(node: yaml.Node) -> list[tuple[yaml.Node, int]]:
    """The nodes inside ``node``, each with the line (1-based) that names it: a key's own line for a mapping's
    keys and values, the list's first line for its items (an alias's node is its anchor's, elsewhere)."""
    if isinstance(node, yaml.MappingNode):
        return [(child, key.start_mark.line + 1) for key, value in node.value for child in (key, value)]
    if isinstance(node, yaml.SequenceNode):
        return [(child, node.start_mark.line + 1) for child in node.value]
    return []


def _check_nodes(root: yaml.Node) -> None:
    """Refuse a document whose aliases, written out, add more than :data:`ALIAS_VALUES_MAX` values, that nests
    deeper than :data:`NESTING_MAX`, or where an alias is inside the value it names.

    One walk in document order over the composed nodes (an alias is the very node it names): a node seen
    for the first time is walked; one seen before is an alias, and adds its size written out (counted
    when its walk ended). Linear in the file's size, whatever the aliases expand to.

    Raises:
        _FieldError: naming the line of the alias (the line of its key, or of its list).
    """
    size: dict[int, int] = {}  # id(node) -> values, aliases written out, of a node whose walk ended
    depth: dict[int, int] = {}  # id(node) -> levels inside it, likewise
    walking: set[int] = set()
    added = 0
    stack: list[tuple[yaml.Node, list[tuple[yaml.Node, int]]]] = [(root, _children(root)[::-1])]
    walking.add(id(root))
    while stack:
        node, todo = stack[-1]
        if not todo:
            stack.pop()
            walking.discard(id(node))
            inner = [(size[id(child)], depth[id(child)]) for child, _ in _children(node)]
            size[id(node)] = 1 + sum(s for s, _ in inner)
            depth[id(node)] = 1 + max((d for _, d in inner), default=0)
            continue
        child, line = todo.pop()
        if id(child) in walking:
            raise _FieldError(line, "alias", "an alias (*name) inside the value it names would never end")
        if id(child) in size:
            added += size[id(child)]
            if added > ALIAS_VALUES_MAX:
                raise _FieldError(
                    line,
                    "alias",
                    f"the aliases (*name) written out would add more than "
                    f"{ALIAS_VALUES_MAX:,} values; write the values out instead",
                )
            if len(stack) + depth[id(child)] > NESTING_MAX:
                raise _FieldError(line, "alias", f"lists and mappings nest more than {NESTING_MAX} levels deep")
            continue
        if len(stack) + 1 > NESTING_MAX:
            raise _FieldError(line, "(nesting)", f"lists and mappings nest more than {NESTING_MAX} levels deep")
        walking.add(id(child))
        stack.append((child, _children(child)[::-1]))


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> _LineDict:
    """A :class:`_LineDict` of ``node``.

    Keys merged in with ``<<`` (YAML merge keys) give way to the mapping's own
    keys, and the first merged mapping wins over later ones; only a key
    written twice in the mapping itself is a duplicate.
    """
    own = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE_TAG)
    loader.flatten_mapping(node)
    merged = len(node.value) - own
    result = _LineDict()
    result.line = node.start_mark.line + 1
    result.lines = {}
    own_lines: dict[str, int] = {}
    for index, (key_node, value_node) in enumerate(node.value):
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if index < merged and key in result:
            continue
        if index >= merged and str(key) in own_lines:
            result.duplicate = result.duplicate or (str(key), line, own_lines[str(key)])
            continue
        if index >= merged:
            own_lines[str(key)] = line
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[str(key)] = line
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class _FieldError(Exception):
    def __init__(self, line: int, field: str, problem: str) -> None:
        super().__init__(problem)
        self.line, self.field, self.problem = line, field, problem


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
    text = read_text(path)
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
        return _build(path, data)
    except _FieldError as e:
        raise ConfigError(f"{path}:{e.line}: {e.field}: {e.problem}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        line = f"{mark.line + 1}:" if mark is not None else ""
        raise ConfigError(f"{path}:{line} invalid YAML: {e.problem}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: invalid YAML: {e}") from None


def read_text(path: Path) -> str:
    """A sites.yaml as text (str).

    Raises:
        ConfigError: it cannot be read, or is not UTF-8 (naming the line of the first bad byte).
    """
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from e
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text: {e.reason} at byte {e.start}; save the file as UTF-8") from e


def _build(path: Path, data: Any) -> Config:
    if not isinstance(data, _LineDict):
        raise _FieldError(1, "(top level)", "must be a mapping with title, link and sites")
    _check_duplicates(data, "")
    known = set(_REQUIRED) | set(_SETTINGS)
    for key in data:
        if key not in known:
            expected = ", ".join(sorted(known))
            raise _FieldError(data.lines[str(key)], str(key), f"unknown setting; expected one of {expected}")
    for key in _REQUIRED:
        if key not in data:
            raise _FieldError(data.line, key, "is required")
    title = _text(data, "title", data["title"])
    link = _url(data, "link", data["link"])
    settings = {key: _setting(data, key) for key in _SETTINGS if key in data}
    base = path.parent
    for key in ("output", "cache"):
        settings[key] = base / settings.get(key, _SETTINGS[key].default)
    contact = settings.pop("user_agent", None) or link
    if "hub" in settings:
        settings["hubs"] = settings.pop("hub")
    _check_intervals(data, settings)
    return Config(
        path=path,
        title=title,
        link=link,
        sites=_sites(data, base),
        user_agent=f"syndicator/{__version__} (+{contact})",
        **settings,
    )


def _check_intervals(data: _LineDict, settings: dict[str, Any]) -> None:
    """min_interval <= default_interval <= max_interval, each named with its line."""
    value = {
        key: settings.get(key, _SETTINGS[key].default) for key in ("min_interval", "default_interval", "max_interval")
    }
    for low, high in (
        ("min_interval", "default_interval"),
        ("default_interval", "max_interval"),
        ("min_interval", "max_interval"),
    ):
        if value[low] > value[high]:
            key = low if low in data else high
            problem = f"{low} ({number_text(value[low])} s) must not exceed {high} ({number_text(value[high])} s)"
            raise _FieldError(data.lines.get(key, data.line), key, problem)


def _sites(data: _LineDict, base: Path) -> tuple[Site, ...]:
    items = data["sites"]
    if not isinstance(items, list) or not items:
        raise _FieldError(data.lines["sites"], "sites", "must be a non-empty list of sites")
    sites: list[Site] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        where = f"sites[{index}]"
        if not isinstance(item, _LineDict):
            raise _FieldError(data.lines["sites"], where, "must be a mapping with name, feed and link")
        _check_duplicate(item, where)
        for key in item:
            if key not in _SITE_KEYS:
                raise _FieldError(
                    item.lines[str(key)],
                    f"{where}.{key}",
                    f"unknown field; expected {', '.join(_SITE_KEYS[:-1])} or {_SITE_KEYS[-1]}",
                )
        for key in ("name", "feed"):
            if key not in item:
                raise _FieldError(item.line, f"{where}.{key}", "is required")
        name = " ".join(_text(item, "name", item["name"], where).split())  # a line break or tab is a space
        if strip_control(name) != name or len(name) > NAME_MAX_CHARS:
            problem = f"must be at most {NAME_MAX_CHARS} characters, without control characters"
            raise _FieldError(item.lines["name"], f"{where}.name", problem)
        hidden = NAME_HIDDEN.search(name)
        if hidden is not None:
            problem = (
                f"{name!r} holds U+{ord(hidden.group()):04X}, an invisible or text-direction character "
                "that can disguise the name on the pages; remove it"
            )
            raise _FieldError(item.lines["name"], f"{where}.name", problem)
        if name in seen:
            problem = f"duplicate site name {name!r} (first at sites[{seen[name]}])"
            raise _FieldError(item.lines["name"], f"{where}.name", problem)
        seen[name] = index
        feed = _feed(item, item["feed"], where, base)
        link = _url(item, "link", item["link"], where) if item.get("link") is not None else None
        face = _image(item, "face", item["face"], where) if item.get("face") is not None else None
        sites.append(
            Site(name=name, feed=feed, link=link, face=face, extra=_extra(item, where), language=_language(item, where))
        )
    return tuple(sites)


def _language(item: _LineDict, where: str) -> str | None:
    """A site's ``language``: a well-formed BCP 47 tag (:func:`language.language_tag`) in canonical case,
    or None when not given."""
    value = item.get("language")
    if value is None:
        return None
    tag = language_tag(value) if isinstance(value, str) else None
    if tag is None:
        raise _FieldError(
            item.lines["language"],
            f"{where}.language",
            f"{str(value)[:40]!r} is not a BCP 47 language tag such as en, ar or pt-BR",
        )
    return tag


def _extra(item: _LineDict, where: str) -> dict[str, Any]:
    """A site's ``extra`` mapping, for templates (keys are text; values are kept as YAML gave them)."""
    value = item.get("extra")
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise _FieldError(item.lines["extra"], f"{where}.extra", "must be a mapping of names to values")
    return _plain(value)


def _plain(value: Any) -> Any:
    """YAML data with every _LineDict made a plain dict."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _check_duplicate(mapping: _LineDict, where: str) -> None:
    if mapping.duplicate is not None:
        key, line, first = mapping.duplicate
        raise _FieldError(line, _field(where, key), f"appears twice (first on line {first})")


def _check_duplicates(value: Any, where: str) -> None:
    """Refuse a key written twice in any mapping of ``value`` (a site's ``extra`` included), in document
    order; the field is named by its path, e.g. ``sites[2].extra.links.home``."""
    if isinstance(value, _LineDict):
        _check_duplicate(value, where)
        for key, item in value.items():
            _check_duplicates(item, _field(where, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_duplicates(item, f"{where}[{index}]")


def _text(mapping: _LineDict, key: str, value: Any, where: str = "") -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool) or not str(value).strip():
        raise _FieldError(mapping.lines[key], _field(where, key), "must be non-empty text")
    return str(value).strip()


def _url(mapping: _LineDict, key: str, value: Any, where: str = "") -> str:
    problem = url_problem(value)
    if problem is not None and key == "user_agent" and problem.endswith(NO_CREDENTIALS):
        problem = f"credentials in a URL would be sent to every feed's server; {NO_CREDENTIALS}"
    if problem is not None:
        raise _FieldError(mapping.lines[key], _field(where, key), problem)
    return str(value).strip()


def _free_text(mapping: _LineDict, key: str, value: Any) -> str:
    """Text shown on the pages (description, owner): one line, at most TEXT_MAX_CHARS characters."""
    if value is None:
        return ""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise _FieldError(mapping.lines[key], key, "must be text")
    text = " ".join(strip_control(str(value)).split())
    if len(text) > TEXT_MAX_CHARS:
        raise _FieldError(mapping.lines[key], key, f"must be at most {TEXT_MAX_CHARS} characters")
    return text


def _image(mapping: _LineDict, key: str, value: Any, where: str) -> str | None:
    """An image for the pages: an http(s) URL, or a path inside the published folder (a file of a
    ``static/`` folder, see README.md "Templates"): relative, without ``..``, ``%``, ``?`` or ``#``."""
    if value is None:
        return None
    text = str(value).strip() if isinstance(value, str) else ""
    if text and _SCHEME.match(text):
        return _url(mapping, key, value, where)
    if not _RELATIVE_PATH.fullmatch(text) or ".." in text.split("/"):
        raise _FieldError(
            mapping.lines[key],
            _field(where, key),
            f"{value!r} is neither an http(s) URL nor a relative path such as faces/jane.png",
        )
    return text


#: A path inside the published folder: letters, digits and ``. _ ~ - /``, not starting with ``/`` or ``.``
#: (no ``%``, ``?`` or ``#``: ``%2e%2e`` is ``..`` to a browser).
_RELATIVE_PATH = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9._~/-]*")


def _timezone(line: int, key: str, value: Any) -> str:
    """An IANA time zone name (``Europe/Berlin``), checked with zoneinfo."""
    try:
        ZoneInfo(str(value))
    except (ZoneInfoNotFoundError, ValueError):
        raise _FieldError(
            line, key, f"{value!r} is not a time zone; use an IANA name such as Europe/Berlin or UTC"
        ) from None
    return str(value)


def _date_format(line: int, key: str, value: Any) -> str:
    """A strftime format for dates on the pages (``%Y-%m-%d %H:%M %Z``)."""
    if (
        not isinstance(value, str)
        or not value.strip()
        or strip_control(value) != value
        or len(value) > DATE_FORMAT_MAX_CHARS
        or "%" not in value
    ):
        raise _FieldError(
            line,
            key,
            f"must be a strftime format of at most {DATE_FORMAT_MAX_CHARS} characters, such as '%Y-%m-%d %H:%M %Z'",
        )
    unknown = [code for code in _FORMAT_CODE.findall(value) if code not in _DATE_CODES]
    if unknown or "%" in _FORMAT_CODE.sub("", value):
        shown = "%" + unknown[0] if unknown else "%"
        raise _FieldError(
            line,
            key,
            f"{value!r}: {shown!r} is not one of the codes allowed ({' '.join('%' + code for code in _DATE_CODES)})",
        )
    return value


def _hubs(line: int, key: str, value: Any) -> tuple[str, ...]:
    """The WebSub hubs of ``hub``: one http(s) URL, or a list of 1 to :data:`HUBS_MAX` different ones
    (tuple of str; ``hub:`` left empty is none). Each is published in feed.xml and feed.json, so it is
    checked as the planet's ``link`` is (:func:`values.url_problem`: no space, control character or
    credentials). A URL in a list is named by its index, ``hub[1]``, on the line of ``hub``.
    """
    if value is None:
        return ()
    values = value if isinstance(value, list) else [value]
    if not 1 <= len(values) <= HUBS_MAX:
        raise _FieldError(line, key, f"must be an http(s) URL or a list of 1 to {HUBS_MAX} of them")
    hubs: list[str] = []
    for index, item in enumerate(values):
        field = f"{key}[{index}]" if isinstance(value, list) else key
        problem = url_problem(item)
        if problem is not None:
            raise _FieldError(line, field, problem)
        if item.strip() in hubs:
            raise _FieldError(line, field, f"{item.strip()!r} is listed twice")
        hubs.append(item.strip())
    return tuple(hubs)


def _deliveries(line: int, key: str, value: Any) -> tuple[Delivery, ...]:
    """The webhooks of ``deliveries``: a list of 1 to :data:`DELIVERIES_MAX` mappings ``{url, secret}``
    (tuple of Delivery): url an http(s) URL (:func:`values.url_problem`), listed once; secret a
    non-empty string. An item is named ``deliveries[i].url`` on the line of that key. A secret is
    never shown in a message.
    """
    if not isinstance(value, list) or not 1 <= len(value) <= DELIVERIES_MAX:
        raise _FieldError(line, key, f"must be a list of 1 to {DELIVERIES_MAX} webhooks, each {{url, secret}}")
    found: list[Delivery] = []
    for index, item in enumerate(value):
        where = f"{key}[{index}]"
        if not isinstance(item, _LineDict):
            raise _FieldError(line, where, "must be a mapping with url and secret")
        _check_duplicate(item, where)
        for name in item:
            if name not in ("url", "secret"):
                raise _FieldError(item.lines[str(name)], f"{where}.{name}", "unknown key; expected url and secret")
        for name in ("url", "secret"):
            if name not in item:
                raise _FieldError(item.line, f"{where}.{name}", "is required")
        url = item["url"]
        problem = url_problem(url)
        if problem is not None:
            raise _FieldError(item.lines["url"], f"{where}.url", problem)
        if any(d.url == url.strip() for d in found):
            raise _FieldError(item.lines["url"], f"{where}.url", f"{url.strip()!r} is listed twice")
        secret = item["secret"]
        if not isinstance(secret, str) or not secret.strip():
            raise _FieldError(item.lines["secret"], f"{where}.secret", "must be a non-empty string")
        found.append(Delivery(url.strip(), secret))
    return tuple(found)


#: A strftime code: ``%`` and one character, or ``%-`` and one (no leading zero, glibc).
_FORMAT_CODE = re.compile(r"%(-?.)")
#: The codes a date_format may use: the same on every platform and locale-free in the C locale
#: (%s, %c, %x and %X depend on the machine; a width such as %99Y is not read).
_DATE_CODES = (
    "a",
    "A",
    "b",
    "B",
    "d",
    "-d",
    "e",
    "H",
    "-H",
    "I",
    "-I",
    "j",
    "m",
    "-m",
    "M",
    "p",
    "S",
    "y",
    "Y",
    "z",
    "Z",
    "F",
    "R",
    "T",
    "G",
    "V",
    "u",
    "w",
    "%",
)


#: A value that starts like a URL (a scheme and a colon, RFC 3986 section 3.1): anything else
#: given as a site's feed is a local file path.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _feed(mapping: _LineDict, value: Any, where: str, base: Path) -> str:
    """A site's feed: an http(s) URL as written, or a local file path as a ``file:`` URI.

    A path (one that does not start with a URL scheme) is relative to the
    folder of sites.yaml and becomes the ``file:`` URI of the absolute path
    (RFC 8089). The file must exist now (a URL missing its ``https://``
    reads as a path, and is caught here); one that goes missing later, or
    cannot be read, fails its site like an unreachable feed.
    """
    if isinstance(value, str) and value.strip() and not _SCHEME.match(value.strip()):
        text, line, field = value.strip(), mapping.lines["feed"], f"{where}.feed"
        if strip_control(text) != text:
            raise _FieldError(line, field, f"{text!r} contains a control character")
        try:
            path = (base / text).resolve()
            found = path.is_file()
        except (OSError, RuntimeError):  # a symlink loop, a name too long
            found = False
        if not found:
            raise _FieldError(
                line,
                field,
                f"{text!r} is neither an http(s) URL nor a file (a path is relative to the folder of sites.yaml)",
            )
        return path.as_uri()
    return _url(mapping, "feed", value, where)


def _field(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _setting(data: _LineDict, key: str) -> Any:
    """The value of the planet setting ``key`` of ``data``, read by its kind's reader (:data:`_READERS`).

    Raises:
        _FieldError: the value is not one the setting takes (the message names the line and the key).
    """
    kind, _default, minimum, maximum = _SETTINGS[key]
    return _READERS[kind](_Field(data, key, data[key], data.lines[key], minimum, maximum))


@dataclass(frozen=True)
class _Field:
    """One setting being read: where it is (``data``, ``key``, ``line``), its value, and its bounds."""

    data: _LineDict
    key: str
    value: Any
    line: int
    minimum: float
    maximum: float

    def error(self, message: str) -> _FieldError:
        return _FieldError(self.line, self.key, message)


def _read_path(field: _Field) -> str:
    if not isinstance(field.value, str) or not field.value.strip():
        raise field.error("must be a folder path")
    return field.value.strip()


def _read_bool(field: _Field) -> bool:
    if not isinstance(field.value, bool):
        raise field.error("must be true or false")
    return field.value


def _read_location(field: _Field) -> Any:
    value = field.value
    if isinstance(value, str) and value.strip() and not _SCHEME.match(value.strip()) and strip_control(value) == value:
        return value.strip()  # a path, relative to the folder of sites.yaml
    return _url(field.data, field.key, value)


def _read_state(field: _Field) -> str:
    try:
        return state_url(field.value, field.key)
    except ConfigError as error:
        raise field.error(str(error).split(": ", 1)[1]) from None


def _read_choice(field: _Field) -> Any:
    if field.value not in _CHOICES[field.key]:
        raise field.error(f"must be one of {', '.join(_CHOICES[field.key])}")
    return field.value


def _read_duration(field: _Field) -> float:
    try:
        seconds = parse_duration(field.value)
    except ValueError as e:
        raise field.error(str(e)) from None
    if seconds < field.minimum:
        raise field.error(f"must be at least {bound_text(field.minimum)}")
    if seconds > field.maximum:
        raise field.error(f"must be at most {bound_text(field.maximum)}")
    return seconds


def _read_number(field: _Field) -> float:
    value = field.value
    if not isinstance(value, int | float) or isinstance(value, bool) or not field.minimum <= value <= field.maximum:
        raise field.error(f"must be a number from {number_text(field.minimum)} to {number_text(field.maximum)}")
    return float(value)


def _read_integer(field: _Field) -> int:
    value = field.value
    if not isinstance(value, int) or isinstance(value, bool) or not field.minimum <= value <= field.maximum:
        raise field.error(f"must be a whole number from {number_text(field.minimum)} to {number_text(field.maximum)}")
    return value


#: The reader of each kind of setting (:data:`_SETTINGS` gives each setting's kind, default and bounds).
_READERS: dict[str, Callable[[_Field], Any]] = {
    "url": lambda f: _url(f.data, f.key, f.value),
    "path": _read_path,
    "text": lambda f: _free_text(f.data, f.key, f.value),
    "bool": _read_bool,
    "location": _read_location,
    "image": lambda f: _image(f.data, f.key, f.value, ""),
    "hubs": lambda f: _hubs(f.line, f.key, f.value),
    "deliveries": lambda f: _deliveries(f.line, f.key, f.value),
    "state": _read_state,
    "choice": _read_choice,
    "timezone": lambda f: _timezone(f.line, f.key, f.value),
    "date_format": lambda f: _date_format(f.line, f.key, f.value),
    "duration": _read_duration,
    "number": _read_number,
    "int": _read_integer,
}


def state_url(value: Any, where: str) -> str:
    """A ``state`` value (sites.yaml, ``--state``, ``SYNDICATOR_STATE``): a ``postgresql://`` URL, stripped.

    Raises:
        ConfigError: anything else, naming ``where``; the message never shows a password.
    """
    if isinstance(value, str) and is_postgres_url(value.strip()) and strip_control(value) == value:
        try:
            parts = urlsplit(value.strip())
            parts.port  # noqa: B018 - reading it checks the host and the port
        except ValueError as error:  # a port it cannot read is quoted: a password's piece, if one holds a '/'
            problem = secretless(re.sub(r"'[^']*'", "'***'", str(error)), value)
            raise ConfigError(f"{where}: {shown(value)!r} is not a usable URL ({problem})") from None
        if parts.netloc.count("@") > 1:  # libpq would end the password at the first, and show the rest
            raise ConfigError(
                f"{where}: {shown(value)!r} is not a usable URL (its user or password holds a raw '@'; write it %40)"
            )
        return value.strip()
    text = shown(value) if isinstance(value, str) else repr(value)
    raise ConfigError(
        f"{where}: {text!r} is not a postgresql:// URL (leave it out for the SQLite state in the cache folder)"
    )
