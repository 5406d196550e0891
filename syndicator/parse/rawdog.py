"""rawdog config files -> :class:`listtypes.OldPlanet`, for ``syndicator import`` and ``init``.

rawdog's config (its sample ``config`` file) is one directive a line, ``NAME VALUE``; ``#`` starts a
comment line. A feed is ``feed PERIOD URL [KEY=VALUE ...]``, its arguments given on that line or as
indented ``KEY VALUE`` lines after it; ``feeddefaults`` gives arguments every feed starts with. Of a
feed's arguments, ``define_name`` is the site's name and the other ``define_X`` (strings for rawdog's
item templates) and ``id`` are kept as the site's ``extra``; the rest steer rawdog itself (HTTP
credentials, proxies, ``format``, ``maxage``...) and are dropped, and so is the PERIOD (as
``period``): syndicator learns how often to check each feed.
"""

from __future__ import annotations

import re
from pathlib import Path

from syndicator.errors import ConfigError
from syndicator.parse.listtypes import Candidate, OldPlanet

#: A ``feed PERIOD URL`` line: what tells a rawdog config from an INI file (which also has no ``[section]``).
_FEED_LINE = re.compile(r"^feed[ \t]+[^\s=:]+[ \t]+\S", re.MULTILINE)
_SECTION = re.compile(r"^[ \t]*\[[^\]\n]*\][ \t]*$", re.MULTILINE)


def is_rawdog(text: str) -> bool:
    """True when ``text`` reads as a rawdog config: a ``feed PERIOD URL`` line and no INI ``[section]``."""
    return _FEED_LINE.search(text) is not None and _SECTION.search(text) is None


def read_rawdog(path: Path, text: str, max_feeds: int) -> OldPlanet:
    """The rawdog config ``path`` (its ``text``), at most ``max_feeds`` feeds.

    Raises:
        ConfigError: a ``feed`` line without a URL, or more than ``max_feeds`` feeds (naming the path, and the line).
    """
    settings: list[tuple[str, str]] = []
    others: list[str] = []
    feeds: list[list[tuple[str, str]]] = []  # each feed's arguments, ("url", URL) first
    defaults: list[tuple[str, str]] = []
    current: list[tuple[str, str]] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[:1] in " \t":  # an argument of the feed (or feeddefaults) above
            key, _, value = line.strip().partition(" ")
            if current is not None:
                current.append((key.lower(), value.strip()))
            continue
        name, _, rest = line.strip().partition(" ")
        name, current = name.lower(), None
        if name == "feed":
            words = rest.split()
            if len(words) < 2:
                raise ConfigError(f"{path}:{number}: a feed line needs a period and a URL: {line.strip()!r}")
            current = [("url", words[1]), ("period", words[0])]
            current += [(k.lower(), v) for k, _, v in (word.partition("=") for word in words[2:])]
            feeds.append(current)
            if len(feeds) > max_feeds:
                raise ConfigError(f"{path}: more than {max_feeds:,} feeds: split the list")
        elif name == "feeddefaults":
            current = defaults
        elif name == "include":
            others.append(f"include {rest.strip()}")
        else:
            settings.append((name, rest.strip()))
    return OldPlanet("rawdog", tuple(settings), [_feed([*defaults, *arguments]) for arguments in feeds], tuple(others))


def _feed(arguments: list[tuple[str, str]]) -> Candidate:
    """A feed from its arguments (the feed's own after ``feeddefaults``', the last of a key winning)."""
    values = dict(arguments)
    extra = {k.removeprefix("define_"): v for k, v in values.items() if k.startswith("define_") and k != "define_name"}
    if "id" in values:
        extra["id"] = values["id"]
    dropped = [k for k in values if k not in ("url", "id", "define_name") and not k.startswith("define_")]
    return Candidate(values["url"], values.get("define_name", ""), None, None, tuple(extra.items()), tuple(dropped))
