"""Several planets in one sites.yaml (issue 27): each planet's webhooks get exactly the events of the entries
that planet publishes (its sites, after its filters), from one outbox; ``serve`` publishes every planet.

Most tests attach the planets in code to a Config the loader read (:func:`planets`); the serve test reads
``planets:`` from sites.yaml. In both, the django planet's ``filters`` drop a title phrase (a real rule,
as sites.yaml would give it). The feeds and the webhooks are on loopback (pytest-httpserver).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from syndicator.config.load import load_config
from syndicator.configtypes import Config, Delivery, Site
from syndicator.drivers.pipeline import BuildOptions, build, record_events
from syndicator.drivers.worker import WorkerOptions, run_worker
from syndicator.errors import ConfigError
from syndicator.push.routes import Routes, webhooks
from syndicator.rules import Filters, Rule
from syndicator.site import planet as planet_module
from syndicator.state.store import Store

from .conftest import NOW, post, rss, write_config
from .postgres import pg_database, postgres_url  # noqa: F401 - fixtures
from .test_deliveries import SECRETS, Hook, check_signed
from .test_serve import Clock, feeds, hub, in_process, live_subscription, spawn  # noqa: F401 - fixtures
from .websub_hub import FeedServer, ServeProcess, WebSubHub

#: The feeds: one shared by every planet, one of each planet's own.
FEEDS = ("shared", "python", "django", "universe")


def serve_feed(server: HTTPServer, name: str, items: list[dict[str, str]]) -> None:
    """Serve ``items`` (RSS) at /<name>.xml, replacing what was served there."""
    for handler in [h for h in server.handlers if h.matcher.uri == f"/{name}.xml"]:
        server.handlers.remove(handler)
    document = rss(*items, link=f"https://{name}.example.org/")
    server.expect_request(f"/{name}.xml").respond_with_data(document, content_type="application/rss+xml")


def item(name: str, n: int, title: str | None = None) -> dict[str, str]:
    """Post ``n`` of feed ``name``, on its own host (ids differ between feeds), titled ``title``."""
    return {**post(n, host=f"{name}.example.org"), "title": title or f"{name} post {n}"}


def planets(tmp_path: Path, url: Callable[[str], str], hooks: dict[str, list[Hook]], **settings: Any) -> Config:
    """Three planets sharing one state: the file's own ("universe": every feed, published in ``public``) and
    ``python`` and ``django`` (the shared feed and their own, published in folders of their names), each POSTing
    to ``hooks[its name]`` (secrets from SECRETS). ``url(name)``: the URL of feed ``name``; ``settings``: more
    of sites.yaml's settings, every planet's."""

    def site(name: str) -> dict[str, str]:
        return {"name": name.capitalize(), "feed": url(name)}

    def deliveries(name: str) -> list[dict[str, str]]:
        return [{"url": hook.url, "secret": SECRETS[hook.name]} for hook in hooks.get(name, [])]

    own = {"deliveries": deliveries("universe")} if hooks.get("universe") else {}
    universe = load_config(write_config(tmp_path, [site(name) for name in FEEDS], timeout=1, **own, **settings))
    by_name = {site.name: site for site in universe.sites}

    def planet(name: str) -> Config:
        own: tuple[Site, ...] = (by_name["Shared"], by_name[name.capitalize()])
        sent = tuple(Delivery(hook.url, SECRETS[hook.name]) for hook in hooks.get(name, []))
        rules = OFF_TOPIC_RULE if name == "django" else Filters()
        return replace(
            universe, name=name, sites=own, deliveries=sent, output=tmp_path / name, planets=(), filters=rules
        )

    return replace(universe, planets=(planet("python"), planet("django")))


#: The django planet's filters: drop a post whose text says "off-topic" (the words "off" then "topic").
OFF_TOPIC_RULE = Filters(drop=(Rule(keyword=("off-topic",), where="filters.drop[0]"),))


def baseline_then_news(server: HTTPServer, config: Config, now: datetime = NOW) -> None:
    """Build once three days before ``now`` (each feed's first snapshot: a baseline, no event), then serve the
    news: a new post on each feed, and on django's an off-topic one too."""
    for name in FEEDS:
        serve_feed(server, name, [item(name, 0)])
    build(config, BuildOptions(now=now - timedelta(days=3)))
    for name in FEEDS:
        serve_feed(server, name, [item(name, 1), item(name, 0)])
    serve_feed(server, "django", [item("django", 2, "django off-topic post"), item("django", 1), item("django", 0)])


def ids(hook: Hook) -> list[str]:
    """The entry ids POSTed to ``hook``, sorted."""
    return sorted(body["id"] for body in hook.bodies())


def outbox(tmp_path: Path) -> list[str]:
    with sqlite3.connect(tmp_path / "cache" / "state.sqlite") as db:
        return sorted(entry_id for (entry_id,) in db.execute("SELECT entry_id FROM outbox"))


def news(*names: str) -> list[str]:
    return sorted(f"https://{name}.example.org/posts/1" for name in names)


OFF_TOPIC = "https://django.example.org/posts/2"


def feed_of(server: HTTPServer, entry_id: str) -> str:
    """The feed URL of an entry id of :func:`item` (its host names its feed)."""
    return server.url_for(f"/{entry_id.split('//')[1].split('.')[0]}.xml")


def received(hook: Hook, entry_id: str) -> tuple[bytes, dict[str, str]]:
    """The one POST ``hook`` received of ``entry_id``: (body, headers)."""
    found = [each for each, body in zip(hook.received, hook.bodies(), strict=True) if body["id"] == entry_id]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The webhooks' secrets of this module's hooks, in test_deliveries' table for this test only."""
    for name in ("u", "p", "d", "both"):
        monkeypatch.setitem(SECRETS, name, f"secret-of-{name}")


def test_each_planets_webhooks_get_exactly_the_events_of_what_it_publishes(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secrets: None
) -> None:
    universe, python, django, both = (Hook(server, name) for name in ("u", "p", "d", "both"))
    config = planets(
        tmp_path,
        lambda name: server.url_for(f"/{name}.xml"),
        {"universe": [universe], "python": [python, both], "django": [django, both]},
    )
    baseline_then_news(server, config)
    assert [hook.received for hook in (universe, python, django, both)] == [[], [], [], []]

    build(config, BuildOptions(now=NOW, force=True))
    assert ids(universe) == sorted([*news(*FEEDS), OFF_TOPIC])  # every feed, no filter
    assert ids(python) == news("shared", "python")
    assert ids(django) == news("shared", "django")  # the off-topic post is not django's
    assert ids(both) == news("shared", "python", "django")  # named by two planets: each event once
    assert outbox(tmp_path) == sorted([*news(*FEEDS), OFF_TOPIC])  # one event per entry, whoever is sent it
    for hook in (universe, python, django, both):
        for index, body in enumerate(hook.bodies()):
            check_signed(hook, index, feed_of(server, body["id"]))  # signed with the hook's secret; the key
    shared = [received(hook, news("shared")[0]) for hook in (universe, python, django, both)]
    assert len({body for body, _ in shared}) == 1  # one body, and one Idempotency-Key, everywhere
    assert len({headers["Idempotency-Key"] for _, headers in shared}) == 1
    assert len({headers["X-Syndicator-Signature"] for _, headers in shared}) == 4  # each its own secret

    build(config, BuildOptions(now=NOW + timedelta(minutes=1), force=True))  # nothing new: nothing sent again
    assert [len(hook.received) for hook in (universe, python, django, both)] == [5, 2, 2, 3]


def test_an_entry_no_planet_with_webhooks_publishes_writes_no_event(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secrets: None
) -> None:
    django = Hook(server, "d")
    config = planets(
        tmp_path, lambda name: server.url_for(f"/{name}.xml"), {"django": [django]}
    )  # the universe and python planets have none
    baseline_then_news(server, config)
    build(config, BuildOptions(now=NOW, force=True))
    assert ids(django) == news("shared", "django")
    assert outbox(tmp_path) == news("shared", "django")  # the others' and the off-topic post: no outbox row


def test_one_webhook_with_two_secrets_is_refused_before_anything_is_stored(
    server: HTTPServer, tmp_path: Path, secrets: None
) -> None:
    python, django = Hook(server, "p"), Hook(server, "d")
    config = planets(tmp_path, lambda name: server.url_for(f"/{name}.xml"), {"python": [python], "django": [django]})
    assert [d.url for d in webhooks(config)] == [python.url, django.url]
    django_planet = replace(config.planets[1], deliveries=(Delivery(python.url, "another secret"),))
    clashing = replace(config, planets=(config.planets[0], django_planet))
    with pytest.raises(ConfigError) as error:
        Routes(clashing)
    assert python.url in str(error.value) and "planet 'python'" in str(error.value)
    assert "planet 'django'" in str(error.value) and "another secret" not in str(error.value)
    with Store.open(tmp_path / "cache") as store, pytest.raises(ConfigError):
        record_events(store, clashing)
    assert not (tmp_path / "public").exists()


def test_workers_on_postgresql_send_each_planet_its_own_events_once(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secrets: None, pg_database: str
) -> None:
    universe, python, django = Hook(server, "u"), Hook(server, "p"), Hook(server, "d")
    hooks = {"universe": [universe], "python": [python], "django": [django]}
    config = planets(tmp_path, lambda name: server.url_for(f"/{name}.xml"), hooks, state=pg_database)
    with Store.connect(pg_database) as store:
        now = store._db.now()  # noqa: SLF001 - a worker's clock is the database server's
    baseline_then_news(server, config, now)
    stopping = threading.Event()
    workers = [  # two workers sharing the state: each event is still sent once to each webhook
        threading.Thread(target=run_worker, args=(config, WorkerOptions(name=name), stopping)) for name in "ab"
    ]
    for worker in workers:
        worker.start()
    try:
        for _ in range(300):  # bounded: at most about 30 s
            if (len(universe.received), len(python.received), len(django.received)) == (5, 2, 2):
                break
            threading.Event().wait(0.1)
    finally:
        stopping.set()
        for worker in workers:
            worker.join(timeout=60)
    assert ids(universe) == sorted([*news(*FEEDS), OFF_TOPIC])
    assert ids(python) == news("shared", "python")
    assert ids(django) == news("shared", "django")
    for hook in (universe, python, django):
        for index, body in enumerate(hook.bodies()):
            check_signed(hook, index, feed_of(server, body["id"]))


# --- serve -------------------------------------------------------------------------------------------------------


def published(folder: Path) -> str:
    """A planet's feed.xml as text ("" while there is none)."""
    try:
        return (folder / "feed.xml").read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def shows(folder: Path, names: tuple[str, ...]) -> bool:
    """True when the planet published in ``folder`` shows the first post of each feed of ``names``."""
    return all(f"{name} post 1" in published(folder) for name in names)


def test_serve_publishes_every_planet_and_sends_each_its_own_events(
    tmp_path: Path,
    server: HTTPServer,
    hub: WebSubHub,
    feeds: FeedServer,
    monkeypatch: pytest.MonkeyPatch,
    secrets: None,
) -> None:
    selected: list[str] = []  # the planets whose entries serve selected, by name ("" for the universe)

    def select_site(config: Config, *args: Any) -> Any:
        selected.append(config.name)
        return choose(config, *args)

    choose = planet_module.select_site
    monkeypatch.setattr(planet_module, "select_site", select_site)
    served = {name: feeds.feed(name, hub=hub.url if name == "django" else None, posts=1) for name in FEEDS}
    universe, python, django = Hook(server, "u"), Hook(server, "p"), Hook(server, "d")
    config = planets(
        tmp_path,
        lambda name: served[name].url,
        {"universe": [universe], "python": [python], "django": [django]},
        host_gap=0,  # the feeds share one host: fetched at once
    )
    folders = {"universe": tmp_path / "public", "python": tmp_path / "python", "django": tmp_path / "django"}
    views = {"universe": FEEDS, "python": ("shared", "python"), "django": ("shared", "django")}
    with in_process(tmp_path / "sites.yaml", Clock(), config=config) as serve:
        serve.wait_for(lambda: all(shows(folders[p], names) for p, names in views.items()), "the three planets")
        for planet, names in views.items():  # the first poll: a baseline, published, no event
            assert not any(f"{n} post 1" in published(folders[planet]) for n in FEEDS if n not in names)
        live_subscription(serve, tmp_path, served["django"].url)
        selected.clear()

        served["django"].add("django news")
        served["django"].add("django off-topic news")
        assert hub.publish(served["django"].url).status_code == 202
        serve.wait_for(lambda: len(universe.received) == 2 and len(django.received) == 1, "the deliveries")
        serve.wait_for(lambda: "django news" in published(folders["django"]), "django's view")
        serve.wait_for(lambda: "django off-topic news" in published(folders["universe"]), "the universe's view")
        assert "python" not in selected and {"", "django"} <= set(selected)  # python's view did not change
    assert [body["title"] for body in django.bodies()] == ["django news"]
    assert sorted(body["title"] for body in universe.bodies()) == ["django news", "django off-topic news"]
    assert python.received == []
    check_signed(django, 0, served["django"].url)
    assert received(universe, django.bodies()[0]["id"])[0] == django.received[0][0]  # one body for both


#: The loader of ``planets:`` in sites.yaml (issue 27's planets part), on this branch or not yet.
def test_serve_from_a_sites_yaml_of_three_planets_publishes_three_outputs_and_sends_each_its_events(
    tmp_path: Path,
    server: HTTPServer,
    hub: WebSubHub,
    feeds: FeedServer,
    spawn: Callable[..., ServeProcess],  # noqa: F811 - the fixture
    secrets: None,
) -> None:
    served = {name: feeds.feed(name, hub=hub.url, posts=1) for name in FEEDS}
    universe, python, django = Hook(server, "u"), Hook(server, "p"), Hook(server, "d")

    def planet(name: str, hook: Hook) -> dict[str, Any]:
        return {
            "name": name,
            "title": f"Planet {name}",
            "link": f"https://{name}.planet.example/",
            "output": name,
            "sites": ["Shared", name.capitalize()],
            "deliveries": [{"url": hook.url, "secret": SECRETS[hook.name]}],
        }

    config = write_config(
        tmp_path,
        [{"name": name.capitalize(), "feed": feed.url} for name, feed in served.items()],
        deliveries=[{"url": universe.url, "secret": SECRETS["u"]}],
        host_gap=0,
        planets=[planet("python", python), planet("django", django)],
    )
    folders = {"universe": tmp_path / "public", "python": tmp_path / "python", "django": tmp_path / "django"}
    views = {"universe": FEEDS, "python": ("shared", "python"), "django": ("shared", "django")}
    serve = spawn(config)
    serve.wait_for(lambda: all(shows(folders[p], names) for p, names in views.items()), "the three planets")
    for name in ("shared", "django"):
        live_subscription(serve, tmp_path, served[name].url)
    for name in ("shared", "django"):
        served[name].add(f"{name} news")
        assert hub.publish(served[name].url).status_code == 202
    serve.wait_for(lambda: [len(h.received) for h in (universe, python, django)] == [2, 1, 2], "the deliveries")
    serve.wait_for(lambda: "django news" in published(folders["django"]), "django's view")
    serve.wait_for(lambda: "shared news" in published(folders["python"]), "python's view")
    assert serve.terminate() == 0
    assert "django news" not in published(folders["python"])
    assert sorted(body["title"] for body in universe.bodies()) == ["django news", "shared news"]
    assert [body["title"] for body in python.bodies()] == ["shared news"]
    assert sorted(body["title"] for body in django.bodies()) == ["django news", "shared news"]
    for hook in (universe, python, django):
        for index, body in enumerate(hook.bodies()):
            check_signed(hook, index, served[body["title"].split()[0]].url)
