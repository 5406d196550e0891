"""The ``filters`` of sites.yaml, the planet's and a site's -> :class:`configtypes.Filters`.

``filters`` is a mapping of ``keep`` and ``drop``, each a list of rules (one rule alone is a list of
one); a rule is a mapping of kinds (``category``, ``keyword``, ``author``, ``language``, ``link``, each
text or a non-empty list of texts; ``older_than`` and ``newer_than``, durations). What they match is
site/filters.py's; docs/filters.md says it for users. Every error names the line and the field, e.g.
``filters.drop[0].colour: unknown kind; expected ...``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from syndicator.config.fields import FieldError, check_duplicate, field_name
from syndicator.config.readers import Field, takes
from syndicator.config.yamlfile import LineDict, parse_yaml
from syndicator.errors import ConfigError
from syndicator.language import language_tag
from syndicator.rules import RULE_KINDS, Filters, Rule
from syndicator.values import parse_duration, strip_control, words

#: The age kinds of a rule, durations (seconds).
AGE_KINDS = ("older_than", "newer_than")
#: Most rules in one ``keep`` or ``drop`` list, and most values of one kind: bounds no planet reaches,
#: so that a build's cost stays proportional to its entries.
RULES_MAX = 1000
VALUES_MAX = 1000
#: Longest value of a rule, in characters.
VALUE_MAX_CHARS = 1000
#: The longest age a rule may name: 100 years, in seconds.
AGE_MAX = 100 * 365 * 86400.0
_KINDS = (*RULE_KINDS, *AGE_KINDS)
_EXPECTED = f"{', '.join(_KINDS[:-1])} or {_KINDS[-1]}"


@takes(
    "`keep` and `drop` lists of rules, each rule naming a `category`, `keyword`, `author`, `language`, "
    "`link`, `older_than` or `newer_than` (docs/filters.md)"
)
def read_filters(field: Field) -> Filters:
    """The planet's ``filters`` (:func:`filters_of`)."""
    return filters_of(field.data, field.key, "")


def filters_of(mapping: LineDict, key: str, where: str) -> Filters:
    """The ``filters`` under ``key`` of ``mapping`` (at ``where``: ``""`` for the planet, ``sites[2]`` for a
    site) as Filters; left empty, none.

    Raises:
        FieldError: not a mapping of ``keep`` and ``drop``; an empty list; a rule naming an unknown kind,
            no kind, a value that is not text, a bad language tag, keyword without a word or a bad duration.
    """
    value, path = mapping[key], field_name(where, key)
    if value is None:
        return Filters()
    if not isinstance(value, LineDict):
        raise FieldError(mapping.lines[key], path, "must be a mapping of keep and drop lists of rules")
    check_duplicate(value, path)
    for name in value:
        if name not in ("keep", "drop"):
            raise FieldError(value.lines[str(name)], f"{path}.{name}", "unknown key; expected keep or drop")
    return Filters(*(_rules(value, name, path) if name in value else () for name in ("keep", "drop")))


def rule_from_text(text: str, option: str) -> Rule:
    """A rule given on the command line as YAML (``--drop 'keyword: crypto'``), read as one of sites.yaml,
    named by ``option`` and its text in reasons.

    Raises:
        ConfigError: not YAML, or not a rule (one line, naming the option: ``--drop: colour: unknown kind...``).
    """
    data = parse_yaml(text, option, lines=False)
    try:
        rule = _rule(data, 1, option)
    except FieldError as error:
        field = error.field.removeprefix(option).lstrip(".")
        raise ConfigError(f"{option}: {field + ': ' if field else ''}{error.problem}") from None
    return replace(rule, where=f"{option} {text.strip()!r}", line=0)


def _rules(mapping: LineDict, key: str, where: str) -> tuple[Rule, ...]:
    """The rules of the ``keep`` or ``drop`` list ``key`` (one mapping alone is a list of one)."""
    value, line, path = mapping[key], mapping.lines[key], f"{where}.{key}"
    items = [value] if isinstance(value, LineDict) else value
    if not isinstance(items, list) or not items:
        raise FieldError(line, path, "must be a non-empty list of rules, such as [{category: python}]")
    if len(items) > RULES_MAX:
        raise FieldError(line, path, f"must be at most {RULES_MAX:,} rules")
    return tuple(_rule(item, line, f"{path}[{index}]") for index, item in enumerate(items))


def _rule(item: Any, line: int, where: str) -> Rule:
    """One rule: a mapping of kinds to values."""
    if not isinstance(item, LineDict) or not item:
        raise FieldError(line, where, f"must be a mapping naming at least one of {_EXPECTED}")
    check_duplicate(item, where)
    given: dict[str, Any] = {}
    for kind in item:
        if kind not in _KINDS:
            raise FieldError(item.lines[str(kind)], f"{where}.{kind}", f"unknown kind; expected {_EXPECTED}")
        given[kind] = _age(item, kind, where) if kind in AGE_KINDS else _values(item, kind, where)
    return Rule(**given, where=where, line=item.line)


def _age(item: LineDict, kind: str, where: str) -> float:
    """An age bound: a duration (``90d``, ``12h``, seconds), above 0 and at most :data:`AGE_MAX`."""
    line, path = item.lines[kind], f"{where}.{kind}"
    try:
        seconds = parse_duration(item[kind])
    except ValueError as error:
        raise FieldError(line, path, str(error)) from None
    if not 0 < seconds <= AGE_MAX:
        raise FieldError(line, path, "must be a duration above 0 and at most 100 years, such as 90d")
    return seconds


def _values(item: LineDict, kind: str, where: str) -> tuple[str, ...]:
    """The text values of one kind: one text, or a non-empty list of them (a number is its text)."""
    value, line, path = item[kind], item.lines[kind], f"{where}.{kind}"
    listed = isinstance(value, list)
    values = value if listed else [value]
    if not values:
        raise FieldError(line, path, "must not be an empty list")
    if len(values) > VALUES_MAX:
        raise FieldError(line, path, f"must be at most {VALUES_MAX:,} values")
    return tuple(_value(kind, one, line, f"{path}[{index}]" if listed else path) for index, one in enumerate(values))


def _value(kind: str, value: Any, line: int, path: str) -> str:
    """One value of ``kind``, checked: text without control characters; a language tag; a keyword with a word."""
    if not isinstance(value, str | int | float) or isinstance(value, bool) or not str(value).strip():
        raise FieldError(line, path, f"must be text, not {_not_text(value)}")
    text = str(value).strip()
    if strip_control(text) != text or len(text) > VALUE_MAX_CHARS:
        raise FieldError(line, path, f"must be one line of at most {VALUE_MAX_CHARS:,} characters")
    if kind == "language":
        tag = language_tag(text)
        if tag is None:
            raise FieldError(line, path, f"{text[:40]!r} is not a BCP 47 language tag such as en, ar or pt-BR")
        return tag
    if kind == "keyword" and not words(text):
        raise FieldError(line, path, f"{text!r} holds no word (letters or digits) to look for")
    return text


def _not_text(value: Any) -> str:
    """How an error names a value that is not text: ``empty``, ``true``, ``a list``, ``a mapping``."""
    if value is None or isinstance(value, str):
        return "empty"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | dict):
        return "a list" if isinstance(value, list) else "a mapping"
    return type(value).__name__
