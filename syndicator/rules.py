"""The ``filters`` of a planet or a site as values (docs/filters.md): :class:`Rule` and :class:`Filters`,
frozen dataclasses read by config/filters.py and applied by site/filters.py."""

from __future__ import annotations

from dataclasses import dataclass, field

#: The kinds of a filter rule that name text values, in the order a reason names them (:class:`Rule`).
RULE_KINDS = ("category", "keyword", "author", "language", "link")


@dataclass(frozen=True)
class Rule:
    """One rule of a ``keep`` or ``drop`` list of ``filters`` (docs/filters.md): it matches an entry when
    every kind it gives matches; a kind given a list matches when any of its values does.

    Attributes:
        category, keyword, author, language, link: the values of each kind as written in sites.yaml
            (stripped; language tags in canonical case), () when the rule does not name that kind.
        older_than, newer_than: the entry's age bounds, seconds (its date, else when it was first seen,
            against the build's clock), or None.
        where: the rule's path in sites.yaml (``filters.drop[0]``, ``sites[2].filters.keep[1]``) and
            line: where a reason points. Neither is part of the rule's identity (equality, repr).
    """

    category: tuple[str, ...] = ()
    keyword: tuple[str, ...] = ()
    author: tuple[str, ...] = ()
    language: tuple[str, ...] = ()
    link: tuple[str, ...] = ()
    older_than: float | None = None
    newer_than: float | None = None
    where: str = field(default="", compare=False, repr=False)
    line: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True)
class Filters:
    """The ``filters`` of a planet or of a site: its ``keep`` and ``drop`` rules (tuples of :class:`Rule`).

    An entry matching a ``drop`` rule is dropped; else, when there are ``keep`` rules, only an entry
    matching one of them is kept (site/filters.py; docs/filters.md).
    """

    keep: tuple[Rule, ...] = ()
    drop: tuple[Rule, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.keep or self.drop)
