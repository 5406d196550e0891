"""A site's own settings in sites.yaml: :data:`SITE_SETTINGS`, the values of the planet's settings one
site may override (its feed's timeout, User-Agent, intervals, items and how its entries are published)
and its extra request headers.

Each is read by the same reader, with the same bounds, as the planet's setting of that name
(:data:`settings.SETTINGS`), and an error names the site's field, ``sites[3].timeout``. The docs' table of
them is :func:`reference.site_settings_table`. Durations are seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from syndicator import __version__
from syndicator.config.fields import FieldError, check_duplicate
from syndicator.config.readers import Field, Reader, read_bool, takes
from syndicator.config.settings import SETTINGS
from syndicator.config.yamlfile import LineDict
from syndicator.values import number_text

#: Request headers the fetcher sets itself (RFC 9110/9112: the message's framing, the connection, the
#: conditional request, the codings it can undo), or that carry credentials, by lower-case name: a site's
#: ``headers`` must not name them.
OWNED_HEADERS = (
    "host",
    "content-length",
    "connection",
    "transfer-encoding",
    "if-none-match",
    "if-modified-since",
    "accept-encoding",
)
CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "cookie")
#: Most extra headers one site may give, and the longest value, in characters.
HEADERS_MAX = 20
HEADER_VALUE_MAX_CHARS = 1000
#: A field name is a token (RFC 9110 section 5.1, 5.6.2).
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: A field value: visible US-ASCII, spaces and tabs inside (RFC 9110 section 5.5: no CR, LF, NUL or
#: other control character; obs-text is refused, as new fields should not use it).
_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?")


@takes(f"a mapping of header names to values (at most {HEADERS_MAX})")
def read_headers(field: Field) -> tuple[tuple[str, str], ...]:
    """A site's extra request headers: a mapping of field names (tokens, RFC 9110 section 5.1) to values
    (visible US-ASCII with inner spaces, section 5.5), at most :data:`HEADERS_MAX`, a name given once
    whatever its case; ((name, value), ...) in file order. A name the fetcher sets, ``User-Agent``, or
    one that carries credentials is refused, naming the setting to use instead."""
    value = field.value
    if not isinstance(value, LineDict) or not 1 <= len(value) <= HEADERS_MAX:
        raise field.error(f"must be a mapping of 1 to {HEADERS_MAX} header names to values, such as X-Planet: python")
    check_duplicate(value, field.key)
    headers: list[tuple[str, str]] = []
    for name, text in value.items():
        problem = _header_problem(str(name), text, [given for given, _ in headers])
        if problem is not None:
            raise FieldError(value.lines[str(name)], f"{field.key}.{name}", problem)
        headers.append((str(name), str(text).strip()))
    return tuple(headers)


def _header_problem(name: str, value: Any, earlier: list[str]) -> str | None:
    """What is wrong with the header ``name: value`` of a site, or None."""
    lower = name.lower()
    if not _TOKEN.fullmatch(name):
        return f"{name!r} is not a header name (letters, digits and !#$%&'*+.^_`|~- only)"
    if lower in CREDENTIAL_HEADERS:
        return f"{name} carries credentials, which do not belong in sites.yaml: give them under credentials:"
    if lower in OWNED_HEADERS:
        return f"{name} is set by syndicator itself"
    if lower == "user-agent":
        return "give the site's contact URL as its user_agent instead"
    if lower in (given.lower() for given in earlier):
        return f"{name} is given twice"
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return "must be text"
    text = str(value).strip()
    if len(text) > HEADER_VALUE_MAX_CHARS or not _VALUE.fullmatch(text):
        return (
            f"must be 1 to {HEADER_VALUE_MAX_CHARS} characters of plain ASCII text "
            "(no line break or other control character)"
        )
    return None


@dataclass(frozen=True)
class SiteSetting:
    """One setting a site may give: its ``name``, its reader, what it means in the user's words
    (``means``, one line of Markdown), and whether it overrides the planet's setting of that name
    (``planet``; False for a setting only a site has)."""

    name: str
    read: Reader
    means: str
    planet: bool = True


#: A site's own settings, in the order they are read; each with the planet setting's reader and bounds.
SITE_SETTINGS: dict[str, SiteSetting] = {
    setting.name: setting
    for setting in (
        SiteSetting(
            "items_per_feed", SETTINGS["items_per_feed"].read, "newest entries of this site in the merged stream"
        ),
        SiteSetting("min_interval", SETTINGS["min_interval"].read, "its feed is checked at most this often"),
        SiteSetting("max_interval", SETTINGS["max_interval"].read, "its feed waits at most this long between checks"),
        SiteSetting("timeout", SETTINGS["timeout"].read, "time to connect and between bytes for its feed"),
        SiteSetting(
            "user_agent",
            SETTINGS["user_agent"].read,
            "contact URL in the User-Agent its feed is fetched with, `syndicator/0.1.0 (+URL)`",
        ),
        SiteSetting(
            "headers",
            read_headers,
            "extra request headers sent with its feed's requests (no credentials: see `credentials`)",
            planet=False,
        ),
        SiteSetting(
            "summary_only",
            read_bool,
            "publish its entries' summaries only, never their content (in `feed.xml`, `feed.json` and old feeds too)",
            planet=False,
        ),
    )
}


def read_site_settings(item: LineDict, where: str, bounds: tuple[float, float]) -> dict[str, Any]:
    """The settings of the site ``item`` (the mapping at ``where``, ``sites[3]``) that it gives, as
    :class:`configtypes.Site` fields ({name: value}); ``user_agent`` is made the whole header.
    ``bounds``: the planet's (min_interval, max_interval), seconds, that a site's own must agree with.

    Raises:
        FieldError: a value the planet's setting would refuse, a bad header, or a site whose
            min_interval would exceed its max_interval; the field is named ``sites[3].timeout``.
    """
    values: dict[str, Any] = {}
    for key, setting in SITE_SETTINGS.items():
        if key not in item:
            continue
        try:
            values[key] = setting.read(Field(item, key, item[key], item.lines[key]))
        except FieldError as error:
            raise FieldError(error.line, f"{where}.{error.field}", error.problem) from None
    if "user_agent" in values:
        values["user_agent"] = f"syndicator/{__version__} (+{values['user_agent']})"
    low, high = values.get("min_interval", bounds[0]), values.get("max_interval", bounds[1])
    if low > high:
        key = "min_interval" if "min_interval" in values else "max_interval"
        mine = "the site's" if "min_interval" in values else "the planet's"
        theirs = "the site's" if "max_interval" in values else "the planet's"
        problem = (
            f"min_interval ({number_text(low)} s, {mine}) must not exceed max_interval ({number_text(high)} s, "
            f"{theirs}); give the site both"
        )
        raise FieldError(item.lines[key], f"{where}.{key}", problem)
    return values
