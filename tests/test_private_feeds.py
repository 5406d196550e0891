"""Private feeds (docs/private-feeds.md), through the real CLI on loopback servers: each kind of
credential (bearer, basic, header, query) reaches the feed's origin, from the environment or the
secrets file; a redirect to another origin gets none of it; nothing written (the site, the cache
folder and its SQLite bytes, the state snapshot, what build and status print) holds a secret; a site
of the same URL without the credential is another source; a refused credential holds the feed until
it changes; a missing credential is a one-line error that shows no value.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import signal
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
import yaml
from click.testing import CliRunner, Result
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.cli import main
from syndicator.credential import Credential
from syndicator.errors import FetchError
from syndicator.fetch import private
from syndicator.state.store import Store

from .conftest import build, loopback_server, post, rss, write_config
from .postgres import pg_database, postgres_url  # noqa: F401 - fixtures
from .websub_hub import SYNDICATOR, WAIT, ServeProcess, wait_for

LATER = "2026-12-02T12:00:00Z"  # two days after NOW_ISO: every feed checked at NOW is due again
TOKEN = "tok-3f9a1c7e-SECRET"
PASSWORD = "pw-77e2b0d4-SECRET"
#: Each kind of credential: (what the secrets file or the variable holds, does a request carry it?).
KINDS: dict[str, tuple[dict[str, object], Callable[[Request], bool]]] = {
    "bearer": ({"bearer": TOKEN}, lambda r: r.headers.get("Authorization") == f"Bearer {TOKEN}"),
    "basic": (
        {"basic": {"user": "reader", "password": PASSWORD}},
        lambda r: r.headers.get("Authorization") == "Basic " + base64.b64encode(f"reader:{PASSWORD}".encode()).decode(),
    ),
    "header": ({"header": {"name": "X-Api-Key", "value": TOKEN}}, lambda r: r.headers.get("X-Api-Key") == TOKEN),
    "query": ({"query": {"name": "token", "value": TOKEN}}, lambda r: r.args.get("token") == TOKEN),
}
#: Every form a secret could be written in: as it is, and inside a basic Authorization header.
SECRET_FORMS = [TOKEN, PASSWORD, base64.b64encode(f"reader:{PASSWORD}".encode()).decode()]


def carries_any(request: Request) -> bool:
    """True when ``request`` carries anything of any credential kind."""
    return bool(request.headers.get("Authorization") or request.headers.get("X-Api-Key") or "token" in request.args)


def gated(check: Callable[[Request], bool], seen: list[Request]) -> Callable[[Request], Response]:
    """A handler serving the private feed to a request ``check`` accepts, and 401 to any other."""

    def handle(request: Request) -> Response:
        seen.append(request)
        if not check(request):
            return Response("login first", status=401)
        return Response(rss(post(1), title="Team notes"), content_type="application/rss+xml")

    return handle


def private_planet(tmp_path: Path, feed: str, *, secrets: dict[str, object] | None = None, **settings: object) -> Path:
    """A sites.yaml with one private site ``Team`` (``credentials: team``) of ``feed``, and a
    secrets file (mode 600) holding ``secrets`` when given."""
    if secrets is not None:
        path = tmp_path / "secrets.yaml"
        path.write_text(yaml.safe_dump(secrets), encoding="utf-8")
        path.chmod(0o600)
        settings["secrets"] = "secrets.yaml"
    sites = [{"name": "Team", "feed": feed, "credentials": "team"}]
    return write_config(tmp_path, sites, host_gap=0, retries=0, **settings)


def status(config: Path, *args: str, now: str = LATER) -> Result:
    return CliRunner().invoke(main, ["status", "--config", str(config), "--now", now, *args], catch_exceptions=False)


@pytest.fixture
def no_credentials_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("SYNDICATOR_CREDENTIALS_"):
            monkeypatch.delenv(name)


@pytest.mark.usefixtures("no_credentials_in_environment")
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("where", ["file", "environment"])
def test_each_kind_of_credential_reaches_the_feed_and_its_url_is_not_published(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, where: str
) -> None:
    value, check = KINDS[kind]
    seen: list[Request] = []
    server.expect_request("/team.xml").respond_with_handler(gated(check, seen))
    if where == "environment":
        monkeypatch.setenv("SYNDICATOR_CREDENTIALS_TEAM", json.dumps(value))
        config = private_planet(tmp_path, server.url_for("/team.xml"))
    else:
        config = private_planet(tmp_path, server.url_for("/team.xml"), secrets={"team": value})
    result = build(config)
    assert result.exit_code == 0, result.stderr
    assert [check(request) for request in seen] == [True]
    public = tmp_path / "public"
    assert "Post 1" in (public / "feed.xml").read_text(encoding="utf-8")  # its entries are published
    for name in ("opml.xml", "index.html", "sites.html"):
        written = (public / name).read_text(encoding="utf-8") if (public / name).exists() else ""
        assert "team.xml" not in written, name  # subscribers cannot read a private feed: its URL is not shown


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_the_environment_wins_over_the_secrets_file(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Request] = []
    server.expect_request("/team.xml").respond_with_handler(gated(KINDS["bearer"][1], seen))
    monkeypatch.setenv("SYNDICATOR_CREDENTIALS_TEAM", f"{{bearer: {TOKEN}}}")  # YAML, not only JSON
    config = private_planet(tmp_path, server.url_for("/team.xml"), secrets={"team": {"bearer": "an-old-token"}})
    assert build(config).exit_code == 0
    assert [request.headers.get("Authorization") for request in seen] == [f"Bearer {TOKEN}"]


@pytest.mark.usefixtures("no_credentials_in_environment")
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_redirect_to_another_origin_receives_no_credential(server: HTTPServer, tmp_path: Path, kind: str) -> None:
    value, check = KINDS[kind]
    origin: list[Request] = []
    elsewhere: list[Request] = []
    with loopback_server("127.0.0.2") as other:
        other.expect_request("/feed.xml").respond_with_handler(
            lambda request: elsewhere.append(request) or Response(rss(post(1)), content_type="application/rss+xml")
        )
        moved = other.url_for("/feed.xml")
        server.expect_request("/team.xml").respond_with_handler(
            lambda request: origin.append(request) or Response("", status=302, headers={"Location": moved})
        )
        config = private_planet(
            tmp_path, server.url_for("/team.xml"), secrets={"team": value}, allow_private_networks=True
        )
        result = build(config)
    assert result.exit_code == 0, result.stderr
    assert [check(request) for request in origin] == [True]  # the feed's own origin got it
    assert len(elsewhere) == 1
    assert not carries_any(elsewhere[0])  # the other origin got none of it
    assert not check(elsewhere[0])


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_another_port_of_the_same_host_is_another_origin(server: HTTPServer, tmp_path: Path) -> None:
    value, check = KINDS["bearer"]
    elsewhere: list[Request] = []
    with loopback_server() as other:  # 127.0.0.1 too, on another port
        other.expect_request("/feed.xml").respond_with_handler(
            lambda request: elsewhere.append(request) or Response(rss(post(1)), content_type="application/rss+xml")
        )
        moved = other.url_for("/feed.xml")
        server.expect_request("/team.xml").respond_with_data("", status=301, headers={"Location": moved})
        config = private_planet(tmp_path, server.url_for("/team.xml"), secrets={"team": value})
        assert build(config).exit_code == 0
    assert len(elsewhere) == 1 and not carries_any(elsewhere[0])


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_a_feed_moved_within_its_origin_keeps_its_credential_and_a_repeated_token_is_not_stored(
    server: HTTPServer, tmp_path: Path
) -> None:
    """A 301 to a URL of the same origin that repeats the query token: the credential goes on to the new
    URL, at this build and the next (which asks the new URL directly), and no stored URL holds it."""
    value, check = KINDS["query"]
    moved: list[Request] = []
    server.expect_request("/team.xml").respond_with_data(
        "", status=301, headers={"Location": f"/moved.xml?page=1&token={TOKEN}"}
    )
    server.expect_request("/moved.xml").respond_with_handler(gated(check, moved))
    config = private_planet(tmp_path, server.url_for("/team.xml"), secrets={"team": value})
    assert build(config).exit_code == 0
    assert build(config, now=LATER).exit_code == 0
    assert [check(request) for request in moved] == [True, True]
    assert [request.args.get("page") for request in moved] == ["1", "1"]
    assert len(server.log) == 3  # the second build went to the new URL at once
    shown = status(config, "--json").stdout
    assert "moved.xml?page=1" in shown
    assert TOKEN not in shown
    assert TOKEN.encode() not in (tmp_path / "cache" / "state.sqlite").read_bytes()


def every_file(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_nothing_written_or_printed_holds_a_secret(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Private feeds of each kind, one of them also on a port where nothing listens (its error would
    quote the URL its token is in), one refused (401): the scan covers every file written (the
    site, the cache folder with the SQLite file's bytes, the snapshot) and every line printed."""
    for kind in ("bearer", "basic", "header", "query"):
        server.expect_request(f"/{kind}.xml").respond_with_handler(gated(KINDS[kind][1], []))
    server.expect_request("/refused.xml").respond_with_data("no", status=401)
    with loopback_server() as closed:
        down = closed.url_for("/query.xml")  # the server stops: nothing listens on its port
    secrets = {kind: KINDS[kind][0] for kind in KINDS} | {"refused": KINDS["bearer"][0]}
    (tmp_path / "secrets.yaml").write_text(yaml.safe_dump(secrets), encoding="utf-8")
    (tmp_path / "secrets.yaml").chmod(0o600)
    sites = [{"name": kind, "feed": server.url_for(f"/{kind}.xml"), "credentials": kind} for kind in KINDS]
    sites[-1]["feed"] = down
    sites.append({"name": "Query answered", "feed": server.url_for("/query.xml"), "credentials": "query"})
    sites.append({"name": "Refused", "feed": server.url_for("/refused.xml"), "credentials": "refused"})
    sites.append({"name": "Public", "feed": server.url_for("/bearer.xml")})
    config = write_config(tmp_path, sites, host_gap=0, retries=0, snapshot=True, secrets="secrets.yaml")
    printed = [build(config, "-vv"), build(config, "-vv", "--force", now=LATER)]
    printed += [status(config), status(config, "--json"), status(config, "--failing")]
    assert "Post 1" in (tmp_path / "public" / "feed.xml").read_text(encoding="utf-8")
    assert (tmp_path / "public" / "syndicator-state.json.gz").exists()
    scanned = 0
    for path in every_file(tmp_path):
        if path.name == "secrets.yaml":
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        for form in SECRET_FORMS:
            assert form.encode() not in data, path
        scanned += 1
    assert scanned > 5
    for result in printed:
        for form in SECRET_FORMS:
            assert form not in result.stdout and form not in result.stderr
    shown = printed[2].stdout
    assert "credentials refused" in shown  # the refused feed says so, without the token
    assert "connection failed" in shown or "connection" in printed[0].stderr


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_serve_sends_the_credential_and_its_metrics_and_log_hold_no_secret(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    value, check = KINDS["query"]
    seen: list[Request] = []
    server.expect_request("/team.xml").respond_with_handler(gated(check, seen))
    monkeypatch.setenv("SYNDICATOR_CREDENTIALS_TEAM", json.dumps(value))  # serve inherits the environment
    config = private_planet(tmp_path, server.url_for("/team.xml"))
    serve = ServeProcess(config, "-v", public=False)
    try:
        serve.wait_for(lambda: serve.metric("syndicator_renders_total") == 1.0, "the first render")
        metrics = serve.get("/metrics").text
        assert serve.terminate() == 0
    finally:
        serve.process.kill()
    assert [check(request) for request in seen] == [True]
    assert "syndicator_fetches_total" in metrics
    written = [metrics, serve.log()] + [p.read_bytes().decode("latin-1") for p in every_file(tmp_path)]
    for text in written:
        assert TOKEN not in text


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_serve_tries_a_refused_feed_again_as_soon_as_the_secrets_file_changes(
    server: HTTPServer, tmp_path: Path
) -> None:
    value, check = KINDS["bearer"]
    seen: list[Request] = []
    server.expect_request("/team.xml").respond_with_handler(gated(check, seen))
    config = private_planet(tmp_path, server.url_for("/team.xml"), secrets={"team": {"bearer": "an-expired-token"}})
    serve = ServeProcess(config, public=False)
    try:
        serve.wait_for(lambda: len(seen) == 1, "the first request")
        secrets = tmp_path / "secrets.yaml"
        secrets.write_text(yaml.safe_dump({"team": value}), encoding="utf-8")
        stamp = secrets.stat().st_mtime_ns + 1_000_000_000  # a time of its own, however coarse the clock
        os.utime(secrets, ns=(stamp, stamp))
        serve.wait_for(lambda: len(seen) == 2, "a request with the new credential")
        serve.wait_for(lambda: serve.metric("syndicator_renders_total") == 1.0, "the render of its entries")
        assert serve.terminate() == 0
    finally:
        serve.process.kill()
    assert [check(request) for request in seen] == [False, True]
    assert "an-expired-token" not in serve.log() and TOKEN not in serve.log()


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_a_worker_sends_the_credential_and_stores_none_of_it(
    server: HTTPServer, tmp_path: Path, pg_database: str
) -> None:
    value, check = KINDS["header"]
    seen: list[Request] = []
    server.expect_request("/team.xml").respond_with_handler(gated(check, seen))
    config = private_planet(tmp_path, server.url_for("/team.xml"), secrets={"team": value}, state=pg_database)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and k != "SYNDICATOR_STATE"}
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(SYNDICATOR), "worker", "--config", str(config), "--name", "a", "-v"],
            stdout=subprocess.DEVNULL,
            stderr=out,
            env=env,
        )
    try:
        wait_for(lambda: len(seen) == 1, "the worker's request")
        with Store.connect(pg_database) as store:
            wait_for(lambda: any(s.last_success for s in store.states().values()), "the feed stored")
            states = repr(store.states())
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=WAIT)
    assert check(seen[0])
    assert "#credentials=team" in states
    assert TOKEN not in states and TOKEN not in log.read_text(encoding="utf-8")


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_a_public_site_of_the_same_url_is_another_source_without_the_private_entries(
    server: HTTPServer, tmp_path: Path
) -> None:
    value, check = KINDS["bearer"]
    seen: list[Request] = []

    def handle(request: Request) -> Response:
        seen.append(request)
        items = [post(1), post(2)] if check(request) else [post(1)]
        if check(request):
            items[1] = dict(items[1], title="Only for the team")
        return Response(rss(*items), content_type="application/rss+xml")

    server.expect_request("/team.xml").respond_with_handler(handle)
    (tmp_path / "secrets.yaml").write_text(yaml.safe_dump({"team": value}), encoding="utf-8")
    (tmp_path / "secrets.yaml").chmod(0o600)
    feed = server.url_for("/team.xml")
    sites = [{"name": "Public", "feed": feed}, {"name": "Team", "feed": feed, "credentials": "team"}]
    config = write_config(tmp_path, sites, host_gap=0, retries=0, secrets="secrets.yaml", new_feed_items="all")
    result = build(config)
    assert result.exit_code == 0, result.stderr
    assert sorted(check(request) for request in seen) == [False, True]  # two sources, two requests
    assert "lists the feed of" not in result.stderr  # not a duplicate: another feed for syndicator
    with sqlite3.connect(tmp_path / "cache" / "state.sqlite") as db:
        stored = sorted(db.execute("SELECT source, json_extract(data, '$.title') FROM entries"))
    private = f"{feed}#credentials=team"
    assert stored == sorted([(feed, "Post 1"), (private, "Post 1"), (private, "Only for the team")])
    opml = (tmp_path / "public" / "opml.xml").read_text(encoding="utf-8")
    assert opml.count("team.xml") == 1  # the public site's feed only


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_a_refused_credential_holds_the_feed_until_the_credential_changes(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Request] = []
    server.expect_request("/team.xml").respond_with_handler(gated(KINDS["bearer"][1], seen))
    monkeypatch.setenv("SYNDICATOR_CREDENTIALS_TEAM", '{"bearer": "an-expired-token"}')
    config = private_planet(tmp_path, server.url_for("/team.xml"))
    first = build(config)
    assert len(seen) == 1
    assert "credentials refused" in first.stderr
    assert "an-expired-token" not in first.stderr
    shown = status(config).stdout
    assert "credentials refused" in shown and "until its credentials change" in shown
    assert "[denied" in shown and "next due: on hold" in shown
    held = build(config, now=LATER)
    assert len(seen) == 1, held.stderr  # held: two days later, no request
    monkeypatch.setenv("SYNDICATOR_CREDENTIALS_TEAM", json.dumps({"bearer": TOKEN}))
    renewed = build(config, now=LATER)
    assert renewed.exit_code == 0, renewed.stderr
    assert len(seen) == 2 and KINDS["bearer"][1](seen[-1])  # a new credential is tried at once


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_a_credential_in_neither_place_is_a_one_line_error_naming_the_site_and_where_it_looked(
    tmp_path: Path,
) -> None:
    config = private_planet(tmp_path, "https://intranet.example.com/feed.xml", secrets={"other": {"bearer": TOKEN}})
    result = build(config)
    assert result.exit_code != 0
    line = result.stderr.strip()
    assert "\n" not in line
    assert "sites[0].credentials" in line and "'team'" in line
    assert "$SYNDICATOR_CREDENTIALS_TEAM" in line and "secrets.yaml" in line
    assert TOKEN not in line


@pytest.mark.usefixtures("no_credentials_in_environment")
@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"bearer": TOKEN, "basic": {"user": "u", "password": PASSWORD}}, id="two-kinds"),
        pytest.param({"basic": {"user": "u"}, "x": PASSWORD}, id="unknown-kind"),
        pytest.param({"basic": {"user": "u", "pass": PASSWORD}}, id="basic-without-password"),
        pytest.param({"header": {"name": "User-Agent", "value": TOKEN}}, id="own-header"),
        pytest.param({"header": {"name": "X-Key", "value": f"{TOKEN}\r\nX-Other: 1"}}, id="header-injection"),
    ],
)
def test_a_credential_of_no_known_shape_is_refused_without_showing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: dict[str, object]
) -> None:
    monkeypatch.setenv("SYNDICATOR_CREDENTIALS_TEAM", json.dumps(value))
    result = build(private_planet(tmp_path, "https://intranet.example.com/feed.xml"))
    assert result.exit_code != 0
    assert "$SYNDICATOR_CREDENTIALS_TEAM" in result.stderr and "sites[0].credentials" in result.stderr
    assert TOKEN not in result.stderr and PASSWORD not in result.stderr


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_a_name_written_twice_in_the_secrets_file_is_refused_not_the_first_one_sent(
    server: HTTPServer, tmp_path: Path
) -> None:
    """A token renewed by adding a line below the old one: YAML would keep one silently, and the old one
    would go on being sent. The error names the line and the name, never a value."""
    seen: list[Request] = []
    server.expect_request("/team.xml").respond_with_handler(gated(KINDS["bearer"][1], seen))
    config = private_planet(tmp_path, server.url_for("/team.xml"), secrets={})
    path = tmp_path / "secrets.yaml"
    path.write_text(f"team: {{bearer: old-{TOKEN}}}\nteam: {{bearer: {TOKEN}}}\n", encoding="utf-8")
    result = build(config)
    assert result.exit_code != 0 and seen == []
    line = result.stderr.strip()
    assert "\n" not in line and "secrets.yaml:2: team appears twice (first on line 1)" in line, line
    assert TOKEN not in line


@pytest.mark.usefixtures("no_credentials_in_environment")
def test_a_secrets_file_others_can_read_gets_a_warning(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/team.xml").respond_with_handler(gated(KINDS["bearer"][1], []))
    config = private_planet(tmp_path, server.url_for("/team.xml"), secrets={"team": KINDS["bearer"][0]})
    assert "can be read by other users" not in build(config).stderr
    (tmp_path / "secrets.yaml").chmod(0o644)
    warned = build(config, now=LATER)
    assert warned.exit_code == 0
    assert "can be read by other users (mode 644): chmod 600" in warned.stderr


def test_a_feed_url_with_a_password_points_to_credentials(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"name": "A", "feed": f"https://reader:{PASSWORD}@intranet.example.com/f"}])
    result = build(config)
    assert result.exit_code != 0
    assert "give credentials: instead" in result.stderr
    assert PASSWORD not in result.stderr


def test_a_failure_message_quoting_the_url_sent_is_scrubbed_of_the_token() -> None:
    """requests' own errors quote the URL they were given (``Max retries exceeded with url:
    /feed.xml?token=...``): the message of a private fetch's failure is masked wherever it does."""
    credential = Credential("team", "query", "token", TOKEN)
    with loopback_server() as closed:
        source = closed.url_for("/feed.xml")
    sent = private.url_for(credential, source, source)
    assert TOKEN in sent
    with pytest.raises(requests.exceptions.ConnectionError) as caught:
        requests.get(sent, timeout=5)
    assert TOKEN in str(caught.value)  # the text a careless message would carry
    error = private.scrub(FetchError(source, f"connection failed: {caught.value}"), credential)
    assert TOKEN not in error.message and private.MASK in error.message
    assert error.__cause__ is None and error.__context__ is None
