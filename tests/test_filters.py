"""Filters (docs/filters.md): what each kind of rule keeps and drops, their precedence, the reasons, and
how sites.yaml refuses a rule it cannot read."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from syndicator.config.load import load_config
from syndicator.configtypes import Config
from syndicator.errors import ConfigError
from syndicator.feedtypes import Entry, StoredEntry
from syndicator.site.filters import fields_needed, judges_age, passes, verdict

from .conftest import NOW

FEED = "https://blog.example.org/feed.xml"


def planet(tmp_path: Path, filters: str = "", site: str = "") -> Config:
    """A planet of one site, with the planet's ``filters`` and the site's (YAML, indented as written)."""
    text = "title: Planet\nlink: https://planet.example.org/\n"
    text += "filters:\n" + textwrap.indent(textwrap.dedent(filters), "  ") if filters else ""
    text += f"sites:\n  - name: Blog\n    feed: {FEED}\n"
    text += "    filters:\n" + textwrap.indent(textwrap.dedent(site), "      ") if site else ""
    path = tmp_path / "sites.yaml"
    path.write_text(text)
    return load_config(path)


def stored(**fields: object) -> StoredEntry:
    """A stored entry of the site's feed, posted ten days before NOW unless ``date`` says otherwise."""
    entry = replace(Entry(id="https://blog.example.org/1", title="A post", date=NOW - timedelta(days=10)), **fields)  # type: ignore[arg-type]
    return StoredEntry(FEED, entry, NOW - timedelta(days=10))


def kept(config: Config, **fields: object) -> bool:
    return passes(config, config.sites[0], stored(**fields), NOW)


def test_a_planet_without_filters_publishes_every_entry(tmp_path: Path) -> None:
    config = planet(tmp_path)
    assert kept(config) and verdict(config, config.sites[0], stored(), NOW).reason == "kept: no filters"
    assert fields_needed(config) == frozenset() and not judges_age(config)


def test_category_compares_case_and_accents_aside(tmp_path: Path) -> None:
    config = planet(tmp_path, "drop:\n  - category: [sponsored, Off-Topic]\n")
    assert not kept(config, categories=("Python", "SPONSORED"))
    assert not kept(config, categories=("off-topic",))
    assert kept(config, categories=("Python", "sponsored posts"))  # a category is compared whole
    assert kept(config)  # an entry without categories matches no category rule
    assert fields_needed(config) == {"categories"}
    reason = verdict(config, config.sites[0], stored(categories=("Sponsored",)), NOW).reason
    assert reason == "dropped by filters.drop[0] (line 5): category 'sponsored'"


def test_keyword_matches_whole_words_of_the_text_not_substrings(tmp_path: Path) -> None:
    config = planet(tmp_path, "drop:\n  - keyword: crypto\n")
    assert not kept(config, title="Why Crypto?")
    assert not kept(config, summary="<p>about <b>crypto</b>, again</p>")
    assert not kept(config, content="<p>on crypto.</p>")
    assert kept(config, title="Cryptography for beginners", summary="<p>encrypted</p>")
    assert kept(config, summary='<a href="https://crypto.example/">a link</a>')  # markup is not text
    assert fields_needed(config) == {"title", "summary", "content"}


def test_a_keyword_phrase_matches_consecutive_words_accents_and_case_aside(tmp_path: Path) -> None:
    config = planet(tmp_path, 'keep:\n  - keyword: ["machine learning", café]\n')
    assert kept(config, title="MACHINE-Learning at scale")
    assert kept(config, content="<p>machine <em>learning</em></p>")
    assert kept(config, title="A CAFE in town") and kept(config, title="Un café")
    assert not kept(config, title="Learning machine")
    assert not kept(config, title="A machine", summary="<p>Learning</p>")  # a phrase stays within one part
    assert not kept(config, title="A cafeteria")
    assert kept(config, summary="<p>ma<b>chine</b> learning</p>")  # one word to a reader
    assert kept(config, summary="<p>caf&eacute;</p>") and kept(config, summary="<p>a &lt;3 machine &gt; learning</p>")


def test_author_compares_the_whole_name(tmp_path: Path) -> None:
    config = planet(tmp_path, "drop:\n  - author: Jane Doe\n")
    assert not kept(config, author="JANE  DOE") and not kept(config, author="Jané Doe")
    assert kept(config, author="Jane Doe Jr") and kept(config, author=None)


def test_language_is_a_prefix_and_the_sites_language_overrides_the_feeds(tmp_path: Path) -> None:
    config = planet(tmp_path, "keep:\n  - language: en\n")
    assert kept(config, language="en") and kept(config, language="en-GB")
    assert not kept(config, language="fr") and not kept(config, language=None)
    assert not kept(planet(tmp_path, "keep:\n  - language: en-GB\n"), language="en")
    site = replace(config.sites[0], language="fr")
    assert not passes(config, site, stored(language="en"), NOW)
    assert passes(config, replace(site, language="en-US"), stored(language="fr"), NOW)


def test_link_is_a_shell_pattern_of_the_entrys_link(tmp_path: Path) -> None:
    config = planet(tmp_path, "keep:\n  - link: https://blog.example.org/python/*\n")
    assert kept(config, link="https://blog.example.org/python/2026/a-post")
    assert not kept(config, link="https://blog.example.org/rust/a-post")
    assert not kept(config, link="https://blog.example.org/Python/a-post")  # case matters in a path
    assert not kept(config, link=None)


def test_a_pathological_link_pattern_is_answered_at_once(tmp_path: Path) -> None:
    """fnmatch's translation cannot backtrack without end (no user regular expressions)."""
    config = planet(tmp_path, "drop:\n  - link: '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'\n")
    assert kept(config, link="https://x.example/" + "a" * 5000)


def test_age_is_measured_from_the_entrys_date_to_the_builds_clock(tmp_path: Path) -> None:
    config = planet(tmp_path, "drop:\n  - older_than: 30d\n")
    assert kept(config, date=NOW - timedelta(days=29)) and not kept(config, date=NOW - timedelta(days=31))
    undated = StoredEntry(FEED, Entry(id="x"), NOW - timedelta(days=40))  # no date: when it was first seen
    assert not passes(config, config.sites[0], undated, NOW)
    assert judges_age(config)
    recent = planet(tmp_path, "keep:\n  - newer_than: 1w\n")
    assert kept(recent, date=NOW - timedelta(days=6)) and not kept(recent, date=NOW - timedelta(days=8))
    reason = verdict(config, config.sites[0], stored(date=NOW - timedelta(days=31)), NOW).reason
    assert reason == "dropped by filters.drop[0] (line 5): older than 30 days"


def test_a_rule_of_several_kinds_needs_them_all(tmp_path: Path) -> None:
    config = planet(tmp_path, "drop:\n  - {category: python, keyword: [snake, zoo]}\n")
    assert not kept(config, categories=("Python",), title="A snake")
    assert kept(config, categories=("Python",), title="Code") and kept(config, title="A snake")
    reason = verdict(config, config.sites[0], stored(categories=("python",), title="Zoo"), NOW).reason
    assert reason == "dropped by filters.drop[0] (line 5): category 'python', keyword 'zoo'"


def test_drop_wins_over_keep_and_keep_rules_must_match(tmp_path: Path) -> None:
    config = planet(tmp_path, "keep:\n  - category: python\ndrop:\n  - keyword: crypto\n")
    assert kept(config, categories=("python",))
    assert not kept(config, categories=("python",), title="Crypto in Python")
    assert not kept(config, categories=("rust",))
    reason = verdict(config, config.sites[0], stored(categories=("rust",)), NOW).reason
    assert reason == "dropped: matches no rule of filters.keep (line 5)"
    reason = verdict(config, config.sites[0], stored(categories=("python",)), NOW).reason
    assert reason == "kept by filters.keep[0] (line 5): category 'python'"


def test_the_sites_rules_and_the_planets_must_both_let_an_entry_through(tmp_path: Path) -> None:
    config = planet(tmp_path, "drop:\n  - keyword: crypto\n", site="keep:\n  - category: python\n")
    assert kept(config, categories=("python",))
    assert not kept(config, categories=("python",), title="crypto")  # the planet drops it
    assert not kept(config, categories=("rust",))  # the site keeps only python
    said = verdict(config, config.sites[0], stored(categories=("python",)), NOW).reason
    site_said, planet_said = said.split("; ")
    assert site_said == "kept by sites[0].filters.keep[0] (line 11): category 'python'"
    assert planet_said == "kept: no rule of filters.drop (line 5) drops it"
    said = verdict(config, config.sites[0], stored(categories=("rust",)), NOW).reason
    assert said == "dropped: matches no rule of sites[0].filters.keep (line 11)"


def test_a_site_without_filters_is_judged_by_the_planets_alone(tmp_path: Path) -> None:
    config = planet(tmp_path, site="drop:\n  - keyword: crypto\n")
    assert not kept(config, title="crypto")
    other = replace(config.sites[0], filters=config.filters)  # the planet has none
    assert passes(config, other, stored(title="crypto"), NOW)


@pytest.mark.parametrize(
    ("filters", "line", "message"),
    [
        ("drop:\n  - colour: red\n", 5, "filters.drop[0].colour: unknown kind; expected category, keyword, author"),
        ("drop:\n  - older_than: ninety days\n", 5, "filters.drop[0].older_than: 'ninety days' is not a duration"),
        ("drop:\n  - older_than: 0\n", 5, "filters.drop[0].older_than: must be a duration above 0"),
        ("drop:\n  - category: []\n", 5, "filters.drop[0].category: must not be an empty list"),
        ("drop: []\n", 4, "filters.drop: must be a non-empty list of rules"),
        ("keep:\n  - {}\n", 4, "filters.keep[0]: must be a mapping naming at least one of category"),
        ("keep:\n  - keyword: [python, {a: 1}]\n", 5, "filters.keep[0].keyword[1]: must be text, not a mapping"),
        ("keep:\n  - author: true\n", 5, "filters.keep[0].author: must be text, not true"),
        ("keep:\n  - keyword: '!!!'\n", 5, "filters.keep[0].keyword: '!!!' holds no word"),
        ("keep:\n  - language: english please\n", 5, "filters.keep[0].language: 'english please' is not a BCP 47"),
        ("select:\n  - keyword: x\n", 4, "filters.select: unknown key; expected keep or drop"),
    ],
)
def test_a_rule_sites_yaml_cannot_read_is_one_line_naming_the_file_line_and_field(
    tmp_path: Path, filters: str, line: int, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        planet(tmp_path, filters)
    assert str(caught.value).startswith(f"{tmp_path / 'sites.yaml'}:{line}: {message}")
    assert "\n" not in str(caught.value)


def test_a_sites_rule_is_named_by_its_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sites.yaml:8: sites\[0\]\.filters\.keep\[0\]\.older_than: 'soon'"):
        planet(tmp_path, site="keep:\n  - older_than: soon\n")
    with pytest.raises(ConfigError, match=r"sites.yaml:3: filters: must be a mapping of keep and drop"):
        path = tmp_path / "sites.yaml"
        path.write_text(f"title: P\nlink: https://p.example/\nfilters: [x]\nsites: [{{name: B, feed: '{FEED}'}}]\n")
        load_config(path)


def test_one_rule_alone_is_a_list_of_one(tmp_path: Path) -> None:
    config = planet(tmp_path, "drop: {keyword: crypto}\n")
    assert not kept(config, title="crypto") and kept(config, title="python")
