"""Many planets from one sites.yaml and one poller (docs/planets.md), through the real CLI and a
loopback server: each planet publishes its own output with its own title and sites, a feed several
planets list is fetched once per build, a planet can be a view of another, the poller's settings are
refused inside a planet, and status names the planets that use each source."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from click.testing import Result as CliResult
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.config.load import load_config
from syndicator.config.union import planet_figures
from syndicator.metrics import Metrics

from .conftest import ATOM, NOW_ISO, build, entry_titles, post, rss


def serve_feeds(server: HTTPServer, *names: str) -> dict[str, str]:
    """Serve ``/NAME.xml`` for each name, one post each (its title ``NAME post``); {name: feed URL}."""
    urls = {}
    for n, name in enumerate(names, start=1):
        item = {**post(n, host=f"{name}.example.org"), "title": f"{name} post"}
        server.expect_request(f"/{name}.xml").respond_with_data(rss(item), content_type="application/rss+xml")
        urls[name] = server.url_for(f"/{name}.xml")
    return urls


def requests_to(server: HTTPServer, name: str) -> int:
    """How many requests the loopback server answered for ``/NAME.xml``."""
    return sum(1 for request, _ in server.log if request.path == f"/{name}.xml")


def three_planets(folder: Path, urls: dict[str, str], extra: str = "") -> Path:
    """A sites.yaml of the file's own planet (alice, bob) and two more: django (alice, its own carol)
    and universe (a view of the file's own planet, with dan)."""
    text = textwrap.dedent(f"""\
        title: Planet Python
        link: https://planetpython.example.org/
        sites:
          - {{name: Alice, feed: "{urls["alice"]}"}}
          - {{name: Bob, feed: "{urls["bob"]}"}}
        planets:
          - name: django
            title: Planet Django
            link: https://planetdjango.example.org/
            output: public-django
            sites: [Alice, {{name: Carol, feed: "{urls["carol"]}"}}]
          - name: universe
            title: Planet Universe
            link: https://universe.example.org/
            output: public-universe
            view_of: ""
            sites:
              - {{name: Dan, feed: "{urls["dan"]}"}}
        """)
    path = folder / "sites.yaml"
    path.write_text(text + extra, encoding="utf-8")
    return path


def feed_title(output: Path) -> str:
    """The title of the planet's feed.xml."""
    return ET.parse(output / "feed.xml").getroot().findtext(f"{ATOM}title") or ""


def test_three_planets_from_one_file_publish_their_own_sites_and_fetch_a_shared_feed_once(
    server: HTTPServer, tmp_path: Path
) -> None:
    urls = serve_feeds(server, "alice", "bob", "carol", "dan")
    config = three_planets(tmp_path, urls)
    result = build(config)
    assert result.exit_code == 0, result.output
    published = {
        "public": ("Planet Python", {"alice post", "bob post"}),
        "public-django": ("Planet Django", {"alice post", "carol post"}),
        "public-universe": ("Planet Universe", {"alice post", "bob post", "dan post"}),
    }
    for folder, (title, posts) in published.items():
        assert feed_title(tmp_path / folder) == title
        assert set(entry_titles(tmp_path / folder / "feed.xml")) == posts
    for name in ("alice", "bob", "carol", "dan"):  # alice is in all three planets: one request
        assert requests_to(server, name) == 1
    report = json.loads((tmp_path / "cache" / "report.json").read_text(encoding="utf-8"))
    assert report["sources"] == 4
    assert report["requests"] == 4
    assert set(report["planets"]) == {"main", "django", "universe"}
    assert all(figures["rendered"] for figures in report["planets"].values())


def test_a_build_with_nothing_changed_leaves_every_planet_unwritten(server: HTTPServer, tmp_path: Path) -> None:
    urls = serve_feeds(server, "alice", "bob", "carol", "dan")
    config = three_planets(tmp_path, urls)
    assert build(config).exit_code == 0
    result = build(config, "--no-fetch")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "cache" / "report.json").read_text(encoding="utf-8"))
    assert [figures["rendered"] for figures in report["planets"].values()] == [False, False, False]
    assert "planets: main 2 unchanged, django 2 unchanged, universe 3 unchanged" in result.stdout


def test_a_planet_without_entries_fails_the_build_after_the_others_are_published(
    server: HTTPServer, tmp_path: Path
) -> None:
    urls = serve_feeds(server, "alice", "bob", "carol", "dan")
    server.expect_request("/empty.xml").respond_with_data(rss(), content_type="application/rss+xml")
    extra = (
        "  - name: quiet\n"
        "    output: public-quiet\n"
        f'    sites: [{{name: Eve, feed: "{server.url_for("/empty.xml")}"}}]\n'
    )
    result = build(three_planets(tmp_path, urls, extra))
    assert result.exit_code == 3
    assert "planet 'quiet': no entries" in result.stderr
    assert (tmp_path / "public-django" / "feed.xml").is_file()
    assert not (tmp_path / "public-quiet").exists()


@pytest.mark.parametrize(
    ("planet", "message"),
    [
        (
            "timeout: 5",
            "planets[0].timeout: is a setting of the poller every planet shares: set it at the top level",
        ),
        ("cache: other", "planets[0].cache: is a setting of the poller"),
        ("output: public", "planets[0].output: 'public' must be apart from the output folder of the top level"),
        ("sites: [Zed]", "planets[0].sites[0]: no site named 'Zed' at the top level"),
        ("view_of: nowhere", "planets[0].view_of: 'nowhere' names no planet before this one"),
        ("colour: red", "planets[0].colour: unknown setting"),
    ],
)
def test_a_bad_planet_is_one_line_naming_the_file_line_and_field(tmp_path: Path, planet: str, message: str) -> None:
    text = textwrap.dedent("""\
        title: Planet Python
        link: https://planetpython.example.org/
        sites:
          - {name: Alice, feed: "https://alice.example.org/feed"}
        planets:
          - name: django
            output: public-django
        """)
    key = planet.split(":")[0]
    lines = [line for line in text.splitlines() if not line.startswith(f"    {key}:")]
    if key != "sites":
        lines.append("    sites: [Alice]")
    path = tmp_path / "sites.yaml"
    path.write_text("\n".join([*lines, f"    {planet}", ""]), encoding="utf-8")
    result = CliRunner().invoke(main, ["build", "--config", str(path), "--now", NOW_ISO])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1
    assert f"{path}:{len(lines) + 1}: {message}" in errors[0]


def test_a_planet_name_is_a_slug_used_once(tmp_path: Path) -> None:
    path = tmp_path / "sites.yaml"
    path.write_text(
        textwrap.dedent("""\
            title: T
            link: https://planet.example.org/
            sites: [{name: Alice, feed: "https://alice.example.org/feed"}]
            planets:
              - {name: django, output: a, sites: [Alice]}
              - {name: django, output: b, sites: [Alice]}
              - {name: Bad Name, output: c, sites: [Alice]}
            """),
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["build", "--config", str(path), "--now", NOW_ISO])
    assert result.exit_code == 2
    assert "sites.yaml:6: planets[1].name: another planet is named 'django'" in result.stderr


def status(config: Path, *args: str) -> CliResult:
    """``syndicator status --config CONFIG ARGS`` through the real CLI."""
    return CliRunner().invoke(main, ["status", "--config", str(config), "--now", NOW_ISO, *args])


def test_status_names_the_planets_of_each_source_and_shows_one_planet(server: HTTPServer, tmp_path: Path) -> None:
    config = three_planets(tmp_path, serve_feeds(server, "alice", "bob", "carol", "dan"))
    assert build(config).exit_code == 0
    rows = {row["name"]: row["planets"] for row in json.loads(status(config, "--json").stdout)}
    assert rows == {
        "Alice": ["main", "django", "universe"],
        "Bob": ["main", "universe"],
        "Carol": ["django"],
        "Dan": ["universe"],
    }
    text = status(config).stdout
    assert "  planets: main, django, universe\n" in text
    django = [row["name"] for row in json.loads(status(config, "--json", "--planet", "django").stdout)]
    assert django == ["Alice", "Carol"]
    unknown = status(config, "--planet", "nowhere")
    assert unknown.exit_code == 2
    assert "no planet named 'nowhere'" in unknown.stderr
    assert "main, django, universe" in unknown.stderr


def test_a_planet_can_be_a_view_of_another_named_planet(tmp_path: Path) -> None:
    urls = {name: f"https://{name}.example.org/feed" for name in ("alice", "bob", "carol", "dan")}
    extra = "  - name: topic\n    output: public-topic\n    view_of: django\n"
    config = three_planets(tmp_path, urls, extra)
    rows = json.loads(status(config, "--json", "--planet", "topic").stdout)
    assert [row["name"] for row in rows] == ["Alice", "Carol"]
    assert rows[0]["planets"] == ["main", "django", "universe", "topic"]


def test_build_site_fetches_a_site_of_any_planet_and_publishes_every_planet(server: HTTPServer, tmp_path: Path) -> None:
    urls = serve_feeds(server, "alice", "bob", "carol", "dan")
    config = three_planets(tmp_path, urls)
    assert build(config).exit_code == 0
    result = build(config, "--site", "Carol")  # Carol is the django planet's own
    assert result.exit_code == 0, result.output
    assert [requests_to(server, name) for name in ("alice", "bob", "carol", "dan")] == [1, 1, 2, 1]
    assert set(entry_titles(tmp_path / "public-django" / "feed.xml")) == {"alice post", "carol post"}


def test_each_planet_tells_its_own_hubs_of_its_own_feeds_once(server: HTTPServer, tmp_path: Path) -> None:
    urls = serve_feeds(server, "alice", "bob", "carol", "dan")
    server.expect_request("/hub-main", method="POST").respond_with_data("", status=202)
    server.expect_request("/hub-django", method="POST").respond_with_data("", status=202)
    config = three_planets(tmp_path, urls)
    text = config.read_text(encoding="utf-8")
    text = text.replace("sites:\n  - {name: Alice", f"hub: {server.url_for('/hub-main')}\nsites:\n  - {{name: Alice", 1)
    text = text.replace(
        "    output: public-django\n", f"    output: public-django\n    hub: {server.url_for('/hub-django')}\n"
    )
    config.write_text(text, encoding="utf-8")
    assert build(config).exit_code == 0
    assert build(config, "--force", now="2026-11-30T12:10:00Z").exit_code == 0  # the same feeds: nothing to tell

    def topics(path: str) -> list[list[str]]:
        posts = [request for request, _ in server.log if request.path == path and request.method == "POST"]
        return [request.form.getlist("hub.topic") for request in posts]

    main, universe = "https://planetpython.example.org/", "https://universe.example.org/"  # universe inherits hub
    assert topics("/hub-main") == [
        [main + "feed.xml", main + "feed.json"],
        [universe + "feed.xml", universe + "feed.json"],
    ]
    django = "https://planetdjango.example.org/"
    assert topics("/hub-django") == [[django + "feed.xml", django + "feed.json"]]


def test_metrics_have_one_series_per_planet_and_the_shared_sources(tmp_path: Path) -> None:
    urls = {name: f"https://{name}.example.org/feed" for name in ("alice", "bob", "carol", "dan")}
    metrics = Metrics()
    metrics.set_planets(*planet_figures(load_config(three_planets(tmp_path, urls))))
    text = metrics.text().decode()
    for planet, sources in (("main", 2), ("django", 2), ("universe", 3)):
        assert f'syndicator_planet_sources{{planet="{planet}"}} {sources:.1f}' in text
    assert "syndicator_shared_sources 2.0" in text  # alice (three planets) and bob (main, universe)
    metrics.set_planets({"main": 2}, 0)  # sites.yaml read again without planets: their series go
    assert 'planet="django"' not in metrics.text().decode()
