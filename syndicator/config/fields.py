"""One field of sites.yaml being read: :class:`FieldError`, which names the field's line and path
(``sites[3].feed``), and the readers the planet's settings and its sites share: non-empty text,
http(s) URLs, images, keys written twice.

Each reader takes the mapping the value is in (a :class:`yamlfile.LineDict`, for its lines), the
key, the value, and ``where`` the mapping is (``""`` at the top level, ``sites[3]`` for a site).
"""

from __future__ import annotations

import re
from typing import Any

from syndicator.config.yamlfile import LineDict
from syndicator.values import NO_CREDENTIALS, url_problem

#: A value that starts like a URL (a scheme and a colon, RFC 3986 section 3.1): anything else
#: given as a site's feed is a local file path.
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
#: A path inside the published folder: letters, digits and ``. _ ~ - /``, not starting with ``/`` or ``.``
#: (no ``%``, ``?`` or ``#``: ``%2e%2e`` is ``..`` to a browser).
_RELATIVE_PATH = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9._~/-]*")


class FieldError(Exception):
    """A value sites.yaml must not hold: ``line`` (1-based), ``field`` (its path, e.g. ``sites[3].feed``)
    and ``problem`` (the message's end); :func:`load.load_config` makes it a one-line ConfigError."""

    def __init__(self, line: int, field: str, problem: str) -> None:
        super().__init__(problem)
        self.line, self.field, self.problem = line, field, problem


def field_name(where: str, key: str) -> str:
    """The path of ``key`` in the mapping at ``where`` (``sites[3]`` + ``feed``: ``sites[3].feed``)."""
    return f"{where}.{key}" if where else key


def check_duplicate(mapping: LineDict, where: str) -> None:
    """Refuse a key written twice in ``mapping`` itself (FieldError on its second line)."""
    if mapping.duplicate is not None:
        key, line, first = mapping.duplicate
        raise FieldError(line, field_name(where, key), f"appears twice (first on line {first})")


def check_duplicates(value: Any, where: str) -> None:
    """Refuse a key written twice in any mapping of ``value`` (a site's ``extra`` included), in document
    order; the field is named by its path, e.g. ``sites[2].extra.links.home``."""
    if isinstance(value, LineDict):
        check_duplicate(value, where)
        for key, item in value.items():
            check_duplicates(item, field_name(where, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_duplicates(item, f"{where}[{index}]")


def plain(value: Any) -> Any:
    """YAML data with every LineDict made a plain dict."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def text(mapping: LineDict, key: str, value: Any, where: str = "") -> str:
    """Non-empty text (a number is its text), stripped (str)."""
    if not isinstance(value, str | int | float) or isinstance(value, bool) or not str(value).strip():
        raise FieldError(mapping.lines[key], field_name(where, key), "must be non-empty text")
    return str(value).strip()


def http_url(mapping: LineDict, key: str, value: Any, where: str = "") -> str:
    """An http(s) URL as :func:`values.url_problem` takes it, stripped (str); for ``user_agent``, a URL
    with credentials is refused as one that would be sent to every feed's server."""
    problem = url_problem(value)
    if problem is not None and key == "user_agent" and problem.endswith(NO_CREDENTIALS):
        problem = f"credentials in a URL would be sent to every feed's server; {NO_CREDENTIALS}"
    if problem is not None:
        raise FieldError(mapping.lines[key], field_name(where, key), problem)
    return str(value).strip()


#: Most entries ``new_feed_items`` may name (a planet or a site): a bound, not a cap anyone reaches.
NEW_ITEMS_MAX = 100_000


def new_items(mapping: LineDict, key: str, value: Any, where: str = "") -> int:
    """A ``new_feed_items`` (the planet's or a site's): a whole number from 0 to :data:`NEW_ITEMS_MAX`,
    or ``all``; 0 and ``all`` both mean every entry (int, 0 for all)."""
    if isinstance(value, str) and value.strip().lower() == "all":
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= NEW_ITEMS_MAX:
        raise FieldError(
            mapping.lines[key],
            field_name(where, key),
            f"must be a whole number from 0 to {NEW_ITEMS_MAX:,}, or all, not {value!r}",
        )
    return value


def image(mapping: LineDict, key: str, value: Any, where: str) -> str | None:
    """An image for the pages: an http(s) URL, or a path inside the published folder (a file of a
    ``static/`` folder, see docs/reference/templates.md): relative, without ``..``, ``%``, ``?`` or ``#``."""
    if value is None:
        return None
    stripped = str(value).strip() if isinstance(value, str) else ""
    if stripped and SCHEME.match(stripped):
        return http_url(mapping, key, value, where)
    problem = image_problem(value)
    if problem is not None:
        raise FieldError(mapping.lines[key], field_name(where, key), problem)
    return stripped


def image_problem(value: Any) -> str | None:
    """What is wrong with ``value`` as an image of sites.yaml (``face``, ``logo``): None for an http(s)
    URL (:func:`values.url_problem`) or a path inside the published folder, else the problem (str)."""
    stripped = str(value).strip() if isinstance(value, str) else ""
    if stripped and SCHEME.match(stripped):
        return url_problem(stripped)
    if not _RELATIVE_PATH.fullmatch(stripped) or ".." in stripped.split("/"):
        return f"{value!r} is neither an http(s) URL nor a relative path such as faces/jane.png"
    return None
