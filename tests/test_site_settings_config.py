"""A site's own settings in sites.yaml (config/sitesettings.py): read with the planet's readers and
bounds, refused in one line naming the site's field, and resolved per source over the sites naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from syndicator import __version__
from syndicator.config.duplicates import duplicate_feeds
from syndicator.config.load import load_config
from syndicator.config.readers import TAKES
from syndicator.config.reference import site_settings_table
from syndicator.config.sitesettings import SITE_SETTINGS
from syndicator.drivers.worker import WorkerOptions, lease_seconds
from syndicator.errors import ConfigError

from .conftest import write_config

FEED = "https://a.example.org/feed"


def site(**settings: Any) -> dict[str, Any]:
    return {"name": "Alpha", "feed": FEED, **settings}


def refusal(tmp_path: Path, sites: list[dict[str, Any]], **planet: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(tmp_path, sites, **planet))
    return str(caught.value)


def test_a_site_reads_each_setting_as_the_planet_does(tmp_path: Path) -> None:
    headers = {"Accept-Language": "en", "X-Planet": "python planet"}
    config = load_config(
        write_config(
            tmp_path,
            [
                site(
                    items_per_feed=2,
                    min_interval="1m",
                    max_interval="10m",
                    timeout="3s",
                    user_agent="https://me.example.org/",
                    headers=headers,
                    summary_only=True,
                )
            ],
        )
    )
    (alpha,) = config.sites
    assert (alpha.items_per_feed, alpha.min_interval, alpha.max_interval, alpha.timeout) == (2, 60.0, 600.0, 3.0)
    assert alpha.user_agent == f"syndicator/{__version__} (+https://me.example.org/)"
    assert alpha.headers == (("Accept-Language", "en"), ("X-Planet", "python planet"))
    assert alpha.summary_only is True
    assert (config.items_for(FEED), config.intervals_for(FEED), config.timeout_for(FEED)) == (2, (60.0, 600.0), 3.0)
    assert config.request_for(FEED) == (alpha.user_agent, alpha.headers)


def test_a_site_without_its_own_settings_gets_the_planets(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, [site()], items_per_feed=7, timeout=20))
    assert config.sites[0].own_settings == ()
    assert (config.items_for(FEED), config.intervals_for(FEED)) == (7, (900.0, 86400.0))
    assert config.timeout_for(FEED) is None  # the fetcher's own (the planet's) stands
    assert config.request_for(FEED) == (None, ())


def test_sites_of_one_feed_resolve_to_the_fastest_need_and_the_first_sites_request(tmp_path: Path) -> None:
    sites = [
        site(max_interval="2h", timeout=5, user_agent="https://a.example.org/"),
        {"name": "Beta", "feed": FEED, "min_interval": "5m", "timeout": 40, "items_per_feed": 9},
        {"name": "Gamma", "feed": FEED},
    ]
    config = load_config(write_config(tmp_path, sites, timeout=10))
    assert config.intervals_for(FEED) == (300.0, 7200.0)
    assert config.timeout_for(FEED) == 40.0
    assert config.longest_timeout == 40.0
    assert config.request_for(FEED)[0] == f"syndicator/{__version__} (+https://a.example.org/)"
    assert config.items_for(FEED) == 5  # the first site's (the one credited): the planet's default


def test_sites_of_one_feed_that_ask_for_other_request_headers_get_one_warning(tmp_path: Path) -> None:
    sites = [site(headers={"Accept-Language": "en"}), {"name": "Beta", "feed": FEED, "headers": {"X-A": "b"}}]
    lines = [line for line in duplicate_feeds(load_config(write_config(tmp_path, sites))) if "request" in line]
    assert len(lines) == 1
    assert "sites[1] 'Beta'" in lines[0] and "sites[0] 'Alpha'" in lines[0]
    same = [site(headers={"X-A": "b"}), {"name": "Beta", "feed": FEED, "headers": {"X-A": "b"}}]
    assert not [line for line in duplicate_feeds(load_config(write_config(tmp_path, same))) if "request" in line]


@pytest.mark.parametrize(
    ("settings", "field", "words"),
    [
        ({"timeout": 0}, "sites[0].timeout", "must be at least 1 second"),
        ({"timeout": "10m"}, "sites[0].timeout", "must be at most 5 minutes"),
        ({"items_per_feed": 0}, "sites[0].items_per_feed", "from 1 to 100"),
        ({"min_interval": "10s"}, "sites[0].min_interval", "at least 1 minute"),
        ({"max_interval": "8d"}, "sites[0].max_interval", "at most 7 days"),
        ({"max_interval": "5m"}, "sites[0].max_interval", "must not exceed max_interval"),
        ({"min_interval": "2d"}, "sites[0].min_interval", "give the site both"),
        ({"user_agent": "ftp://x.example.org/"}, "sites[0].user_agent", "http"),
        ({"summary_only": "yes please"}, "sites[0].summary_only", "true or false"),
        ({"headers": ["Accept: x"]}, "sites[0].headers", "mapping"),
        ({"headers": {"Cookie": "a=b"}}, "sites[0].headers.Cookie", "credentials:"),
        ({"headers": {"authorization": "Bearer x"}}, "sites[0].headers.authorization", "credentials:"),
        ({"headers": {"Proxy-Authorization": "x"}}, "sites[0].headers.Proxy-Authorization", "credentials:"),
        ({"headers": {"Host": "b.example.org"}}, "sites[0].headers.Host", "set by syndicator"),
        ({"headers": {"If-None-Match": '"x"'}}, "sites[0].headers.If-None-Match", "set by syndicator"),
        ({"headers": {"User-Agent": "me"}}, "sites[0].headers.User-Agent", "user_agent"),
        ({"headers": {"X Space": "a"}}, "sites[0].headers.X Space", "not a header name"),
        ({"headers": {"X-A": "a\r\nX-B: b"}}, "sites[0].headers.X-A", "control character"),
        ({"headers": {"X-A": "a\x00"}}, "sites[0].headers.X-A", "control character"),
        ({"headers": {"X-A": "é"}}, "sites[0].headers.X-A", "ASCII"),
        ({"headers": {"X-A": ""}}, "sites[0].headers.X-A", "1 to 1000"),
        ({"headers": {"X-A": "a", "x-a": "b"}}, "sites[0].headers.x-a", "given twice"),
        ({"headers": {"X-A": ["a"]}}, "sites[0].headers.X-A", "must be text"),
    ],
)
def test_a_bad_site_setting_is_one_line_naming_the_file_line_and_field(
    tmp_path: Path, settings: dict[str, Any], field: str, words: str
) -> None:
    message = refusal(tmp_path, [{"name": "Zero", "feed": "https://z.example.org/feed"}, site(**settings)][1:])
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'sites.yaml'}:")
    assert f": {field}: " in message
    assert words in message


def test_a_site_setting_is_named_by_its_sites_index_and_line(tmp_path: Path) -> None:
    sites = [{"name": f"S{n}", "feed": f"https://s{n}.example.org/feed"} for n in range(3)]
    sites.append(site(timeout=-1))
    message = refusal(tmp_path, sites)
    text = (tmp_path / "sites.yaml").read_text().splitlines()
    line = next(n for n, row in enumerate(text, 1) if "timeout: -1" in row)
    assert f"sites.yaml:{line}: sites[3].timeout: " in message


def test_an_unknown_site_field_names_the_site_settings(tmp_path: Path) -> None:
    message = refusal(tmp_path, [site(timout=3)])
    assert "sites[0].timout: unknown field" in message
    assert "timeout" in message and "summary_only" in message


def test_the_docs_table_has_a_row_per_site_setting_saying_what_it_takes() -> None:
    rows = [line for line in site_settings_table().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(SITE_SETTINGS)
    for row, setting in zip(rows, SITE_SETTINGS.values(), strict=True):
        assert TAKES[setting.read] in row.replace("\\|", "|") and setting.means.split("`")[0] in row
    assert "a duration from 1 second to 5 minutes" in dict(zip(SITE_SETTINGS, rows, strict=True))["timeout"]


def test_a_workers_lease_outlasts_the_longest_fetch_a_site_asks_for(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, [site(timeout="2m")], timeout=10, retries=1))
    assert lease_seconds(config, WorkerOptions()) == 2 * 2 * 120 * 2
