"""How each kind of planet setting is read from sites.yaml: a reader takes a :class:`Field` (the
setting's mapping, key, value and line) and returns the value :class:`configtypes.Config` holds, or
raises :class:`fields.FieldError` naming the line and the key.

Bounded readers (:func:`integer`, :func:`number`, :func:`duration`, :func:`choice`) are made with their
bounds; the others read one setting each (hubs, deliveries, state, the pages' texts, time zone and date
format). Which setting uses which reader is :data:`settings.SETTINGS`. Durations are seconds (float).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from syndicator.config.fields import SCHEME, FieldError, check_duplicate, http_url, image, new_items
from syndicator.config.yamlfile import LineDict
from syndicator.configtypes import OLD_FEEDS, Delivery
from syndicator.errors import ConfigError
from syndicator.language import language_tag
from syndicator.urls import is_postgres_url, secretless, shown
from syndicator.values import bound_text, number_text, parse_duration, strip_control, url_problem

#: Longest free text a setting holds (description, owner), and longest date format, in characters.
TEXT_MAX_CHARS = 1000
DATE_FORMAT_MAX_CHARS = 100
#: Most WebSub hubs ``hub`` may name: each is sent a request after every build that changed a feed.
HUBS_MAX = 4
#: Most webhooks ``deliveries`` may name: each event is POSTed to every one of them.
DELIVERIES_MAX = 16


@dataclass(frozen=True)
class Field:
    """One setting being read: where it is (``data``, ``key``, ``line``, 1-based) and its value."""

    data: LineDict
    key: str
    value: Any
    line: int

    def error(self, message: str) -> FieldError:
        """The FieldError naming this setting's line and key."""
        return FieldError(self.line, self.key, message)


Reader = Callable[[Field], Any]

#: What each reader takes, in the user's words: reader -> text (the "takes" column of the settings page,
#: docs/reference/settings.md). The bounded readers record their bounds when they are made.
TAKES: dict[Reader, str] = {}
#: The readers of durations, whose values (seconds) are shown as "4 days" rather than 345600.
DURATIONS: set[Reader] = set()


def takes(text: str) -> Callable[[Reader], Reader]:
    """A decorator recording ``text`` as what the reader takes (:data:`TAKES`)."""

    def record(reader: Reader) -> Reader:
        TAKES[reader] = text
        return reader

    return record


def integer(minimum: int, maximum: int) -> Reader:
    """A reader of a whole number from ``minimum`` to ``maximum`` (int; booleans refused)."""

    def read(field: Field) -> int:
        value = field.value
        if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= maximum:
            raise field.error(f"must be a whole number from {number_text(minimum)} to {number_text(maximum)}")
        return value

    return takes(f"a whole number from {number_text(minimum)} to {number_text(maximum)}")(read)


def number(minimum: float, maximum: float) -> Reader:
    """A reader of a number from ``minimum`` to ``maximum`` (float; booleans refused)."""

    def read(field: Field) -> float:
        value = field.value
        if not isinstance(value, int | float) or isinstance(value, bool) or not minimum <= value <= maximum:
            raise field.error(f"must be a number from {number_text(minimum)} to {number_text(maximum)}")
        return float(value)

    return takes(f"a number from {number_text(minimum)} to {number_text(maximum)}")(read)


def duration(minimum: float, maximum: float) -> Reader:
    """A reader of a duration (:func:`values.parse_duration`: ``90``, ``15m``, ``4d``) from ``minimum`` to
    ``maximum`` seconds (float seconds)."""

    def read(field: Field) -> float:
        try:
            seconds = parse_duration(field.value)
        except ValueError as e:
            raise field.error(str(e)) from None
        if seconds < minimum:
            raise field.error(f"must be at least {bound_text(minimum)}")
        if seconds > maximum:
            raise field.error(f"must be at most {bound_text(maximum)}")
        return seconds

    DURATIONS.add(read)
    return takes(f"a duration from {bound_text(minimum)} to {bound_text(maximum)}")(read)


def choice(*values: str) -> Reader:
    """A reader of one of ``values`` (str)."""

    def read(field: Field) -> str:
        if field.value not in values:
            raise field.error(f"must be one of {', '.join(values)}")
        return str(field.value)

    return takes(" or ".join(f"`{value}`" for value in values))(read)


@takes("a folder, relative to the folder of sites.yaml")
def read_path(field: Field) -> str:
    """A folder path, stripped (str); the loader resolves it against the folder of sites.yaml."""
    if not isinstance(field.value, str) or not field.value.strip():
        raise field.error("must be a folder path")
    return field.value.strip()


@takes("a file, relative to the folder of sites.yaml")
def read_file(field: Field) -> str:
    """A file path, stripped (str); the loader resolves it against the folder of sites.yaml."""
    if not isinstance(field.value, str) or not field.value.strip():
        raise field.error("must be a file path")
    return field.value.strip()


@takes("a BCP 47 language tag: `en`, `de`, `pt-BR`, `ar`")
def read_language(field: Field) -> str:
    """A BCP 47 language tag (:func:`language.language_tag`), in canonical case (str)."""
    tag = language_tag(field.value) if isinstance(field.value, str) else None
    if tag is None:
        raise field.error(f"{str(field.value)[:40]!r} is not a BCP 47 language tag such as en, de, ar or pt-BR")
    return tag


@takes("`true` or `false`")
def read_bool(field: Field) -> bool:
    """``true`` or ``false`` (bool)."""
    if not isinstance(field.value, bool):
        raise field.error("must be true or false")
    return field.value


@takes("a count of entries, or `all`")
def read_new_items(field: Field) -> int:
    """``new_feed_items``: a count of entries or ``all`` (int, 0 for all; :func:`fields.new_items`)."""
    return new_items(field.data, field.key, field.value)


@takes("an http(s) URL")
def read_url(field: Field) -> str:
    """An http(s) URL (:func:`fields.http_url`)."""
    return http_url(field.data, field.key, field.value)


@takes("an http(s) URL, or a path inside the published folder (`faces/jane.png`)")
def read_image(field: Field) -> str | None:
    """An image (:func:`fields.image`): an http(s) URL or a path inside the published folder, or None."""
    return image(field.data, field.key, field.value, "")


@takes("an http(s) URL, or a path relative to the folder of sites.yaml")
def read_location(field: Field) -> str:
    """Where to restore the state from: a path (relative to the folder of sites.yaml), or an http(s) URL."""
    value = field.value
    if isinstance(value, str) and value.strip() and not SCHEME.match(value.strip()) and strip_control(value) == value:
        return value.strip()
    return http_url(field.data, field.key, value)


@takes(f"one line of at most {TEXT_MAX_CHARS:,} characters")
def read_free_text(field: Field) -> str:
    """Text shown on the pages (description, owner): one line, at most TEXT_MAX_CHARS characters ("" for none)."""
    if field.value is None:
        return ""
    if not isinstance(field.value, str | int | float) or isinstance(field.value, bool):
        raise field.error("must be text")
    text = " ".join(strip_control(str(field.value)).split())
    if len(text) > TEXT_MAX_CHARS:
        raise field.error(f"must be at most {TEXT_MAX_CHARS} characters")
    return text


@takes("an IANA time zone name (`Europe/Berlin`)")
def read_timezone(field: Field) -> str:
    """An IANA time zone name (``Europe/Berlin``), checked with zoneinfo."""
    try:
        ZoneInfo(str(field.value))
    except (ZoneInfoNotFoundError, ValueError):
        raise field.error(
            f"{field.value!r} is not a time zone; use an IANA name such as Europe/Berlin or UTC"
        ) from None
    return str(field.value)


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


@takes(
    f"a strftime format of at most {DATE_FORMAT_MAX_CHARS} characters, of the codes "
    f"`{' '.join('%' + code for code in _DATE_CODES)}` (a `-` after the `%`: no leading zero)"
)
def read_date_format(field: Field) -> str:
    """A strftime format for dates on the pages (``%Y-%m-%d %H:%M %Z``), of the codes in :data:`_DATE_CODES`."""
    value = field.value
    if (
        not isinstance(value, str)
        or not value.strip()
        or strip_control(value) != value
        or len(value) > DATE_FORMAT_MAX_CHARS
        or "%" not in value
    ):
        raise field.error(
            f"must be a strftime format of at most {DATE_FORMAT_MAX_CHARS} characters, such as '%Y-%m-%d %H:%M %Z'"
        )
    unknown = [code for code in _FORMAT_CODE.findall(value) if code not in _DATE_CODES]
    if unknown or "%" in _FORMAT_CODE.sub("", value):
        bad = "%" + unknown[0] if unknown else "%"
        allowed = " ".join("%" + code for code in _DATE_CODES)
        raise field.error(f"{value!r}: {bad!r} is not one of the codes allowed ({allowed})")
    return value


@takes(f"an http(s) URL, or a list of 1 to {HUBS_MAX} of them")
def read_hubs(field: Field) -> tuple[str, ...]:
    """The WebSub hubs of ``hub``: one http(s) URL, or a list of 1 to :data:`HUBS_MAX` different ones
    (tuple of str; ``hub:`` left empty is none). Each is published in feed.xml and feed.json, so it is
    checked as the planet's ``link`` is (:func:`values.url_problem`: no space, control character or
    credentials). A URL in a list is named by its index, ``hub[1]``, on the line of ``hub``.
    """
    value, line, key = field.value, field.line, field.key
    if value is None:
        return ()
    values = value if isinstance(value, list) else [value]
    if not 1 <= len(values) <= HUBS_MAX:
        raise FieldError(line, key, f"must be an http(s) URL or a list of 1 to {HUBS_MAX} of them")
    hubs: list[str] = []
    for index, item in enumerate(values):
        where = f"{key}[{index}]" if isinstance(value, list) else key
        problem = url_problem(item)
        if problem is not None:
            raise FieldError(line, where, problem)
        if item.strip() in hubs:
            raise FieldError(line, where, f"{item.strip()!r} is listed twice")
        hubs.append(item.strip())
    return tuple(hubs)


@takes("a list of the old planet's feed files: " + ", ".join(f"`{name}`" for name in OLD_FEEDS))
def read_old_feeds(field: Field) -> tuple[str, ...]:
    """The old planet's files of ``old_feeds``: a list of different names from :data:`configtypes.OLD_FEEDS`
    (tuple of str, in that order; ``old_feeds:`` left empty is none). A name in a list is named by its
    index, ``old_feeds[1]``, on the line of ``old_feeds``."""
    value, line, key = field.value, field.line, field.key
    if value is None:
        return ()
    if not isinstance(value, list):
        raise FieldError(line, key, f"must be a list of the old planet's files: {', '.join(OLD_FEEDS)}")
    for index, item in enumerate(value):
        if item not in OLD_FEEDS:
            raise FieldError(line, f"{key}[{index}]", f"{item!r} is not one of {', '.join(OLD_FEEDS)}")
        if item in value[:index]:
            raise FieldError(line, f"{key}[{index}]", f"{item!r} is listed twice")
    return tuple(name for name in OLD_FEEDS if name in value)


@takes(f"a list of 1 to {DELIVERIES_MAX} webhooks, each a `url` and a `secret`")
def read_deliveries(field: Field) -> tuple[Delivery, ...]:
    """The webhooks of ``deliveries``: a list of 1 to :data:`DELIVERIES_MAX` mappings ``{url, secret}``
    (tuple of Delivery): url an http(s) URL (:func:`values.url_problem`), listed once; secret a
    non-empty string. An item is named ``deliveries[i].url`` on the line of that key. A secret is
    never shown in a message.
    """
    value, line, key = field.value, field.line, field.key
    if not isinstance(value, list) or not 1 <= len(value) <= DELIVERIES_MAX:
        raise FieldError(line, key, f"must be a list of 1 to {DELIVERIES_MAX} webhooks, each {{url, secret}}")
    found: list[Delivery] = []
    for index, item in enumerate(value):
        where = f"{key}[{index}]"
        if not isinstance(item, LineDict):
            raise FieldError(line, where, "must be a mapping with url and secret")
        check_duplicate(item, where)
        for name in item:
            if name not in ("url", "secret"):
                raise FieldError(item.lines[str(name)], f"{where}.{name}", "unknown key; expected url and secret")
        for name in ("url", "secret"):
            if name not in item:
                raise FieldError(item.line, f"{where}.{name}", "is required")
        url = item["url"]
        problem = url_problem(url)
        if problem is not None:
            raise FieldError(item.lines["url"], f"{where}.url", problem)
        if any(d.url == url.strip() for d in found):
            raise FieldError(item.lines["url"], f"{where}.url", f"{url.strip()!r} is listed twice")
        secret = item["secret"]
        if not isinstance(secret, str) or not secret.strip():
            raise FieldError(item.lines["secret"], f"{where}.secret", "must be a non-empty string")
        found.append(Delivery(url.strip(), secret))
    return tuple(found)


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


@takes("a `postgresql://` URL")
def read_state(field: Field) -> str:
    """Where the state lives: a postgresql:// URL (:func:`state_url`)."""
    try:
        return state_url(field.value, field.key)
    except ConfigError as error:
        raise field.error(str(error).split(": ", 1)[1]) from None
