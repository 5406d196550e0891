"""The planet as a WebSub publisher: ``hub`` in sites.yaml, the hub links of feed.xml and feed.json, and the
publish pings sent after a build that changed them (announce.py)."""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import re
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator import __version__
from syndicator.config.load import load_config

from .conftest import ATOM, build, in_thread, post, rss, tree, without_first_build_warning, write_config

PLANET = "https://planet.example.org/"
TOPICS = [PLANET + "feed.xml", PLANET + "feed.json"]
USER_AGENT = f"syndicator/{__version__} (+{PLANET})"


def report(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "cache" / "report.json").read_text())  # type: ignore[no-any-return]


def local_planet(folder: Path, **settings: object) -> Path:
    """A planet of one local feed file (two posts) in ``folder``; returns sites.yaml."""
    folder.mkdir(exist_ok=True)
    (folder / "a.xml").write_text(rss(post(1), post(2, day=2)), encoding="utf-8")
    return write_config(folder, [{"name": "Site A", "feed": "a.xml"}], **settings)


def served_planet(server: HTTPServer, folder: Path, **settings: object) -> Path:
    """A planet of one feed (two posts) served at /feed.xml; returns sites.yaml. A build minutes after
    the first has nothing due and renders nothing."""
    server.expect_request("/feed.xml").respond_with_data(rss(post(1), post(2, day=2)))
    return write_config(folder, [{"name": "Blog", "feed": server.url_for("/feed.xml")}], **settings)


def hub_posts(server: HTTPServer, path: str = "/hub") -> list[Request]:
    """The POSTs the server playing the hub received at ``path``, oldest first."""
    return [request for request, _ in server.log if request.path == path and request.method == "POST"]


def hub_warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("syndicator: warning: hub ")]


def check_ping(request: Request, topics: list[str]) -> None:
    """``request`` is one PubSubHubbub 0.4 publish ping naming ``topics`` as hub.url and as hub.topic."""
    assert request.mimetype == "application/x-www-form-urlencoded"
    assert request.form.getlist("hub.mode") == ["publish"]
    assert request.form.getlist("hub.url") == topics
    assert request.form.getlist("hub.topic") == topics
    assert request.headers["User-Agent"] == USER_AGENT


# --- the setting -------------------------------------------------------------------------------------------------


def test_hub_is_one_url_or_a_list(tmp_path: Path) -> None:
    one = load_config(local_planet(tmp_path / "one", hub="https://hub.example.org/"))
    assert one.hubs == ("https://hub.example.org/",)
    many = load_config(local_planet(tmp_path / "many", hub=["https://a.example.org/hub", " http://b.example.org/ "]))
    assert many.hubs == ("https://a.example.org/hub", "http://b.example.org/")
    assert load_config(local_planet(tmp_path / "none")).hubs == ()


@pytest.mark.parametrize(
    ("value", "field", "problem"),
    [
        ("ftp://hub.example.org/", "hub", "'ftp://hub.example.org/' is not an http(s) URL"),
        ("hub.example.org", "hub", "'hub.example.org' is not an http(s) URL"),
        (42, "hub", "42 is not an http(s) URL"),
        ("https://user:secret@hub.example.org/", "hub", "credentials in a URL would be published on the site"),
        ("https://hub.example.org/a b", "hub", "contains a space or a control character"),
        (["https://a.example.org/", "javascript:alert(1)"], "hub[1]", "'javascript:alert(1)' is not an http(s) URL"),
        (["https://a.example.org/", "https://a.example.org/"], "hub[1]", "'https://a.example.org/' is listed twice"),
        ([], "hub", "must be an http(s) URL or a list of 1 to 4 of them"),
        ([f"https://{n}.example.org/" for n in "abcde"], "hub", "must be an http(s) URL or a list of 1 to 4 of them"),
        ({"url": "https://hub.example.org/"}, "hub", "is not an http(s) URL"),
    ],
)
def test_a_bad_hub_is_one_line_naming_it(tmp_path: Path, value: object, field: str, problem: str) -> None:
    config = local_planet(tmp_path, hub=value)
    result = build(config)
    assert result.exit_code == 2
    assert re.fullmatch(rf"syndicator: error: {re.escape(str(config))}:\d+: {re.escape(field)}: .*\n", result.stderr)
    assert problem in result.stderr
    assert "secret" not in result.stderr
    assert not (tmp_path / "public").exists()


# --- what the feeds advertise ------------------------------------------------------------------------------------


def test_the_feeds_name_the_hubs_and_themselves(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/hub", method="POST").respond_with_data("", status=204)
    hubs = [server.url_for("/hub"), "https://hub.example.org/"]
    with_hubs = local_planet(tmp_path / "hubs", hub=hubs)
    without = local_planet(tmp_path / "plain")
    assert build(with_hubs).exit_code == 0
    assert build(without).exit_code == 0

    feed = ET.parse(tmp_path / "hubs" / "public" / "feed.xml").getroot()
    links = [(link.get("rel"), link.get("href")) for link in feed.findall(f"{ATOM}link")]
    assert [href for rel, href in links if rel == "hub"] == hubs
    assert [href for rel, href in links if rel == "self"] == [PLANET + "feed.xml"]
    document = json.loads((tmp_path / "hubs" / "public" / "feed.json").read_text(encoding="utf-8"))
    assert document["hubs"] == [{"type": "WebSub", "url": hub} for hub in hubs]
    assert document["feed_url"] == PLANET + "feed.json"

    plain = ET.parse(tmp_path / "plain" / "public" / "feed.xml").getroot()
    assert [link.get("rel") for link in plain.findall(f"{ATOM}link")] == ["self", "alternate"]
    assert "hubs" not in json.loads((tmp_path / "plain" / "public" / "feed.json").read_text(encoding="utf-8"))

    # Byte for byte, the hubs are the only difference between the two sites.
    published, unhubbed = tree(tmp_path / "hubs" / "public"), tree(tmp_path / "plain" / "public")
    assert published.keys() == unhubbed.keys()
    for name in published.keys() - {"feed.xml", "feed.json"}:
        assert published[name] == unhubbed[name], name
    hub_lines = "".join(f'  <link rel="hub" href="{hub}"/>\n' for hub in hubs).encode()
    assert hub_lines in published["feed.xml"]
    assert published["feed.xml"].replace(hub_lines, b"") == unhubbed["feed.xml"]
    del document["hubs"]
    assert json.dumps(document, ensure_ascii=False, indent=1).encode() + b"\n" == unhubbed["feed.json"]


# --- the pings ---------------------------------------------------------------------------------------------------


def test_a_changed_feed_is_announced_once_and_an_unchanged_one_never(server: HTTPServer, tmp_path: Path) -> None:
    served = {"feed": rss(post(1), post(2, day=2))}
    server.expect_request("/feed.xml").respond_with_handler(lambda request: Response(served["feed"]))
    server.expect_request("/hub", method="POST").respond_with_data("", status=202)
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}], hub=server.url_for("/hub"))

    first = build(config)
    assert first.exit_code == 0, first.output
    assert hub_warnings(first.stderr) == []
    pings = hub_posts(server)
    assert len(pings) == 1
    check_ping(pings[0], TOPICS)

    assert build(config, now="2026-11-30T12:05:00Z").exit_code == 0  # nothing due: nothing rendered
    assert report(tmp_path)["rendered"] is False
    assert len(hub_posts(server)) == 1

    # Fetched again, the same entries: the site is rendered again to the same bytes, so nothing is
    # written and nothing is announced.
    before = tree(tmp_path / "public")
    assert build(config, "--force", now="2026-11-30T12:10:00Z").exit_code == 0
    assert report(tmp_path)["rendered"] is False
    assert tree(tmp_path / "public") == before
    assert len(hub_posts(server)) == 1

    served["feed"] = rss(post(1), post(2, day=2), post(3, day=3))
    changed = build(config, "--force", now="2026-11-30T12:20:00Z")
    assert changed.exit_code == 0, changed.output
    assert "Post 3" in (tmp_path / "public" / "feed.xml").read_text(encoding="utf-8")
    pings = hub_posts(server)
    assert len(pings) == 2
    check_ping(pings[1], TOPICS)


def test_a_hub_answering_500_warns_once_and_is_pinged_by_the_next_build(server: HTTPServer, tmp_path: Path) -> None:
    status = {"code": 500}
    server.expect_request("/hub", method="POST").respond_with_handler(
        lambda request: Response("down for maintenance", status=status["code"])
    )
    hub = server.url_for("/hub")
    config = served_planet(server, tmp_path, hub=hub)

    failed = build(config)
    assert failed.exit_code == 0, failed.output
    assert (tmp_path / "public" / "feed.xml").is_file()
    assert hub_warnings(failed.stderr) == [
        f"syndicator: warning: hub {hub} was not told that {TOPICS[0]} and {TOPICS[1]} changed: hub answered 500: "
        "down for maintenance; the next build tries again"
    ]
    assert without_first_build_warning(failed.stderr).count("warning:") == 1
    assert len(hub_posts(server)) == 1

    status["code"] = 204
    again = build(config, now="2026-11-30T12:05:00Z")  # nothing due, nothing rendered: the pending ping is sent
    assert again.exit_code == 0, again.output
    assert report(tmp_path)["rendered"] is False
    assert hub_warnings(again.stderr) == []
    pings = hub_posts(server)
    assert len(pings) == 2
    check_ping(pings[1], TOPICS)

    assert build(config, now="2026-11-30T12:10:00Z").exit_code == 0  # told: nothing pending
    assert len(hub_posts(server)) == 2


class _Hub(http.server.BaseHTTPRequestHandler):
    """A hub that records each POST's form (the server's ``pings`` list) and answers 204."""

    server: _RecordingServer

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.pings.append(body.decode("ascii"))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the signature of http.server
        pass


class _RecordingServer(http.server.ThreadingHTTPServer):
    pings: list[str]


@contextmanager
def refusing_then_listening() -> Iterator[tuple[_RecordingServer, str]]:
    """A hub whose port is bound but not listening (connections are refused) until ``server_activate()``;
    its URL. Bound all along, the port cannot be taken by anyone else in between."""
    hub = _RecordingServer(("127.0.0.1", 0), _Hub, bind_and_activate=False)
    hub.pings = []
    try:
        hub.server_bind()
        yield hub, f"http://127.0.0.1:{hub.server_address[1]}/hub"
    finally:
        hub.server_close()


def test_a_hub_refusing_connections_warns_and_the_next_build_pings_it(tmp_path: Path) -> None:
    with refusing_then_listening() as (hub, url):
        config = local_planet(tmp_path, hub=url, timeout=5)
        failed = build(config)
        assert failed.exit_code == 0, failed.output
        warnings = hub_warnings(failed.stderr)
        assert len(warnings) == 1 and f"hub {url} was not told" in warnings[0]
        assert re.search(
            r"changed: could not connect: .*refused.*; the next build tries again$", warnings[0], re.IGNORECASE
        ), warnings[0]
        assert hub.pings == []

        hub.server_activate()
        with in_thread(hub):
            again = build(config, now="2026-11-30T12:05:00Z")
        assert again.exit_code == 0, again.output
        assert hub_warnings(again.stderr) == []
        assert len(hub.pings) == 1
        form = [tuple(field.split("=", 1)) for field in hub.pings[0].split("&")]
        quoted = [requests.utils.quote(topic, safe="") for topic in TOPICS]
        assert form == [("hub.mode", "publish"), *(("hub.url", t) for t in quoted), *(("hub.topic", t) for t in quoted)]


# --- a real hub --------------------------------------------------------------------------------------------------


@contextmanager
def websub_hub(database: Path) -> Iterator[tuple[str, Any]]:
    """flask-websub's hub on 127.0.0.1, its deliveries run at once by celery in eager mode; (its URL, its storage)."""
    from celery import Celery
    from flask import Flask
    from flask_websub.hub import Hub, SQLite3HubStorage
    from werkzeug.serving import make_server

    celery = Celery("hub", broker="memory://", backend="cache+memory://")
    celery.conf.task_always_eager = True
    celery.conf.task_eager_propagates = True  # a failed delivery answers the ping with 500: the build warns
    app = Flask("hub")
    app.config["PUBLISH_SUPPORTED"] = True  # the blueprint reads the app's config, not the Hub's
    storage = SQLite3HubStorage(str(database))
    hub = Hub(storage, celery, PUBLISH_SUPPORTED=True, REQUEST_TIMEOUT=10)
    app.register_blueprint(hub.build_blueprint(url_prefix="/hub"))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.port}/hub", storage
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_a_real_hub_delivers_the_planets_feed_to_a_subscriber(server: HTTPServer, tmp_path: Path) -> None:
    public = tmp_path / "public"
    secret = "a shared secret"
    delivered: list[tuple[dict[str, str], bytes]] = []
    arrived = threading.Event()

    with websub_hub(tmp_path / "hub.db") as (hub, storage):
        planet = server.url_for("/")
        topic = planet + "feed.xml"

        def static(request: Request) -> Response:
            """public/ as a web server shows it, with the Link header flask-websub's hub requires."""
            path = public / request.path.lstrip("/")
            if not path.is_file():
                return Response("not found", status=404)
            return Response(
                path.read_bytes(),
                headers={"Link": f'<{hub}>; rel="hub", <{topic}>; rel="self"'},
                content_type="application/atom+xml",
            )

        def subscriber(request: Request) -> Response:
            """A WebSub subscriber's callback: echo the challenge, record each delivery."""
            if request.method == "GET":
                return Response(request.args["hub.challenge"])
            delivered.append((dict(request.headers), request.get_data()))
            arrived.set()
            return Response("", status=204)

        server.expect_request(re.compile(r"/feed\.(xml|json)")).respond_with_handler(static)
        server.expect_request("/callback").respond_with_handler(subscriber)
        callback = server.url_for("/callback")
        answer = requests.post(
            hub,
            data={
                "hub.mode": "subscribe",
                "hub.topic": topic,
                "hub.callback": callback,
                "hub.secret": secret,
                "hub.lease_seconds": "3600",
            },
            timeout=10,
        )
        assert answer.status_code == 202, answer.text
        assert [tuple(row) for row in storage.get_callbacks(topic)] == [(callback, secret)]  # intent verified

        config = local_planet(tmp_path, hub=hub, link=planet, timeout=10)
        result = build(config)
        assert result.exit_code == 0, result.output
        assert hub_warnings(result.stderr) == []
        assert arrived.wait(timeout=10), "the hub delivered nothing"

    assert len(delivered) == 1
    headers, body = delivered[0]
    assert body == (public / "feed.xml").read_bytes()
    assert [link.get("href") for link in ET.fromstring(body).findall(f"{ATOM}link") if link.get("rel") == "hub"] == [
        hub
    ]
    algorithm, _, signature = headers["X-Hub-Signature"].partition("=")
    assert algorithm == "sha512"
    assert hmac.compare_digest(signature, hmac.new(secret.encode(), body, hashlib.sha512).hexdigest())
    assert not hmac.compare_digest(signature, hmac.new(b"another secret", body, hashlib.sha512).hexdigest())
