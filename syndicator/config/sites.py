"""The ``sites`` list of sites.yaml -> :class:`configtypes.Site` values, one per subscription, in file order.

A site has a ``name`` (unique, shown in every output), a ``feed`` (an http(s) URL, or a local file's
path), and optionally ``link``, ``face``, ``language``, ``enabled`` (``false`` pauses it),
``new_feed_items`` (how many entries of its first fetch are published), ``credentials`` (the name of
what a private feed sends, :mod:`config.credentials`), its own values of some of the planet's settings
and its extra request headers (:mod:`config.sitesettings`), ``filters`` (its own keep and drop rules,
config/filters.py) and ``extra``; anything else is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from syndicator.config.fields import SCHEME, FieldError, check_duplicate, http_url, image, new_items, plain, text
from syndicator.config.filters import filters_of
from syndicator.config.sitesettings import SITE_SETTINGS, read_site_settings
from syndicator.config.yamlfile import LineDict
from syndicator.configtypes import Config, Site
from syndicator.credential import PRIVATE_FRAGMENT, Credential
from syndicator.language import language_tag
from syndicator.rules import Filters
from syndicator.values import NO_CREDENTIALS, strip_control

_SITE_KEYS = (
    "name",
    "feed",
    "link",
    "face",
    "language",
    "enabled",
    "new_feed_items",
    "credentials",
    "filters",
    *SITE_SETTINGS,
    "extra",
)
#: Finds a credential by its name for a site (name, where, line): :meth:`config.credentials.Secrets.find`.
Finder = Callable[[Any, str, int], Credential]
#: A site's name is shown in every output: at most this many characters, none of them control
#: characters (runs of white space, line breaks and tabs included, are one space).
NAME_MAX_CHARS = 200
#: Characters a site's name must not hold: the bidirectional controls (Unicode's Bidi_Control property,
#: UAX #9 section 2: ALM U+061C, LRM/RLM U+200E-F, the embeddings and overrides U+202A-E, the isolates
#: U+2066-9), which reorder the text shown around them, and the invisible ones that hide a difference
#: (zero-width space U+200B, word joiner and invisible operators U+2060-4, byte order mark U+FEFF). The
#: joiners U+200C-D stay: scripts and emoji need them.
NAME_HIDDEN = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def read_sites(
    data: LineDict, base: Path, find: Finder, bounds: tuple[float, float] = (Config.min_interval, Config.max_interval)
) -> tuple[Site, ...]:
    """The sites of the top-level mapping ``data`` (its ``sites`` key), a local feed's path read against
    the folder ``base`` of sites.yaml, a private feed's credential found by ``find``; ``bounds`` are the
    planet's (min_interval, max_interval), seconds, that a site's own intervals must agree with.

    Raises:
        FieldError: ``sites`` is not a non-empty list of sites, or a site is invalid (naming its line and
            field, e.g. ``sites[3].feed``), or two sites have one name.
    """
    items = data["sites"]
    if not isinstance(items, list) or not items:
        raise FieldError(data.lines["sites"], "sites", "must be a non-empty list of sites")
    sites: list[Site] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        where = f"sites[{index}]"
        if not isinstance(item, LineDict):
            raise FieldError(data.lines["sites"], where, "must be a mapping with name, feed and link")
        _check_keys(item, where)
        name = _name(item, where)
        if name in seen:
            problem = f"duplicate site name {name!r} (first at sites[{seen[name]}])"
            raise FieldError(item.lines["name"], f"{where}.name", problem)
        seen[name] = index
        feed = _feed(item, item["feed"], where, base)
        credential = _credential(item, feed, where, find)
        link = http_url(item, "link", item["link"], where) if item.get("link") is not None else None
        face = image(item, "face", item["face"], where) if item.get("face") is not None else None
        first = new_items(item, "new_feed_items", item["new_feed_items"], where) if "new_feed_items" in item else None
        extra, language = _extra(item, where), _language(item, where)
        sites.append(
            Site(
                name=name,
                feed=feed if credential is None else f"{feed}{PRIVATE_FRAGMENT}{credential.name}",
                link=link,
                face=face,
                extra=extra,
                language=language,
                enabled=_enabled(item, where),
                line=item.lines["feed"],
                new_feed_items=first,
                credential=credential,
                **read_site_settings(item, where, bounds),
                filters=filters_of(item, "filters", where) if "filters" in item else Filters(),
            )
        )
    return tuple(sites)


def _check_keys(item: LineDict, where: str) -> None:
    """Refuse a key written twice, a key a site does not take, and a site without name or feed."""
    check_duplicate(item, where)
    for key in item:
        if key not in _SITE_KEYS:
            raise FieldError(
                item.lines[str(key)],
                f"{where}.{key}",
                f"unknown field; expected {', '.join(_SITE_KEYS[:-1])} or {_SITE_KEYS[-1]}",
            )
    for key in ("name", "feed"):
        if key not in item:
            raise FieldError(item.line, f"{where}.{key}", "is required")


def _name(item: LineDict, where: str) -> str:
    """A site's name: non-empty text, white space runs one space, at most :data:`NAME_MAX_CHARS` characters,
    none of them control characters or :data:`NAME_HIDDEN`."""
    name = " ".join(text(item, "name", item["name"], where).split())  # a line break or tab is a space
    if strip_control(name) != name or len(name) > NAME_MAX_CHARS:
        problem = f"must be at most {NAME_MAX_CHARS} characters, without control characters"
        raise FieldError(item.lines["name"], f"{where}.name", problem)
    hidden = NAME_HIDDEN.search(name)
    if hidden is not None:
        problem = (
            f"{name!r} holds U+{ord(hidden.group()):04X}, an invisible or text-direction character "
            "that can disguise the name on the pages; remove it"
        )
        raise FieldError(item.lines["name"], f"{where}.name", problem)
    return name


def _feed(mapping: LineDict, value: Any, where: str, base: Path) -> str:
    """A site's feed: an http(s) URL as written, or a local file path as a ``file:`` URI.

    A path (one that does not start with a URL scheme) is relative to the
    folder of sites.yaml and becomes the ``file:`` URI of the absolute path
    (RFC 8089). The file must exist now (a URL missing its ``https://``
    reads as a path, and is caught here); one that goes missing later, or
    cannot be read, fails its site like an unreachable feed.
    """
    if isinstance(value, str) and value.strip() and not SCHEME.match(value.strip()):
        path_text, line, field = value.strip(), mapping.lines["feed"], f"{where}.feed"
        if strip_control(path_text) != path_text:
            raise FieldError(line, field, f"{path_text!r} contains a control character")
        try:
            path = (base / path_text).resolve()
            found = path.is_file()
        except (OSError, RuntimeError):  # a symlink loop, a name too long
            found = False
        if not found:
            raise FieldError(
                line,
                field,
                f"{path_text!r} is neither an http(s) URL nor a file (a path is relative to the folder of sites.yaml)",
            )
        return path.as_uri()
    try:
        return http_url(mapping, "feed", value, where)
    except FieldError as error:
        if not error.problem.endswith(NO_CREDENTIALS):
            raise
        problem = "a user:password@ in the URL would be published; give credentials: instead (docs/private-feeds.md)"
        raise FieldError(error.line, error.field, problem) from None


def _credential(item: LineDict, feed: str, where: str, find: Finder) -> Credential | None:
    """A site's ``credentials``: the credential its name finds, for an http(s) feed without a
    fragment; None when not given."""
    if item.get("credentials") is None:
        return None
    line = item.lines["credentials"]
    if feed.startswith("file:"):
        raise FieldError(line, f"{where}.credentials", "a local file is read without credentials: remove them")
    if "#" in feed:
        raise FieldError(item.lines["feed"], f"{where}.feed", "a private feed's URL must not have a #fragment")
    return find(item["credentials"], where, line)


def _language(item: LineDict, where: str) -> str | None:
    """A site's ``language``: a well-formed BCP 47 tag (:func:`language.language_tag`) in canonical case,
    or None when not given."""
    value = item.get("language")
    if value is None:
        return None
    tag = language_tag(value) if isinstance(value, str) else None
    if tag is None:
        raise FieldError(
            item.lines["language"],
            f"{where}.language",
            f"{str(value)[:40]!r} is not a BCP 47 language tag such as en, ar or pt-BR",
        )
    return tag


def _enabled(item: LineDict, where: str) -> bool:
    """A site's ``enabled``: ``true`` or ``false`` (YAML 1.1: also yes/no, on/off); True when not given."""
    value = item.get("enabled", True)
    if not isinstance(value, bool):
        shown = "empty" if value is None else f"the text {value!r}" if isinstance(value, str) else repr(value)
        raise FieldError(item.lines["enabled"], f"{where}.enabled", f"must be true or false (unquoted), not {shown}")
    return value


def _extra(item: LineDict, where: str) -> dict[str, Any]:
    """A site's ``extra`` mapping, for templates (keys are text; values are kept as YAML gave them)."""
    value = item.get("extra")
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise FieldError(item.lines["extra"], f"{where}.extra", "must be a mapping of names to values")
    return plain(value)
