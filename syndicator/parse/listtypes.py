"""What an old planet's config or a subscription list gives (:mod:`sublists` reads them): its feeds
(:class:`Candidate`) and, for ``syndicator init``, the planet's own settings (:class:`OldPlanet`).

Values are as the file wrote them (text, not checked yet): the drivers check them as sites.yaml
would (:mod:`drivers.merge`) and map the settings (:mod:`drivers.moving`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Candidate:
    """A feed as a subscription list gives it.

    Attributes:
        feed: the feed URL as written (not checked yet).
        name: the name given (raw text, possibly empty).
        link: the home page given, or None (not checked yet).
        face: an image of the site or its author (Venus's and Planet 2.0's ``face``, pluto's
            ``avatar``): a URL or a file name, as written; or None.
        extra: other values the old planet passed to its templates for this feed, in file order
            ((key, text) pairs: pluto's ``author``, Venus's ``facewidth``, rawdog's ``define_X``...);
            sites.yaml keeps them under the site's ``extra``.
        dropped: the keys of settings this feed gave that steer the old planet itself (filters,
            credentials, polling periods...), which syndicator has no per-site setting for.
    """

    feed: str
    name: str = ""
    link: str | None = None
    face: str | None = None
    extra: tuple[tuple[str, str], ...] = ()
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True)
class OldPlanet:
    """An old planet's config, as :func:`sublists.read_planet` read it.

    Attributes:
        kind: ``venus`` (Planet Venus or Planet 2.0 INI), ``pluto`` (pluto INI), ``rawdog`` or ``opml``.
        settings: the planet's own settings as written, in file order ((key, text) pairs, keys in
            lower case): the ``[Planet]`` section, pluto's keys before any section, rawdog's
            directives, OPML's ``<head>`` elements.
        feeds: the feeds, in file order, repeats included.
        others: what the file holds besides settings and feeds, each as one short text
            (``[index.html.tmpl] section``, ``reading list <URL>``, ``include FILE``).
    """

    kind: str
    settings: tuple[tuple[str, str], ...]
    feeds: list[Candidate]
    others: tuple[str, ...] = field(default=())
