"""websub: discovery (Link headers and documents), signatures, and the requests to a hub.

Hub requests go to a real HTTP server on 127.0.0.1 (or, for https, to
``responses``); nothing here asserts a wall-clock limit: a hub that does not
answer in time shows as an answer with no status.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

import pytest
import requests
import responses
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response
from werkzeug.datastructures import Headers

from syndicator.feedtypes import ParsedFeed
from syndicator.fetch.answer import parse_retry_after
from syndicator.fetch.http import Fetcher
from syndicator.model import Fetched, FetchRequest, NotModified
from syndicator.parse import fastreader, hubs
from syndicator.parse.feed import parse_feed
from syndicator.parse.hubs import MAX_HUBS, Advertised, advertised
from syndicator.push import websub
from syndicator.push.websub import notify_publish, request_subscription, signature_valid
from syndicator.values import is_http_url

from .conftest import NOW, post, rss

URL = "https://blog.example.org/feeds/main.xml"


def links(value: str, parsed: ParsedFeed | None = None, url: str = URL) -> Advertised:
    return advertised({"link": value}, parsed, url)


def feed(hubs: tuple[str, ...] = (), self_url: str | None = None) -> ParsedFeed:
    return ParsedFeed("T", None, (), hubs=hubs, self_url=self_url)


# --- Link headers (RFC 8288) ----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "hubs", "topic"),
    [
        pytest.param(
            '<https://hub.example.org/>; rel="hub", <https://blog.example.org/feed>; rel="self"',
            ("https://hub.example.org/",),
            "https://blog.example.org/feed",
            id="two-links-one-header",
        ),
        pytest.param(
            ' , <https://a.example/hub> ;rel=hub ,\t<https://b.example/hub>  ;  rel = "hub"  ,, ',
            ("https://a.example/hub", "https://b.example/hub"),
            None,
            id="white-space-and-empty-elements",
        ),
        pytest.param("<https://a.example/hub>; rel=hub", ("https://a.example/hub",), None, id="unquoted-rel"),
        pytest.param('<https://a.example/hub>; rel="HUB"', ("https://a.example/hub",), None, id="rel-any-case"),
        pytest.param(
            '<https://both.example/x>; rel="hub self"',
            ("https://both.example/x",),
            "https://both.example/x",
            id="rel-with-two-tokens",
        ),
        pytest.param(
            '<https://a.example/hub>; rel="alternate hub"',
            ("https://a.example/hub",),
            None,
            id="hub-among-other-tokens",
        ),
        pytest.param(
            '<https://a.example/hub>; rel="http://www.iana.org/assignments/relation/hub"',
            ("https://a.example/hub",),
            None,
            id="rel-as-iana-iri",
        ),
        pytest.param(
            '<https://a.example/hub>; rel="hubbub", <https://b.example/>; rel="alternate"',
            (),
            None,
            id="no-hub-relation",
        ),
        pytest.param(
            '</websub/hub>; rel="hub", <main.atom>; rel="self"',
            ("https://blog.example.org/websub/hub",),
            "https://blog.example.org/feeds/main.atom",
            id="relative-targets",
        ),
        pytest.param(
            "<javascript:alert(1)>; rel=hub, <ftp://a.example/>; rel=hub, <mailto:a@example.org>; rel=hub, "
            "<data:text/plain,x>; rel=hub, <https://user:pw@a.example/>; rel=hub, <https://[oops/>; rel=hub, "
            "<https://ok.example/>; rel=hub, <javascript:x>; rel=self",
            ("https://ok.example/",),
            None,
            id="non-http-and-unusable-dropped",
        ),
        pytest.param(
            '<https://a.example/hub,1>; rel="hub"; title="a, b; c", <https://b.example/>; rel=hub',
            ("https://a.example/hub,1", "https://b.example/"),
            None,
            id="commas-inside-uri-and-quotes",
        ),
        pytest.param(
            '<https://a.example/>; title="say \\"hi\\", rel=self"; rel=hub',
            ("https://a.example/",),
            None,
            id="quoted-pair",
        ),
        pytest.param(
            '<https://a.example/>; rel="hub"; rel="self"', ("https://a.example/",), None, id="only-the-first-rel-counts"
        ),
        pytest.param(
            '<https://a.example/>; rel=hub; anchor="https://other.example/feed", <https://b.example/>; '
            'rel=hub; anchor="#top", <https://c.example/>; rel=hub; anchor=""',
            ("https://b.example/", "https://c.example/"),
            None,
            id="anchor-of-another-resource-skipped",
        ),
        pytest.param(
            'garbage, <https://a.example/>; rel="hub, <https://b.example/>; rel=hub; =x, '
            "<https://c.example/> rel=hub, <https://d.example/>; rel=hub",
            ("https://d.example/",),
            None,
            id="malformed-links-skipped",
        ),
        pytest.param(
            "<https://a.example/>; rel=hub, <https://A.EXAMPLE:443>; rel=hub, <https://a.example/#x>; rel=hub",
            ("https://a.example/",),
            None,
            id="deduplicated-canonically",
        ),
        pytest.param(
            ", ".join(f"<https://h{n}.example/>; rel=hub" for n in range(7)),
            tuple(f"https://h{n}.example/" for n in range(4)),
            None,
            id="at-most-four",
        ),
        pytest.param("", (), None, id="empty"),
    ],
)
def test_link_header_forms(value: str, hubs: tuple[str, ...], topic: str | None) -> None:
    assert links(value) == Advertised(hubs, topic)


def test_the_link_header_is_found_whatever_the_case_of_its_name() -> None:
    headers = {"Content-Type": "application/rss+xml", "LINK": "<https://hub.example/>; rel=hub"}
    assert advertised(headers, None, URL).hubs == ("https://hub.example/",)
    assert advertised({"content-type": "x", "linkx": "<https://hub.example/>; rel=hub"}, None, URL).hubs == ()


def test_header_hubs_come_first_and_the_header_self_wins() -> None:
    parsed = feed(("https://doc-hub.example/", "https://shared.example/hub"), "https://blog.example.org/doc-self")
    found = links(
        "<https://shared.example/hub>; rel=hub, <https://head-hub.example/>; rel=hub, "
        "<https://blog.example.org/head-self>; rel=self",
        parsed,
    )
    assert found == Advertised(
        ("https://shared.example/hub", "https://head-hub.example/", "https://doc-hub.example/"),
        "https://blog.example.org/head-self",
    )


def test_the_document_self_is_the_fallback_and_none_without_either() -> None:
    parsed = feed(("https://doc-hub.example/",), "https://blog.example.org/doc-self")
    assert links("<https://head-hub.example/>; rel=hub", parsed) == Advertised(
        ("https://head-hub.example/", "https://doc-hub.example/"), "https://blog.example.org/doc-self"
    )
    assert links("", feed(("https://doc-hub.example/",))) == Advertised(("https://doc-hub.example/",), None)
    assert advertised({}, None, URL) == Advertised((), None)


def test_the_cap_counts_header_and_document_hubs_together() -> None:
    parsed = feed(tuple(f"https://d{n}.example/" for n in range(4)))
    found = links(
        "<https://h1.example/>; rel=hub, <https://h2.example/>; rel=hub, <https://d0.example>; rel=hub", parsed
    )
    assert found.hubs == ("https://h1.example/", "https://h2.example/", "https://d0.example", "https://d1.example/")


def test_a_link_cut_at_the_header_limit_is_dropped() -> None:
    # The cut falls just after "rel=hub" of a link whose relation is "hubbub": read as cut, it would be a hub.
    tail = "<https://evil.example/>; rel=hub"
    head = "<https://ok.example/>; rel=hub, <https://pad.example/?"
    padding = "a" * (hubs.MAX_LINK_CHARS - len(head) - len(">; rel=alternate, ") - len(tail))
    value = f"{head}{padding}>; rel=alternate, {tail}bub"
    assert value[: hubs.MAX_LINK_CHARS].endswith("rel=hub")
    assert links(value).hubs == ("https://ok.example/",)
    assert links(value[: hubs.MAX_LINK_CHARS]).hubs == ("https://ok.example/", "https://evil.example/")


def test_garbage_before_the_hubs_stops_the_search() -> None:
    junk = ", ".join(f"<javascript:{n}>; rel=hub" for n in range(hubs.MAX_CANDIDATES))
    assert links(f"{junk}, <https://late.example/>; rel=hub").hubs == ()
    fewer = ", ".join(f"<javascript:{n}>; rel=hub" for n in range(hubs.MAX_CANDIDATES - 1))
    assert links(f"{fewer}, <https://late.example/>; rel=hub").hubs == ("https://late.example/",)


# --- documents, through the real parse ----------------------------------------------

FETCHED = "https://fetch.example.org/blog/feed"
ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Atom</title><id>tag:example.org,2026:feed</id><updated>2026-11-01T10:00:00Z</updated>
  <link rel="alternate" type="text/html" href="https://blog.example.org/"/>
  <link rel="hub" href="/hub"/>
  <link rel="self" type="application/atom+xml" href="atom.xml"/>
  <link rel="hub" href="javascript:alert(1)"/>
  <link rel="http://www.iana.org/assignments/relation/hub" href="https://second.example/hub"/>
  <link rel="hub" href="https://FETCH.example.org:443/hub"/>
  <entry>
    <title>One</title><id>tag:example.org,2026:1</id><updated>2026-11-01T10:00:00Z</updated>
    <link rel="alternate" href="https://blog.example.org/1"/>
    <link rel="hub" href="https://entry-hub.example/"/>
    <link rel="self" href="https://blog.example.org/1.atom"/>
  </entry>
</feed>
"""
RSS_LINKS = (
    '<atom:link rel="self" type="application/rss+xml" href="https://blog.example.org/rss"/>'
    '<atom:link rel="hub" href="https://hub.example.org/"/>'
    '<atom:link rel="hub" href="data:text/html,x"/>'
    '<atom:link rel="hub" href="hub2"/>'
)
RSS_ITEM_LINK = '<atom:link rel="hub" href="https://item-hub.example/"/>'


def rss_with_links(doctype: bool = False) -> bytes:
    document = (
        rss(post(1), extra=RSS_LINKS)
        .replace("xmlns:dc=", 'xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc=')
        .replace("</item>", RSS_ITEM_LINK + "</item>")
    )
    if doctype:
        document = document.replace("<rss ", "<!DOCTYPE rss>\n<rss ", 1)
    return document.encode()


def parse_noting_path(body: bytes, monkeypatch: pytest.MonkeyPatch, url: str = FETCHED) -> tuple[ParsedFeed, bool]:
    """(the parsed feed, whether the lxml fast path read it rather than feedparser)."""
    took: list[bool] = []
    real = fastreader.read

    def spy(prepared: str, budget: Any) -> Any:
        document = real(prepared, budget)
        took.append(document is not None)
        return document

    monkeypatch.setattr(fastreader, "read", spy)
    return parse_feed(body, url, {}, NOW), any(took)


def test_atom_feed_level_hub_and_self_links(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed, fast = parse_noting_path(ATOM.encode(), monkeypatch)
    assert fast
    assert parsed.hubs == ("https://fetch.example.org/hub", "https://second.example/hub")
    assert parsed.self_url == "https://fetch.example.org/blog/atom.xml"


def test_atom_through_feedparser_gives_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastreader, "read", lambda prepared, budget: None)
    parsed = parse_feed(ATOM.encode(), FETCHED, {}, NOW)
    assert parsed.hubs == ("https://fetch.example.org/hub", "https://second.example/hub")
    assert parsed.self_url == "https://fetch.example.org/blog/atom.xml"


@pytest.mark.parametrize(("doctype", "fast_path"), [(False, True), (True, False)], ids=["lxml", "feedparser"])
def test_rss_atom_link_in_the_channel(monkeypatch: pytest.MonkeyPatch, doctype: bool, fast_path: bool) -> None:
    parsed, fast = parse_noting_path(rss_with_links(doctype), monkeypatch)
    assert fast is fast_path  # a DOCTYPE sends the document to feedparser
    assert parsed.hubs == ("https://hub.example.org/", "https://fetch.example.org/blog/hub2")
    assert parsed.self_url == "https://blog.example.org/rss"
    assert len(parsed.entries) == 1


def test_xml_base_applies_to_feed_level_links(monkeypatch: pytest.MonkeyPatch) -> None:
    body = ATOM.replace(
        '<feed xmlns="http://www.w3.org/2005/Atom">',
        '<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://base.example/x/">',
    )
    for fast in (True, False):
        with monkeypatch.context() as patch:
            if not fast:
                patch.setattr(fastreader, "read", lambda prepared, budget: None)
            parsed = parse_feed(body.encode(), FETCHED, {}, NOW)
        assert parsed.hubs[0] == "https://base.example/hub", fast
        assert parsed.self_url == "https://base.example/x/atom.xml", fast


def test_a_feed_without_links_advertises_nothing() -> None:
    parsed = parse_feed(rss(post(1)).encode(), FETCHED, {}, NOW)
    assert (parsed.hubs, parsed.self_url) == ((), None)


def json_feed(**fields: Any) -> bytes:
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "J",
        "items": [{"id": "1", "content_text": "x", "url": "https://blog.example.org/1"}],
        **fields,
    }
    return json.dumps(document).encode()


def test_json_feed_hubs_and_feed_url() -> None:
    body = json_feed(
        feed_url="feed.json",
        hubs=[
            {"type": "rssCloud", "url": "https://cloud.example/"},
            {"type": "WebSub", "url": "https://hub.example/"},
            "https://not-an-object.example/",
            7,
            None,
            [],
            {"type": "websub"},
            {"type": "websub", "url": 5},
            {"type": ["WebSub"], "url": "https://listtype.example/"},
            {"url": "https://untyped.example/"},
            {"type": "WebSub", "url": "javascript:alert(1)"},
            {"type": " WEBSUB ", "url": "/relative-hub"},
            {"type": "WebSub", "url": "https://hub.example"},
        ],
    )
    parsed = parse_feed(body, FETCHED, {}, NOW)
    assert parsed.hubs == ("https://hub.example/", "https://fetch.example.org/relative-hub")
    assert parsed.self_url == "https://fetch.example.org/blog/feed.json"
    assert len(parsed.entries) == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"hubs": "https://hub.example/"},
        {"hubs": {"type": "WebSub", "url": "https://hub.example/"}},
        {"hubs": None},
        {"feed_url": 5},
        {"feed_url": ["https://blog.example.org/feed.json"]},
        {"feed_url": "ftp://x.example/"},
    ],
)
def test_json_feed_garbage_advertises_nothing(fields: dict[str, Any]) -> None:
    parsed = parse_feed(json_feed(**fields), FETCHED, {}, NOW)
    assert (parsed.hubs, parsed.self_url) == ((), None)
    assert len(parsed.entries) == 1


def test_ten_thousand_hub_links_keep_four_and_garbage_ones_none(monkeypatch: pytest.MonkeyPatch) -> None:
    many = "".join(f'<link rel="hub" href="https://h{n}.example/"/>' for n in range(10_000))
    parsed, _ = parse_noting_path(ATOM.replace('<link rel="hub" href="/hub"/>', many).encode(), monkeypatch)
    assert parsed.hubs == tuple(f"https://h{n}.example/" for n in range(4))
    junk = "".join(f'<link rel="hub" href="javascript:{n}"/>' for n in range(10_000))
    parsed, _ = parse_noting_path(ATOM.replace('<link rel="hub" href="/hub"/>', junk).encode(), monkeypatch)
    assert parsed.hubs == ()  # the valid hubs after 10,000 bad ones are never looked at
    hubs = [{"type": "WebSub", "url": 5}] * 10_000 + [{"type": "WebSub", "url": "https://late.example/"}]
    assert parse_feed(json_feed(hubs=hubs), FETCHED, {}, NOW).hubs == ()


def test_advertised_reads_a_parsed_feed_and_the_headers_together() -> None:
    parsed = parse_feed(rss_with_links(), FETCHED, {}, NOW)
    found = advertised({"link": '<https://head.example/hub>; rel="hub"'}, parsed, FETCHED)
    assert found == Advertised(
        ("https://head.example/hub", "https://hub.example.org/", "https://fetch.example.org/blog/hub2"),
        "https://blog.example.org/rss",
    )


# --- fetch keeps the Link header -------------------------------------------------------

LINK_HEADERS = Headers(
    [("Link", '<https://hub.example/>; rel="hub"'), ("Link", '<https://blog.example.org/feed>; rel="self"')]
)


def test_fetch_keeps_the_link_headers(server: HTTPServer) -> None:
    body = rss(post(1)).encode()
    server.expect_request("/feed").respond_with_response(
        Response(body, headers=LINK_HEADERS, content_type="application/rss+xml")
    )
    with Fetcher("syndicator/test", timeout=2.0, retries=0) as fetcher:
        result = fetcher.fetch(FetchRequest(source=server.url_for("/feed"), url=server.url_for("/feed")))
    assert isinstance(result, Fetched)
    assert result.headers["link"] == '<https://hub.example/>; rel="hub", <https://blog.example.org/feed>; rel="self"'
    assert advertised(result.headers, None, result.url) == Advertised(
        ("https://hub.example/",), "https://blog.example.org/feed"
    )


def test_a_304_keeps_the_link_headers(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_response(Response(status=304, headers=LINK_HEADERS))
    with Fetcher("syndicator/test", timeout=2.0, retries=0) as fetcher:
        result = fetcher.fetch(FetchRequest(source=server.url_for("/feed"), url=server.url_for("/feed"), etag='"v1"'))
    assert isinstance(result, NotModified)
    assert advertised(result.headers, None, result.url) == Advertised(
        ("https://hub.example/",), "https://blog.example.org/feed"
    )


# --- signatures (WebSub section 8) ----------------------------------------------------

SECRET = "s3cr3t-\u00e9"
BODY = b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>x</title></feed>\n'


def sign(method: str, body: bytes = BODY, secret: str = SECRET) -> str:
    return f"{method}={hmac.new(secret.encode('utf-8'), body, getattr(hashlib, method)).hexdigest()}"


@pytest.mark.parametrize("method", websub.SIGNATURE_ALGORITHMS)
def test_every_algorithm_validates(method: str) -> None:
    assert signature_valid(sign(method), SECRET, BODY)
    assert not signature_valid(sign(method), "another secret", BODY)
    assert not signature_valid(sign(method), SECRET, BODY[:-2] + b"!\n")


def test_upper_case_hex_and_method_and_surrounding_space_are_accepted() -> None:
    header = sign("sha256")
    assert signature_valid(header.upper(), SECRET, BODY)
    assert signature_valid(f"  {header}\t", SECRET, BODY)


@pytest.mark.parametrize(
    "header",
    [
        pytest.param("md5=" + hmac.new(SECRET.encode(), BODY, hashlib.md5).hexdigest(), id="unknown-method"),
        pytest.param(sign("sha256").replace("=", ""), id="no-equals"),
        pytest.param("", id="empty"),
        pytest.param(None, id="none"),
        pytest.param("sha256=not-hex-at-all", id="non-hex"),
        pytest.param("sha256=" + sign("sha1").split("=")[1], id="sha1-digest-under-sha256"),
        pytest.param(sign("sha256") + "00", id="digest-too-long"),
        pytest.param(sign("sha256")[:-1], id="digest-too-short"),
        pytest.param("sha256 = " + sign("sha256").split("=")[1], id="space-around-equals"),
        pytest.param(sign("sha256") + ", " + sign("sha1"), id="two-values"),
        pytest.param("=" + sign("sha256").split("=")[1], id="no-method"),
        pytest.param(sign("sha256") + "=", id="trailing-equals"),
        pytest.param("sha256=" + "a" * 100_000, id="huge"),
    ],
)
def test_bad_signature_headers_are_invalid(header: str | None) -> None:
    assert not signature_valid(header, SECRET, BODY)


def test_a_signature_needs_a_secret_and_bytes() -> None:
    assert not signature_valid(sign("sha256", secret=""), "", BODY)
    assert not signature_valid(sign("sha256"), "\ud800", BODY)
    assert not signature_valid(sign("sha256", b""), SECRET, None)  # type: ignore[arg-type]
    assert not signature_valid(sign("sha256"), SECRET, BODY.decode())  # type: ignore[arg-type]
    assert signature_valid(sign("sha256"), SECRET, bytearray(BODY))


def test_secrets_and_tokens_are_random_url_safe_and_big_enough() -> None:
    secrets_made = {websub.new_secret() for _ in range(20)}
    tokens = {websub.new_token() for _ in range(20)}
    assert len(secrets_made) == 20 and len(tokens) == 20
    for value in secrets_made | tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]+", value)
        assert len(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))) >= 16  # >= 128 bits
    assert all(len(secret.encode()) < websub.SECRET_LIMIT for secret in secrets_made)


# --- requests to a hub ----------------------------------------------------------------------


@pytest.fixture
def session() -> Iterator[requests.Session]:
    with requests.Session() as made:
        made.trust_env = False
        yield made


class Recorder:
    """A hub handler answering ``response`` and keeping each request's method, content type and form."""

    def __init__(self, response: Response) -> None:
        self.response = response
        self.seen: list[tuple[str, str, list[tuple[str, str]]]] = []

    def __call__(self, request: Request) -> Response:
        form = parse_qsl(request.get_data(as_text=True), keep_blank_values=True, strict_parsing=True)
        self.seen.append((request.method, request.headers.get("Content-Type", ""), form))
        return self.response


def hub(server: HTTPServer, response: Response, path: str = "/hub") -> Recorder:
    recorder = Recorder(response)
    server.expect_request(path).respond_with_handler(recorder)
    return recorder


def test_subscribe_sends_exactly_the_form_and_202_is_accepted(server: HTTPServer, session: requests.Session) -> None:
    recorder = hub(server, Response("", status=202))
    answer = request_subscription(
        session,
        server.url_for("/hub"),
        mode="subscribe",
        topic="https://blog.example/f",
        callback="https://planet.example/websub/tok",
        secret="abc",
        lease_seconds=86400,
    )
    assert answer == websub.HubAnswer(True, 202, "202 Accepted")
    assert recorder.seen == [
        (
            "POST",
            "application/x-www-form-urlencoded",
            [
                ("hub.mode", "subscribe"),
                ("hub.topic", "https://blog.example/f"),
                ("hub.callback", "https://planet.example/websub/tok"),
                ("hub.secret", "abc"),
                ("hub.lease_seconds", "86400"),
            ],
        )
    ]


def test_unsubscribe_without_secret_or_lease(server: HTTPServer, session: requests.Session) -> None:
    recorder = hub(server, Response("ok", status=204))
    answer = request_subscription(
        session,
        server.url_for("/hub"),
        mode="unsubscribe",
        topic="https://b.example/?a=1&b",
        callback="https://planet.example/websub/t",
    )
    assert (answer.accepted, answer.status, answer.message) == (True, 204, "204 No Content")
    assert recorder.seen[0][2] == [
        ("hub.mode", "unsubscribe"),
        ("hub.topic", "https://b.example/?a=1&b"),
        ("hub.callback", "https://planet.example/websub/t"),
    ]


def test_publish_repeats_hub_url_and_hub_topic(server: HTTPServer, session: requests.Session) -> None:
    recorder = hub(server, Response("", status=202))
    answer = notify_publish(session, server.url_for("/hub"), ["https://p.example/feed.xml", "https://p.example/j"])
    assert answer.accepted
    assert recorder.seen == [
        (
            "POST",
            "application/x-www-form-urlencoded",
            [
                ("hub.mode", "publish"),
                ("hub.url", "https://p.example/feed.xml"),
                ("hub.url", "https://p.example/j"),
                ("hub.topic", "https://p.example/feed.xml"),
                ("hub.topic", "https://p.example/j"),
            ],
        )
    ]
    notify_publish(session, server.url_for("/hub"), "https://p.example/one")  # one str is one topic
    assert recorder.seen[1][2] == [
        ("hub.mode", "publish"),
        ("hub.url", "https://p.example/one"),
        ("hub.topic", "https://p.example/one"),
    ]


def test_a_refusal_carries_the_first_line_of_the_body(server: HTTPServer, session: requests.Session) -> None:
    hub(server, Response("\n  \n  Topic \x1b not\tallowed  \nsecond line\n", status=400))
    answer = notify_publish(session, server.url_for("/hub"), ["https://p.example/feed"])
    assert answer == websub.HubAnswer(False, 400, "hub answered 400: Topic not allowed")


def test_a_refusal_without_body_names_the_status_and_a_long_line_is_cut(
    server: HTTPServer, session: requests.Session
) -> None:
    hub(server, Response("", status=404))
    answer = notify_publish(session, server.url_for("/hub"), ["https://p.example/f"])
    assert answer.message == "hub answered 404 Not Found"
    server.clear()
    hub(server, Response("x" * 100_000, status=422))
    answer = notify_publish(session, server.url_for("/hub"), ["https://p.example/f"])
    assert answer.message == "hub answered 422: " + "x" * websub.MESSAGE_CHARS
    server.clear()
    hub(server, Response(b"\x1f\x8b\x08garbage\n", status=400, headers={"Content-Encoding": "gzip"}))
    answer = notify_publish(session, server.url_for("/hub"), ["https://p.example/f"])
    assert answer.message == "hub answered 400 Bad Request"  # a compressed body is not shown


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        pytest.param(503, {"Retry-After": "120"}, 120.0, id="503-seconds"),
        pytest.param(429, {"Retry-After": "7"}, 7.0, id="429-seconds"),
        pytest.param(503, {}, None, id="503-without"),
        pytest.param(500, {"Retry-After": "120"}, None, id="500-ignored"),
        pytest.param(503, {"Retry-After": "\u00b2"}, None, id="superscript-digit"),
        pytest.param(503, {"Retry-After": "9" * 400}, None, id="too-large"),
        pytest.param(503, {"Retry-After": "Fri, 31 Dec 9999 23:59:59 -0100"}, None, id="date-out-of-range"),
    ],
)
def test_retry_after(
    server: HTTPServer, session: requests.Session, status: int, headers: dict[str, str], expected: float | None
) -> None:
    hub(server, Response("busy", status=status, headers=headers))
    answer = request_subscription(
        session, server.url_for("/hub"), mode="subscribe", topic="https://t.example/", callback="https://c.example/"
    )
    assert (answer.accepted, answer.status, answer.retry_after) == (False, status, expected)


@responses.activate
def test_a_retry_after_date_is_measured_from_the_hub_date(session: requests.Session) -> None:
    # The loopback server adds a Date of its own; responses sends exactly these headers.
    responses.post(
        "https://hub.example/",
        status=429,
        headers={"Retry-After": "Mon, 30 Nov 2026 12:01:00 GMT", "Date": "Mon, 30 Nov 2026 12:00:00 GMT"},
    )
    answer = notify_publish(session, "https://hub.example/", ["https://p.example/f"])
    assert (answer.accepted, answer.status, answer.retry_after) == (False, 429, 60.0)


def test_parse_retry_after_never_raises_on_what_servers_send() -> None:
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert parse_retry_after("\u00b2", now) is None
    assert parse_retry_after("9" * 400, now) is None
    assert parse_retry_after("Fri, 31 Dec 9999 23:59:59 -0100", now) is None
    assert parse_retry_after(" 30 ", now) == 30.0
    assert parse_retry_after("Mon, 30 Nov 2026 12:00:30 GMT", now) == 30.0


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connection_refused_is_an_answer_without_status(session: requests.Session) -> None:
    answer = request_subscription(
        session,
        f"http://127.0.0.1:{closed_port()}/hub",
        mode="subscribe",
        topic="https://t.example/",
        callback="https://c.example/",
        timeout=2.0,
    )
    assert (answer.accepted, answer.status) == (False, None)
    assert answer.message.startswith("could not connect: ")


def test_a_hub_that_does_not_answer_in_time(
    server: HTTPServer, session: requests.Session, release: threading.Event
) -> None:
    def slow(request: Request) -> Response:
        release.wait(10)
        return Response("", status=202)

    server.expect_request("/hub").respond_with_handler(slow)
    answer = notify_publish(session, server.url_for("/hub"), ["https://p.example/f"], timeout=0.5)
    assert answer == websub.HubAnswer(False, None, "no answer within 0.5 s")


def test_307_and_308_are_followed_with_the_same_post(server: HTTPServer, session: requests.Session) -> None:
    first = hub(server, Response("", status=307, headers={"Location": "/moved"}))
    second = hub(server, Response("", status=308, headers={"Location": server.url_for("/final")}), "/moved")
    final = hub(server, Response("", status=202), "/final")
    answer = notify_publish(session, server.url_for("/hub"), ["https://p.example/f"])
    assert answer == websub.HubAnswer(True, 202, "202 Accepted")
    assert first.seen == second.seen == final.seen
    assert final.seen[0][0] == "POST" and len(final.seen) == 1


@pytest.mark.parametrize("status", [301, 302, 303])
def test_other_redirects_are_not_followed(server: HTTPServer, session: requests.Session, status: int) -> None:
    hub(server, Response("", status=status, headers={"Location": "/elsewhere"}))
    elsewhere = hub(server, Response("", status=202), "/elsewhere")
    answer = notify_publish(session, server.url_for("/hub"), ["https://p.example/f"])
    assert (answer.accepted, answer.status) == (False, status)
    assert elsewhere.seen == []


def test_at_most_three_redirects(server: HTTPServer, session: requests.Session) -> None:
    loop = hub(server, Response("", status=307, headers={"Location": "/hub"}))
    answer = notify_publish(session, server.url_for("/hub"), ["https://p.example/f"])
    assert (answer.accepted, answer.status) == (False, 307)
    assert "more than 3 redirects" in answer.message
    assert len(loop.seen) == websub.MAX_HUB_REDIRECTS + 1


@responses.activate
def test_no_redirect_from_https_to_http(session: requests.Session) -> None:
    responses.post("https://hub.example/", status=307, headers={"Location": "http://hub.example/"})
    plain = responses.post("http://hub.example/", status=202)
    answer = request_subscription(
        session,
        "https://hub.example/",
        mode="subscribe",
        topic="https://t.example/",
        callback="https://c.example/",
        secret="abc",
    )
    assert (answer.accepted, answer.status) == (False, 307)
    assert "from https" in answer.message
    assert plain.call_count == 0


def test_an_unusable_hub_url_is_answered_without_a_request(session: requests.Session) -> None:
    for bad in ("javascript:alert(1)", "ftp://hub.example/", "https://[oops/", ""):
        answer = notify_publish(session, bad, ["https://p.example/f"])
        assert (answer.accepted, answer.status) == (False, None)
        assert answer.message.startswith("not an http(s) hub URL")


@pytest.mark.parametrize(
    "options",
    [
        {"mode": "publish"},
        {"mode": "Subscribe"},
        {"secret": "x" * 200},
        {"secret": "\u00e9" * 100},
        {"lease_seconds": 0},
        {"lease_seconds": True},
        {"lease_seconds": 1.5},
        {"topic": "https://t.example/\ud800"},
    ],
)
def test_caller_mistakes_raise_value_error(session: requests.Session, options: dict[str, Any]) -> None:
    arguments: dict[str, Any] = {
        "mode": "subscribe",
        "topic": "https://t.example/",
        "callback": "https://c.example/",
        **options,
    }
    with pytest.raises(ValueError):
        request_subscription(session, "http://127.0.0.1:9/hub", **arguments)


def test_publishing_nothing_raises_value_error(session: requests.Session) -> None:
    with pytest.raises(ValueError):
        notify_publish(session, "http://127.0.0.1:9/hub", [])


# --- hostile input -------------------------------------------------------------------------

PIECES = [
    "<",
    ">",
    ";",
    ",",
    "=",
    '"',
    "\\",
    " ",
    "\t",
    "rel",
    "hub",
    "self",
    "anchor",
    "HUB",
    "https://h.example/",
    "javascript:x",
    "/rel",
    "http://[oops/",
    "https://a.example:99999/",
    "\ud800",
    "\x00",
    "é",
    "'",
]
header_text = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=40).map("".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=header_text,
    others=st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=3),
    hubs=st.lists(st.one_of(header_text, st.sampled_from(PIECES)), max_size=6),
    self_url=st.one_of(st.none(), header_text),
    base=st.one_of(st.sampled_from([URL, "", "http://[oops/"]), header_text),
)
def test_advertised_never_raises_and_keeps_only_web_urls(
    value: str, others: dict[str, str], hubs: list[str], self_url: str | None, base: str
) -> None:
    found = advertised({**others, "Link": value}, feed(tuple(hubs), self_url), base)
    assert len(found.hubs) <= MAX_HUBS
    assert all(is_http_url(url) for url in (*found.hubs, *filter(None, [found.topic])))


json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(PIECES + ["WebSub"])),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["type", "url", "x"]), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(hubs=json_value, feed_url=json_value, signature=header_text)
def test_json_feed_hubs_and_signatures_never_raise(hubs: Any, feed_url: Any, signature: str) -> None:
    parsed = parse_feed(json_feed(hubs=hubs, feed_url=feed_url), FETCHED, {}, NOW)
    assert all(is_http_url(url) for url in (*parsed.hubs, *filter(None, [parsed.self_url])))
    assert not signature_valid(signature, SECRET, BODY)
