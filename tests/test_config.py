"""config: sites.yaml -> Config, validated before any network or state change."""

from __future__ import annotations

import re
import textwrap
from dataclasses import fields, replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator import __version__
from syndicator.cli import main
from syndicator.config.load import load_config, reread
from syndicator.config.settings import SETTINGS
from syndicator.configtypes import Config, Site
from syndicator.errors import ConfigError
from syndicator.values import parse_duration

MINIMAL = """\
title: Planet Test
link: https://planet.example.org/
sites:
  - name: Example Blog
    feed: https://blog.example.org/feed.xml
    link: https://blog.example.org/
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sites.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_minimal_file_gets_documented_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    assert config.title == "Planet Test"
    assert config.link == "https://planet.example.org/"
    assert config.sites == (Site("Example Blog", "https://blog.example.org/feed.xml", "https://blog.example.org/"),)
    assert (config.workers, config.timeout, config.retries) == (8, 15.0, 1)
    assert (config.items_per_feed, config.feed_entries) == (5, 1000)
    assert config.stale_after == 4 * 86400
    assert config.max_bytes == 10 * 1024 * 1024
    assert config.user_agent == f"syndicator/{__version__} (+https://planet.example.org/)"
    assert config.output == tmp_path / "public"
    assert config.cache == tmp_path / "cache"


def test_each_optional_config_field_is_one_setting_whose_default_is_the_field_default(tmp_path: Path) -> None:
    """The table of settings covers every Config field but the required ones; a file without them gets
    exactly the defaults of a Config made in code (paths resolved, the User-Agent built). The fields of
    the planets a file defines (``planets:``, docs/planets.md) are read by config/planets.py, not the table."""
    planet_fields = {"name", "planets", "view_of", "templates"}
    optional = {f.name for f in fields(Config)} - {"path", "title", "link", "sites"} - planet_fields
    assert sorted(setting.attribute for setting in SETTINGS.values()) == sorted(optional)
    config = load_config(write(tmp_path, MINIMAL))
    made = Config(config.path, config.title, config.link, config.sites)
    assert replace(config, output=made.output, cache=made.cache, user_agent=made.user_agent) == made
    assert (config.output, config.cache) == (tmp_path / made.output, tmp_path / made.cache)


def test_every_setting_can_be_given(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """\
        title: Planet Test
        link: https://planet.example.org/
        workers: 3
        timeout: 2m
        retries: 0
        items_per_feed: 2
        feed_entries: 50
        stale_after: 1w
        user_agent: https://planet.example.org/about
        output: site/out
        cache: state
        sites:
          - name: A
            feed: http://a.example.org/feed
    """,
        )
    )
    assert (config.workers, config.timeout, config.retries) == (3, 120.0, 0)
    assert (config.items_per_feed, config.feed_entries, config.stale_after) == (2, 50, 7 * 86400.0)
    assert config.user_agent == f"syndicator/{__version__} (+https://planet.example.org/about)"
    assert config.output == tmp_path / "site" / "out"
    assert config.cache == tmp_path / "state"
    assert config.sites[0].link is None


def test_default_sites_yaml_of_the_project_is_valid() -> None:
    config = load_config(Path(__file__).resolve().parents[1] / "sites.yaml")
    assert len(config.sites) >= 1


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param(90, 90.0, id="bare-int-seconds"),
        pytest.param(1.5, 1.5, id="bare-float-seconds"),
        pytest.param("90s", 90.0, id="seconds"),
        pytest.param("15m", 900.0, id="minutes"),
        pytest.param("1h", 3600.0, id="hours"),
        pytest.param("4d", 345600.0, id="days"),
        pytest.param("2w", 1209600.0, id="weeks"),
        pytest.param(" 2.5 h ", 9000.0, id="spaces-and-fraction"),
    ],
)
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("4 days", id="word-unit"),
        pytest.param("soon", id="word"),
        pytest.param(-1, id="negative"),
        pytest.param(True, id="boolean"),
        pytest.param("1y", id="unknown-unit"),
        pytest.param(float("nan"), id="nan"),
        pytest.param(float("inf"), id="infinite"),
    ],
)
def test_bad_durations_raise(text: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


SITE_A = "  - name: A\n    feed: https://a.example.org/feed\n"
HEAD = "title: T\nlink: https://planet.example.org/\n"

#: (file text, line, field, words in the problem)
BAD_CONFIGS = [
    pytest.param(HEAD + "workerz: 3\nsites:\n" + SITE_A, 3, "workerz", "unknown setting", id="unknown-setting"),
    pytest.param(
        HEAD + "sites:\n" + SITE_A + "    url: https://x.example.org/\n",
        6,
        "sites[0].url",
        "unknown field",
        id="unknown-site-field",
    ),
    pytest.param("link: https://planet.example.org/\nsites:\n" + SITE_A, 1, "title", "is required", id="missing-title"),
    pytest.param("title: T\nsites:\n" + SITE_A, 1, "link", "is required", id="missing-link"),
    pytest.param(HEAD, 1, "sites", "is required", id="missing-sites"),
    pytest.param(HEAD + "sites: []\n", 3, "sites", "non-empty list", id="empty-sites"),
    pytest.param(
        HEAD + "sites:\n" + SITE_A + "  - name: B\n    link: https://b.example.org/\n",
        6,
        "sites[1].feed",
        "is required",
        id="missing-feed",
    ),
    pytest.param(
        HEAD + "sites:\n  - feed: https://a.example.org/feed\n", 4, "sites[0].name", "is required", id="missing-name"
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: ftp://a.example.org/feed\n",
        5,
        "sites[0].feed",
        "not an http(s) URL",
        id="ftp-feed",
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: feed.xml\n",
        5,
        "sites[0].feed",
        "'feed.xml' is neither an http(s) URL nor a file",
        id="missing-local-file",
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: blog.example.org/feed\n",
        5,
        "sites[0].feed",
        "neither an http(s) URL nor a file (a path is relative to the folder of sites.yaml)",
        id="url-without-scheme",
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: ftp://a.example.org/feed.xml\n",
        5,
        "sites[0].feed",
        "not an http(s) URL",
        id="other-scheme",
    ),
    pytest.param(
        HEAD + "sites:\n" + SITE_A + "    link: javascript:alert(1)\n",
        6,
        "sites[0].link",
        "not an http(s) URL",
        id="javascript-link",
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: https://a.example.org:99999/feed\n",
        5,
        "sites[0].feed",
        "not an http(s) URL",
        id="port-out-of-range",
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: 'http://[oops/feed'\n",
        5,
        "sites[0].feed",
        "not an http(s) URL",
        id="malformed-ipv6",
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: https://a.example.org:x/feed\n",
        5,
        "sites[0].feed",
        "not an http(s) URL",
        id="port-not-a-number",
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: https://a.example.org/" + "a" * 8000 + "\n",
        5,
        "sites[0].feed",
        "a URL of 8022 characters is longer than the 8000 allowed",
        id="url-too-long",
    ),
    pytest.param(
        HEAD + 'sites:\n  - name: A\n    feed: "https://a.example.org/a\\n-b.xml"\n',
        5,
        "sites[0].feed",
        "space or a control character",
        id="newline-in-feed",
    ),
    pytest.param(
        HEAD + 'sites:\n  - name: A\n    feed: "https://a.example.org/a\\tb.xml"\n',
        5,
        "sites[0].feed",
        "space or a control character",
        id="tab-in-feed",
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: https://a.example.org/my feed.xml\n",
        5,
        "sites[0].feed",
        "space or a control character",
        id="space-in-feed",
    ),
    pytest.param(
        HEAD + 'sites:\n  - name: A\n    feed: "https://a.example.org/\\u200bfeed"\n',
        5,
        "sites[0].feed",
        "space or a control character",
        id="zero-width-space-in-feed",
    ),
    pytest.param(
        HEAD + "sites:\n" + SITE_A + "    link: https://a.example.org/ home\n",
        6,
        "sites[0].link",
        "space or a control character",
        id="space-in-link",
    ),
    pytest.param(
        HEAD + 'user_agent: "https://planet.example.org/\\r\\nX-Injected: yes"\nsites:\n' + SITE_A,
        3,
        "user_agent",
        "space or a control character",
        id="header-injection-in-user-agent",
    ),
    pytest.param(
        HEAD + "sites:\n  - name: A\n    feed: https://user:pa55word@a.example.org/feed\n",
        5,
        "sites[0].feed",
        "would be published; give credentials: instead",
        id="credentials-in-feed",
    ),
    pytest.param(
        HEAD + "sites:\n" + SITE_A + "    link: https://token@a.example.org/\n",
        6,
        "sites[0].link",
        "credentials in a URL would be published on the site",
        id="user-in-link",
    ),
    pytest.param(
        "title: T\nlink: https://u:p@planet.example.org/\nsites:\n" + SITE_A,
        2,
        "link",
        "credentials in a URL would be published on the site",
        id="credentials-in-planet-link",
    ),
    pytest.param(
        HEAD + "user_agent: https://u:p@planet.example.org/\nsites:\n" + SITE_A,
        3,
        "user_agent",
        "credentials in a URL would be sent to every feed's server",
        id="credentials-in-user-agent",
    ),
    pytest.param(
        "title: T\nlink: mailto:me@example.org\nsites:\n" + SITE_A,
        2,
        "link",
        "not an http(s) URL",
        id="mailto-planet-link",
    ),
    pytest.param(
        HEAD + "user_agent: me@example.org\nsites:\n" + SITE_A,
        3,
        "user_agent",
        "not an http(s) URL",
        id="user-agent-not-url",
    ),
    pytest.param(
        HEAD + "sites:\n" + SITE_A + "  - name: A\n    feed: https://b.example.org/feed\n",
        6,
        "sites[1].name",
        "duplicate site name 'A'",
        id="duplicate-name",
    ),
    pytest.param(
        HEAD + "stale_after: 4 days\nsites:\n" + SITE_A, 3, "stale_after", "not a duration", id="duration-words"
    ),
    pytest.param(HEAD + "timeout: .nan\nsites:\n" + SITE_A, 3, "timeout", "", id="duration-nan"),
    pytest.param(HEAD + "timeout: .inf\nsites:\n" + SITE_A, 3, "timeout", "", id="duration-infinite"),
    pytest.param(HEAD + "timeout: 0\nsites:\n" + SITE_A, 3, "timeout", "at least", id="timeout-zero"),
    pytest.param(HEAD + "stale_after: 30s\nsites:\n" + SITE_A, 3, "stale_after", "at least", id="stale-too-short"),
    pytest.param(HEAD + "workers: 0\nsites:\n" + SITE_A, 3, "workers", "whole number", id="no-workers"),
    pytest.param(
        HEAD + "items_per_feed: five\nsites:\n" + SITE_A, 3, "items_per_feed", "whole number", id="items-per-feed-word"
    ),
    pytest.param(HEAD + "retries: true\nsites:\n" + SITE_A, 3, "retries", "whole number", id="retries-boolean"),
    pytest.param(HEAD + "output: ''\nsites:\n" + SITE_A, 3, "output", "folder path", id="empty-output"),
    pytest.param(
        "title: T\ntitle: U\nlink: https://planet.example.org/\nsites:\n" + SITE_A,
        2,
        "title",
        "appears twice",
        id="duplicate-key",
    ),
    pytest.param(
        HEAD + "sites:\n" + SITE_A + "    feed: https://b.example.org/feed\n",
        6,
        "sites[0].feed",
        "appears twice (first on line 5)",
        id="duplicate-key-in-site",
    ),
    pytest.param(
        HEAD + "sites:\n  - &a {name: A, feed: https://a.example.org/feed}\n  - <<: *a\n    name: B\n    name: C\n",
        7,
        "sites[1].name",
        "appears twice (first on line 6)",
        id="duplicate-key-beside-a-merge",
    ),
    pytest.param(
        "title: yes\nlink: https://planet.example.org/\nsites:\n" + SITE_A, 1, "title", "text", id="boolean-title"
    ),
    pytest.param(HEAD + "sites:\n  - just a string\n", 3, "sites[0]", "mapping", id="site-not-mapping"),
    pytest.param("- a list\n", 1, "(top level)", "mapping", id="top-level-list"),
]


@pytest.mark.parametrize(("text", "line", "field", "problem"), BAD_CONFIGS)
def test_bad_config_names_file_line_and_field(tmp_path: Path, text: str, line: int, field: str, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: {field}: "), message
    assert problem in message
    assert "\n" not in message and "\r" not in message
    assert "pa55word" not in message  # the password of credentials-in-feed


#: setting -> (the largest value accepted, a value just above it); the settings page of the docs, made
#: from the same readers, states the same bounds.
MAXIMUMS = {
    "workers": (64, 65),
    "timeout": ("5m", 300.5),
    "retries": (5, 6),
    "items_per_feed": (100, 101),
    "feed_entries": (100_000, 100_001),
    "summary_chars": (100_000, 99999999999999999999999),
    "stale_after": ("365d", "366d"),
    "max_bytes": (100 * 1024 * 1024, 100 * 1024 * 1024 + 1),
    "default_interval": ("7d", "8d"),
    "min_interval": ("7d", 604800.5),
    "max_interval": ("7d", "2w"),
    "per_host_concurrency": (16, 17),
    "host_gap": ("1m", 60.5),
    "host_breaker": (1000, 1001),
}
DURATIONS = ["timeout", "stale_after", "default_interval", "min_interval", "max_interval", "host_gap"]


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        pytest.param(
            "max_bytes: 104857601", "max_bytes: must be a whole number from 1024 to 104857600", id="max-bytes"
        ),
        pytest.param("feed_entries: 0", "feed_entries: must be a whole number from 1 to 100000", id="feed-entries"),
        pytest.param(
            "min_interval: 100000.5",
            "min_interval: min_interval (100000.5 s) must not exceed default_interval (3600 s)",
            id="interval-order",
        ),
    ],
)
def test_bounds_in_messages_keep_every_digit(tmp_path: Path, setting: str, problem: str) -> None:
    path = write(tmp_path, HEAD + setting + "\nsites:\n" + SITE_A)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}:3: {problem}"


def test_every_setting_accepts_its_maximum(tmp_path: Path) -> None:
    settings = "".join(f"{key}: {largest}\n" for key, (largest, _above) in MAXIMUMS.items())
    config = load_config(write(tmp_path, HEAD + settings + "sites:\n" + SITE_A))
    assert (config.workers, config.timeout, config.retries) == (64, 300.0, 5)
    assert (config.items_per_feed, config.feed_entries, config.summary_chars) == (100, 100_000, 100_000)
    assert (config.stale_after, config.max_bytes) == (365 * 86400.0, 100 * 1024 * 1024)
    assert config.default_interval == config.min_interval == config.max_interval == 7 * 86400.0
    assert (config.per_host_concurrency, config.host_gap, config.host_breaker) == (16, 60.0, 1000)


@pytest.mark.parametrize(("key", "value"), [pytest.param(key, above, id=key) for key, (_, above) in MAXIMUMS.items()])
def test_every_setting_has_a_maximum(tmp_path: Path, key: str, value: object) -> None:
    path = write(tmp_path, HEAD + f"{key}: {value}\nsites:\n" + SITE_A)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:3: {key}: must be "), message
    assert "at most" in message or " to " in message


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "'nan'", "'inf'"])
@pytest.mark.parametrize("key", DURATIONS)
def test_durations_refuse_nan_and_infinity(tmp_path: Path, key: str, value: str) -> None:
    path = write(tmp_path, HEAD + f"{key}: {value}\nsites:\n" + SITE_A)
    with pytest.raises(ConfigError, match=f"^{re.escape(str(path))}:3: {key}: "):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        pytest.param("title: [\n", ":2: invalid YAML", id="unclosed-list"),
        pytest.param(HEAD + "sites:\n\t- name: A\n", ":4: invalid YAML", id="tab-indent"),
    ],
)
def test_invalid_yaml_names_file_and_line(tmp_path: Path, text: str, where: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=r"^" + str(path).replace("\\", "\\\\") + where):
        load_config(path)


@pytest.mark.parametrize(
    ("data", "line"),
    [
        pytest.param(
            (HEAD + "sites:\n  - name: Café\n    feed: https://a.example.org/f\n").encode("latin-1"), 4, id="latin-1"
        ),
        pytest.param((HEAD + "sites:\n" + SITE_A).encode("utf-16"), 1, id="utf-16"),
        pytest.param((HEAD + "sites:\r\n" + SITE_A + "  - name: \u2013\n").encode("cp1252"), 6, id="cp1252-crlf"),
    ],
)
def test_text_that_is_not_utf8_names_its_line(tmp_path: Path, data: bytes, line: int) -> None:
    path = tmp_path / "sites.yaml"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}:{line}: not UTF-8 text: ")
    assert str(caught.value).endswith("save the file as UTF-8")


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")


@pytest.mark.parametrize("command", ["build", "status"])
@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("unknown: 1\n", id="unknown-setting"),
        pytest.param("timeout: forever\n", id="bad-duration"),
        pytest.param("timeout: 1.0e+300\n", id="huge-timeout"),
        pytest.param("stale_after: .inf\n", id="infinite-stale-after"),
        pytest.param("retries: 1000000\n", id="a-million-retries"),
        pytest.param("workers: 100000\n", id="too-many-workers"),
    ],
)
def test_cli_refuses_bad_config_before_any_network_or_state_change(
    server: HTTPServer, tmp_path: Path, bad: str, command: str
) -> None:
    server.expect_request("/feed.xml").respond_with_data("<rss/>")
    path = write(tmp_path, HEAD + bad + f"sites:\n  - name: A\n    feed: {server.url_for('/feed.xml')}\n")
    result = CliRunner().invoke(main, [command, "--config", str(path)], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"syndicator: error: {path}:3: ")
    assert server.log == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sites.yaml"]


def test_urls_may_be_international_or_percent_encoded_and_are_trimmed(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            HEAD
            + textwrap.dedent("""\
        sites:
          - name: A
            feed: https://例え.jp/フィード.xml
          - name: B
            feed: "  https://b.example.org/my%20feed.xml?a=1&b=2#top  "
            link: https://b.example.org/~me/
    """),
        )
    )
    assert [(site.feed, site.link) for site in config.sites] == [
        ("https://例え.jp/フィード.xml", None),
        ("https://b.example.org/my%20feed.xml?a=1&b=2#top", "https://b.example.org/~me/"),
    ]


def test_own_keys_override_yaml_merge_keys(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            HEAD
            + textwrap.dedent("""\
        sites:
          - &base {name: A, feed: https://a.example.org/feed, link: https://a.example.org/}
          - <<: *base
            name: B
          - <<: [{name: C, feed: https://c.example.org/feed}, *base]
    """),
        )
    )
    assert [(site.name, site.feed, site.link) for site in config.sites] == [
        ("A", "https://a.example.org/feed", "https://a.example.org/"),
        ("B", "https://a.example.org/feed", "https://a.example.org/"),
        ("C", "https://c.example.org/feed", "https://a.example.org/"),
    ]


@pytest.mark.parametrize("name", ['"bell\\u0007ring"', '"nul\\u0000"', "x" * 201])
def test_a_site_name_has_no_control_characters_and_a_length_cap(tmp_path: Path, name: str) -> None:
    path = tmp_path / "sites.yaml"
    path.write_text(
        f"title: T\nlink: https://planet.example.org/\nsites:\n  - name: {name}\n    feed: https://a.example/feed\n"
    )
    with pytest.raises(ConfigError, match=r"sites.yaml:4: sites\[0\]\.name: must be at most 200 characters"):
        load_config(path)


@pytest.mark.parametrize(("output", "cache"), [("same", "same"), ("out", "out/cache"), (".", "cache")])
def test_the_cache_may_not_live_in_the_output_folder(tmp_path: Path, output: str, cache: str) -> None:
    path = tmp_path / "sites.yaml"
    path.write_text("title: T\nlink: https://planet.example.org/\nsites:\n  - name: A\n    feed: http://127.0.0.1:9/\n")
    result = CliRunner().invoke(
        main, ["build", "--config", str(path), "--output", str(tmp_path / output), "--cache", str(tmp_path / cache)]
    )
    assert result.exit_code == 2
    assert "must not be the output folder" in result.stderr
    assert not (tmp_path / cache / "state.sqlite").exists()  # refused before anything was fetched or stored


def test_white_space_in_a_site_name_is_one_space(tmp_path: Path) -> None:
    path = tmp_path / "sites.yaml"
    path.write_text(
        'title: T\nlink: https://planet.example.org/\nsites:\n  - name: "Tab\\there\\n  and  there"\n'
        "    feed: https://a.example/feed\n"
    )
    assert load_config(path).sites[0].name == "Tab here and there"


def _bomb(levels: int, width: int = 9) -> str:
    """A "billion laughs" sites.yaml: ``extra`` holds ``levels`` lists of ``width`` aliases of the one before."""
    lines = [f"      l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"      l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * width)}]" for n in range(1, levels)]
    return HEAD + "sites:\n" + SITE_A + "    extra:\n" + "\n".join(lines) + "\n"


def _merge_bomb(levels: int) -> str:
    """The same with YAML merge keys: each mapping merges nine aliases of the one before."""
    lines = ["      m0: &m0 {k1: 1, k2: 2, k3: 3, k4: 4}"]
    lines += [f"      m{n}: &m{n} {{<<: [{', '.join([f'*m{n - 1}'] * 9)}]}}" for n in range(1, levels + 1)]
    return HEAD + "sites:\n" + SITE_A + "    extra:\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "line", "field", "problem"),
    [
        pytest.param(_bomb(9), 12, "alias", "would add more than 100,000 values", id="billion-laughs"),
        pytest.param(_merge_bomb(8), 12, "alias", "would add more than 100,000 values", id="merge-key-bomb"),
        pytest.param(
            HEAD + "sites:\n" + SITE_A + "    extra: &x\n      self: *x\n",
            7,
            "alias",
            "inside the value it names",
            id="recursive-alias",
        ),
        pytest.param(
            HEAD + "sites:\n" + SITE_A + "    extra:\n      deep: " + "[" * 70 + "]" * 70 + "\n",
            7,
            "(nesting)",
            "more than 64 levels deep",
            id="nesting",
        ),
        pytest.param(
            HEAD + "sites:\n" + SITE_A + "    extra:\n      a: &a " + "[" * 40 + "]" * 40 + "\n"
            "      b: " + "[" * 30 + "*a" + "]" * 30 + "\n",
            8,
            "alias",
            "more than 64 levels deep",
            id="nesting-through-an-alias",
        ),
        pytest.param(
            HEAD + "sites:\n" + SITE_A + "    extra:\n      links: {home: /, home: /x}\n",
            7,
            "sites[0].extra.links.home",
            "appears twice (first on line 7)",
            id="duplicate-key-in-extra",
        ),
        pytest.param(
            HEAD + "sites:\n" + SITE_A + "    extra:\n      tags: [{a: 1}, {b: 1,\n        b: 2}]\n",
            8,
            "sites[0].extra.tags[1].b",
            "appears twice (first on line 7)",
            id="duplicate-key-in-extra-list",
        ),
        pytest.param(
            HEAD + 'sites:\n  - name: "Alice \\u202Eevil"\n    feed: https://a.example.org/feed\n',
            4,
            "sites[0].name",
            "'Alice \\u202eevil' holds U+202E",
            id="right-to-left-override-in-name",
        ),
        pytest.param(
            HEAD + 'sites:\n  - name: "Al\\u200Bice"\n    feed: https://a.example.org/feed\n',
            4,
            "sites[0].name",
            "holds U+200B, an invisible",
            id="zero-width-space-in-name",
        ),
        pytest.param(
            HEAD + 'sites:\n  - name: "\\u2067Bob\\u2069"\n    feed: https://a.example.org/feed\n',
            4,
            "sites[0].name",
            "holds U+2067",
            id="isolate-in-name",
        ),
        pytest.param(
            HEAD + 'sites:\n  - name: "A\\u061C"\n    feed: https://a.example.org/feed\n',
            4,
            "sites[0].name",
            "holds U+061C",
            id="arabic-letter-mark-in-name",
        ),
        pytest.param(
            HEAD + 'sites:\n  - name: "A\\u200Fb"\n    feed: https://a.example.org/feed\n',
            4,
            "sites[0].name",
            "holds U+200F",
            id="right-to-left-mark-in-name",
        ),
        pytest.param(HEAD + "{a: 1}: 2\nsites:\n" + SITE_A, 3, "a key", "must be text", id="mapping-as-key"),
        pytest.param(HEAD + "sites:\n  - [x]: 1\n", 4, "a key", "must be text", id="list-as-key"),
    ],
)
def test_unsafe_yaml_and_names_are_one_line_naming_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: {field}: "), message
    assert problem in message, message
    assert "\n" not in message


def test_aliases_within_the_bound_are_read_as_their_values(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            HEAD + "sites:\n" + SITE_A + "    extra: &common\n      team: [x, y]\n"
            "  - name: B\n    feed: https://b.example.org/feed\n    extra: *common\n",
        )
    )
    assert [site.extra for site in config.sites] == [{"team": ["x", "y"]}, {"team": ["x", "y"]}]
    assert load_config(write(tmp_path, _bomb(4))).sites[0].extra["l3"][8][8][8][8] == "lol"  # some 7,000 values added


def test_names_keep_the_joiners_scripts_and_emoji_need(tmp_path: Path) -> None:
    name = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \U0001f469\u200d\U0001f4bb"  # Persian ZWNJ, an emoji ZWJ
    config = load_config(write(tmp_path, HEAD + f'sites:\n  - name: "{name}"\n    feed: https://a.example.org/f\n'))
    assert config.sites[0].name == name


def test_reading_sites_yaml_again_keeps_the_state_and_the_fetch_settings(tmp_path: Path) -> None:
    path = write(tmp_path, "timeout: 20\nuser_agent: https://planet.example.org/about\n" + MINIMAL)
    running = replace(load_config(path), state="postgresql://db.example/planet", workers=3)
    path.write_text("timeout: 60\nworkers: 12\nitems_per_feed: 7\n" + MINIMAL.replace("Blog", "Renamed blog"))
    fresh = reread(running, {"workers": 3})
    assert fresh.timeout == 20 and fresh.user_agent == running.user_agent  # the fetcher's, kept
    assert fresh.state == "postgresql://db.example/planet"
    assert fresh.workers == 3  # the command line's
    assert fresh.items_per_feed == 7 and [s.name for s in fresh.sites] == ["Example Renamed blog"]  # the new file's
    path.write_text("sites: [")
    with pytest.raises(ConfigError, match="sites.yaml"):
        reread(running)
