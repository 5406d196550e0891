"""HTTP answers real servers give that are easy to get wrong, against a loopback server.

Content codings that lie, a 304 to a request without validators, 401/403,
cookies inside one redirect chain, and a feed URL that answers with an
HTML page advertising feeds.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import Result
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.failures import KINDS
from syndicator.fetch.coding import CorruptBody, Decoder, TooLarge
from syndicator.fetch.http import Fetcher
from syndicator.model import Failed, Fetched, FetchRequest, NotModified, SourceState
from syndicator.parse.discover import Advertised, rank
from syndicator.poll import intervals, schedule

from .conftest import loopback_server, post, rss, write_config
from .polite_helpers import Feed, build, iso, later, run, site, status

#: No pacing, retry or long wait; the sites page with the maintainer's details, the failures these tests read.
FAST = {"host_gap": 0, "retries": 0, "timeout": 1, "sites_page_details": True}
UA = "syndicator/test (+https://planet.example.org/)"
DOC = rss(post(1), post(2, day=2)).encode()


def fetcher(max_bytes: int = 10 * 1024 * 1024, retries: int = 1, allow_private: bool = False) -> Fetcher:
    return Fetcher(UA, timeout=1.0, retries=retries, retry_delay=0.01, max_bytes=max_bytes, allow_private=allow_private)


def get(url: str) -> FetchRequest:
    return FetchRequest(source=url, url=url)


def hits(server: HTTPServer, path: str) -> int:
    return sum(1 for request, _response in server.log if request.path == path)


def run_build(config: Path, when: datetime) -> Result:
    """The real CLI's build at ``when``, its output kept apart (stdout, stderr)."""
    result = run("build", "--config", str(config), "--now", iso(when))
    assert result.exit_code == 0, result.output
    return result


def sites_row(tmp_path: Path, name: str) -> str:
    html = (tmp_path / "public" / "sites.html").read_text()
    (row,) = [row for row in html.split("<tr")[1:] if f">{name}<" in row]
    return row


# --- 1. content codings -------------------------------------------------------------------------


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        pytest.param("gzip", DOC, id="gzip-label-on-plain-xml"),
        pytest.param("x-gzip", DOC, id="x-gzip-label-on-plain-xml"),
        pytest.param("GZIP", b"\xef\xbb\xbf" + DOC, id="upper-case-label-on-a-bom"),
        pytest.param("deflate", DOC, id="deflate-label-on-plain-xml"),
        pytest.param("gzip", gzip.compress(DOC), id="real-gzip"),
        pytest.param("gzip", gzip.compress(DOC[:100]) + gzip.compress(DOC[100:]), id="two-gzip-members"),
        pytest.param("deflate", zlib.compress(DOC), id="zlib-deflate"),
        pytest.param("deflate", raw_deflate(DOC), id="raw-deflate"),
        pytest.param("identity", DOC, id="identity"),
        pytest.param("br", DOC, id="a-coding-never-asked-for-is-left-alone"),
    ],
)
def test_a_body_is_read_whether_or_not_it_is_really_compressed(server: HTTPServer, encoding: str, body: bytes) -> None:
    server.expect_request("/feed").respond_with_data(body, headers={"Content-Encoding": encoding})
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Fetched), result
    assert result.body.removeprefix(b"\xef\xbb\xbf") == DOC


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"\x1f\x8b" + b"not really gzip at all", id="magic-then-garbage"),
        pytest.param(gzip.compress(DOC)[:-30], id="cut-short"),
        pytest.param(b"\x1f\x8b", id="only-the-magic"),
    ],
)
def test_a_corrupt_compressed_body_is_its_own_failure_and_not_retried(server: HTTPServer, body: bytes) -> None:
    server.expect_request("/feed").respond_with_data(body, headers={"Content-Encoding": "gzip"})
    result = fetcher(retries=1).fetch(get(server.url_for("/feed")))
    assert isinstance(result, Failed)
    assert result.error.kind == "corrupt_encoding"
    assert "gzip" in result.error.message
    assert hits(server, "/feed") == 1


@pytest.mark.parametrize(
    ("body", "encoding"),
    [
        pytest.param(b"<" * 1026, "gzip", id="plain-body-labelled-gzip-over-the-cap"),
        pytest.param(gzip.compress(b"<" * 1026), "gzip", id="gzip-over-the-cap-once-decompressed"),
        pytest.param(zlib.compress(b"<" * 1026), "deflate", id="deflate-over-the-cap-once-decompressed"),
    ],
)
def test_the_cap_counts_the_bytes_the_parser_would_get(server: HTTPServer, body: bytes, encoding: str) -> None:
    server.expect_request("/feed").respond_with_data(body, headers={"Content-Encoding": encoding})
    result = fetcher(max_bytes=1025).fetch(get(server.url_for("/feed")))
    assert isinstance(result, Failed) and result.error.kind == "too_large"
    server.clear()
    server.expect_request("/feed").respond_with_data(body, headers={"Content-Encoding": encoding})
    assert isinstance(fetcher(max_bytes=1026).fetch(get(server.url_for("/feed"))), Fetched)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("plain", [False, True])
def test_the_decoder_gives_the_same_bytes_however_the_body_is_cut(encoding: str, plain: bool) -> None:
    packed = DOC if plain else (gzip.compress(DOC) if encoding == "gzip" else zlib.compress(DOC))
    for size in (1, 2, 3, 7, 4096):
        decoder = Decoder(encoding, len(DOC))
        out = b"".join(decoder.feed(packed[i : i + size]) for i in range(0, len(packed), size)) + decoder.finish()
        assert out == DOC, size


def test_a_bomb_is_never_expanded_past_the_cap() -> None:
    decoder = Decoder("gzip", 1000)
    with pytest.raises(TooLarge):
        decoder.feed(gzip.compress(b"\0" * 10_000_000))
    assert decoder.size <= 1001


def test_a_corrupt_body_raises_on_the_first_bad_bytes() -> None:
    with pytest.raises(CorruptBody):
        Decoder("gzip", 1000).feed(b"\x1f\x8b\x08\x00garbage-garbage-garbage")


def test_a_corrupt_body_keeps_the_last_good_copy_and_says_so(server: HTTPServer, tmp_path: Path) -> None:
    good = Feed(server, "/ok.xml")
    feed = Feed(server, "/feed.xml", body=rss(post(7, host="packed.example.org")), etag=None)
    config = write_config(tmp_path, [site(good), site(feed, "Packed")], **FAST)
    assert build(config)["parsed"] == 2
    server.clear()
    server.expect_request("/ok.xml").respond_with_data(good.body)
    server.expect_request("/feed.xml").respond_with_data(
        b"\x1f\x8b\x08\x00\x00\x00broken", headers={"Content-Encoding": "gzip"}
    )
    report = build(config, later(days=1), "--force")
    assert report["failed_by_class"] == {"corrupt_encoding": 1}
    row = status(config, later(days=1))["Packed"]
    assert (row["health"], row["failure_class"]) == ("failing", "corrupt_encoding")
    assert "does not decompress" in row["failure_message"]
    html = sites_row(tmp_path, "Packed")
    assert "tell the publisher" in html and "last seen" not in html
    assert "packed.example.org/posts/7" in (tmp_path / "public" / "index.html").read_text()  # the copy stays


def test_the_docs_document_every_failure_kind() -> None:
    page = (Path(__file__).parent.parent / "docs" / "reference" / "failures.md").read_text(encoding="utf-8")
    for name in KINDS:
        assert f"| `{name}`" in page or f", `{name}`" in page, name


# --- 2. a 304 to a request without validators ---------------------------------------------------


def test_a_304_to_an_unconditional_request_is_a_protocol_failure(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_data("", status=304)
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Failed) and result.error.kind == "protocol"
    assert "no validators" in result.error.message
    assert hits(server, "/feed") == 1  # not retried


def test_a_304_to_a_conditional_request_is_still_not_modified(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_data("", status=304)
    url = server.url_for("/feed")
    result = fetcher().fetch(FetchRequest(source=url, url=url, etag='"v1"', validators_url=url))
    assert isinstance(result, NotModified)


def test_a_304_after_a_redirect_to_where_the_validators_are_not_bound_is_a_protocol_failure(server: HTTPServer) -> None:
    server.expect_request("/old").respond_with_data("", status=302, headers={"Location": "/new"})
    server.expect_request("/new").respond_with_data("", status=304)
    old = server.url_for("/old")
    result = fetcher().fetch(FetchRequest(source=old, url=old, etag='"v1"', validators_url=old))
    assert isinstance(result, Failed) and result.error.kind == "protocol"


def test_a_new_feed_answering_304_fails_and_is_never_called_ok(server: HTTPServer, tmp_path: Path) -> None:
    Feed(server, "/ok.xml")
    server.expect_request("/cached.xml").respond_with_data("", status=304)
    config = write_config(
        tmp_path,
        [{"name": "OK", "feed": server.url_for("/ok.xml")}, {"name": "Cached", "feed": server.url_for("/cached.xml")}],
        **FAST,
    )
    report = build(config)
    assert report["failed_by_class"] == {"protocol": 1} and report["status_304"] == 0
    build(config, later(hours=3), "--site", "Cached")
    row = status(config, later(hours=3))["Cached"]
    assert (row["health"], row["failure_class"], row["failures"], row["last_success"]) == (
        "failing",
        "protocol",
        2,
        None,
    )
    assert row["recent_changes"] == []
    html = sites_row(tmp_path, "Cached")
    assert "never worked" in html and "no validators" in html and "tell the publisher" in html


def test_a_feed_with_a_copy_and_no_validators_keeps_its_copy_on_a_bare_304(server: HTTPServer, tmp_path: Path) -> None:
    Feed(server, "/ok.xml")
    feed = Feed(server, "/plain.xml", body=rss(post(9, host="plain.example.org")), etag=None)  # no validators
    config = write_config(tmp_path, [{"name": "OK", "feed": server.url_for("/ok.xml")}, site(feed, "Plain")], **FAST)
    build(config)
    feed.status = 304
    report = build(config, later(hours=3), "--force")
    assert report["failed_by_class"] == {"protocol": 1}
    assert "If-None-Match" not in feed.requests[-1] and "If-Modified-Since" not in feed.requests[-1]
    row = status(config, later(hours=3))["Plain"]
    assert (row["health"], row["last_success"] is not None) == ("failing", True)
    assert row["recent_changes"] == []
    assert "plain.example.org/posts/9" in (tmp_path / "public" / "index.html").read_text()


# --- 3. 401 and 403: the slow ladder, not a hold -----------------------------------------------


@pytest.mark.parametrize("code", [401, 403])
def test_access_denied_climbs_the_slow_ladder_and_recovers(server: HTTPServer, tmp_path: Path, code: int) -> None:
    Feed(server, "/ok.xml")
    wall = Feed(server, "/wall.xml", body=rss(post(3, host="wall.example.org")), status=code, etag=None)
    config = write_config(tmp_path, [{"name": "OK", "feed": server.url_for("/ok.xml")}, site(wall, "Wall")], **FAST)
    first = run_build(config, later())
    assert "access denied" in first.stderr and "not requested again" not in first.stderr
    seen, when = [], later()
    for _ in range(4):
        row = status(config, when)["Wall"]
        seen.append(row["interval_seconds"])
        assert (row["health"], row["failure_class"], row["due_now"]) == ("denied", "http_401", False)
        assert row["next_due"] is not None and "slow ladder" in row["reason"]
        when = datetime.fromisoformat(row["next_due"]) + timedelta(seconds=1)
        build(config, when)
    assert seen == [3600, 4 * 3600, 16 * 3600, 64 * 3600]
    assert len(wall.requests) == 5
    assert "access denied" in sites_row(tmp_path, "Wall")
    wall.status = 200  # the wall lifts
    when = datetime.fromisoformat(status(config, when)["Wall"]["next_due"]) + timedelta(seconds=1)
    build(config, when)
    row = status(config, when)["Wall"]
    assert (row["health"], row["failures"]) == ("ok", 0)
    assert "wall.example.org/posts/3" in (tmp_path / "public" / "index.html").read_text()


def test_access_denied_waits_at_most_a_week() -> None:
    state = SourceState("https://a.example/feed", "https://a.example/feed", failures=40, error_kind="http_401")
    plan = intervals.plan(state, later(), schedule.Policy())
    assert plan.interval == 7 * 86400.0 and plan.next_attempt is not None


def test_a_hold_an_older_version_stored_for_a_403_is_released() -> None:
    url = "https://a.example/feed"
    old = SourceState(url, url, failures=1, error_kind="http_401", hold="abc", next_attempt=None)
    assert not schedule.on_hold(old) and schedule.is_due(old, later(), "abc")
    gone = replace(old, error_kind="http_410")
    assert schedule.on_hold(gone) and not schedule.is_due(gone, later(days=400), "abc")


# --- 4. cookies within one redirect chain --------------------------------------------------------


def cookie_gate(server: HTTPServer, path: str = "/gated.xml", cookie: str = "gate=passed; Path=/") -> None:
    """``path`` redirects to itself setting a cookie, and serves the feed once the cookie comes back."""

    def answer(request: Request) -> Response:
        if request.cookies.get("gate") == "passed":
            return Response(DOC, content_type="application/rss+xml")
        return Response("", status=302, headers={"Location": path, "Set-Cookie": cookie})

    server.expect_request(path).respond_with_handler(answer)


def cookie_headers(server: HTTPServer, path: str) -> list[str | None]:
    return [request.headers.get("Cookie") for request, _response in server.log if request.path == path]


def test_a_cookie_set_by_a_redirect_is_sent_on_the_next_hop_and_never_again(server: HTTPServer) -> None:
    cookie_gate(server)
    fetch = fetcher(retries=0)
    for _ in range(2):  # the same thread, the same session: the second fetch starts with no cookie
        result = fetch.fetch(get(server.url_for("/gated.xml")))
        assert isinstance(result, Fetched) and result.body == DOC and result.requests == 2
    assert cookie_headers(server, "/gated.xml") == [None, "gate=passed", None, "gate=passed"]


def test_a_cookie_gated_feed_builds_and_the_next_build_starts_without_cookies(
    server: HTTPServer, tmp_path: Path
) -> None:
    cookie_gate(server)
    config = write_config(tmp_path, [{"name": "Gated", "feed": server.url_for("/gated.xml")}], **FAST)
    assert build(config)["parsed"] == 1
    assert build(config, later(days=1), "--force")["failed"] == 0
    assert cookie_headers(server, "/gated.xml") == [None, "gate=passed", None, "gate=passed"]


@pytest.mark.parametrize(
    "cookie",
    [
        pytest.param("gate=passed; Path=/members", id="another-path"),
        pytest.param("gate=passed; Path=/; Domain=elsewhere.example.org", id="another-domain"),
        pytest.param("gate=passed; Path=/; Secure", id="secure-over-http"),
        pytest.param("gate=passed; Path=/; Max-Age=0", id="already-expired"),
    ],
)
def test_a_cookie_that_does_not_match_the_next_hop_is_not_sent(server: HTTPServer, cookie: str) -> None:
    cookie_gate(server, cookie=cookie)
    result = fetcher(retries=0).fetch(get(server.url_for("/gated.xml")))
    assert isinstance(result, Failed) and result.error.kind == "redirect" and "loop" in result.error.message
    assert set(cookie_headers(server, "/gated.xml")) == {None}  # rejected (one request) or stored unsent (two)


def test_a_cookie_is_not_sent_to_another_host(server: HTTPServer) -> None:
    with loopback_server("127.0.0.2") as other:
        other.expect_request("/feed.xml").respond_with_data(DOC)
        server.expect_request("/start").respond_with_data(
            "", status=302, headers={"Location": other.url_for("/feed.xml"), "Set-Cookie": "gate=passed; Path=/"}
        )
        # 127.0.0.2 is another host, and private: allowed here, as allow_private_networks would
        result = fetcher(retries=0, allow_private=True).fetch(get(server.url_for("/start")))
        assert isinstance(result, Fetched)
        assert [request.headers.get("Cookie") for request, _ in other.log] == [None]


def test_a_redirect_that_sets_the_same_cookie_again_is_still_a_loop(server: HTTPServer) -> None:
    server.expect_request("/loop").respond_with_data(
        "", status=302, headers={"Location": "/loop", "Set-Cookie": "n=1; Path=/"}
    )
    result = fetcher(retries=0).fetch(get(server.url_for("/loop")))
    assert isinstance(result, Failed) and "redirect loop" in result.error.message
    assert hits(server, "/loop") == 2


# --- 5. a feed URL that answers with an HTML page advertising feeds -------------------------------


def page(*feeds: tuple[str, str]) -> str:
    """An HTML page advertising ``feeds``, each (type, href)."""
    links = "".join(f'<link rel="alternate" type="{kind}" href="{href}" title="t">' for kind, href in feeds)
    return f"<!DOCTYPE html><html><head><title>A blog</title>{links}</head><body><p>Hello</p></body></html>"


RSS_TYPE, ATOM_TYPE, JSON_TYPE = "application/rss+xml", "application/atom+xml", "application/feed+json"


@pytest.mark.parametrize(
    ("url", "feeds", "chosen"),
    [
        pytest.param(
            "https://a.org/topics/rust/",
            ["https://a.org/feed/", "https://a.org/comments/feed/", "https://a.org/topics/rust/feed/"],
            "https://a.org/topics/rust/feed/",
            id="a-topic-feed-before-site-wide-ones",
        ),
        pytest.param(
            "https://a.org/tags/py",
            ["https://a.org/feed.xml", "https://a.org/tags/py.atom"],
            "https://a.org/tags/py.atom",
            id="a-tag-feed-beside-its-page",
        ),
        pytest.param(
            "https://a.org/blog/index.html",
            ["https://a.org/feed.xml", "https://b.org/blog/feed.xml", "https://a.org/blog/atom.xml"],
            "https://a.org/blog/atom.xml",
            id="same-host-only",
        ),
        pytest.param(
            "https://a.org/",
            ["https://a.org/feed.json", "https://a.org/feed.xml"],
            "https://a.org/feed.json",
            id="the-root-takes-the-first-advertised",
        ),
        pytest.param(
            "https://a.org/rustacean/",
            ["https://a.org/feed.xml", "https://a.org/rust/feed.xml"],
            "https://a.org/feed.xml",
            id="a-shared-prefix-of-letters-is-not-a-shared-path",
        ),
        pytest.param("https://a.org/x/", [], None, id="nothing-advertised"),
    ],
)
def test_rank_puts_the_page_s_own_feed_first(url: str, feeds: list[str], chosen: str | None) -> None:
    assert (rank(url, [Advertised(feed, "t", RSS_TYPE) for feed in feeds]) or [None])[0] == chosen


def test_an_html_page_is_followed_to_the_feed_it_advertises(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/blog/").respond_with_data(
        page((RSS_TYPE, "/feed.xml"), (ATOM_TYPE, "/comments/feed.xml"), (RSS_TYPE, "/blog/feed.xml")),
        content_type="text/html",
    )
    blog = Feed(server, "/blog/feed.xml", body=rss(post(4, host="topic.example.org")), etag='"b1"')
    everything = Feed(server, "/feed.xml", body=rss(post(5, host="all.example.org")))
    config = write_config(tmp_path, [{"name": "Topic", "feed": server.url_for("/blog/")}], **FAST)
    first = run_build(config, later())
    assert "site 'Topic'" in first.stderr and f"followed the feed it advertises, {blog.url}" in first.stderr
    assert "put that URL in sites.yaml" in first.stderr
    index = (tmp_path / "public" / "index.html").read_text()
    assert "topic.example.org/posts/4" in index and "all.example.org" not in index
    assert everything.requests == [] and len(blog.requests) == 1
    row = status(config, later())["Topic"]
    assert (row["health"], row["discovered"], row["failure_class"]) == ("ok", blog.url, None)
    assert "put that URL in sites.yaml" in sites_row(tmp_path, "Topic") and blog.url in sites_row(tmp_path, "Topic")
    text = run("status", "--config", str(config), "--now", iso(later())).stdout
    assert f"followed the feed it advertises: {blog.url}" in text
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert (report["followed_from_pages"], report["requests"], report["parsed"]) == (1, 2, 1)
    # The next build asks the page again (no validators: they belong to the feed), then the feed conditionally.
    second = run_build(config, later(days=1))
    assert "followed" not in second.stderr  # said once; -v repeats it
    assert blog.requests[-1]["If-None-Match"] == '"b1"'
    page_requests = [request for request, _ in server.log if request.path == "/blog/"]
    assert [r.headers.get("If-None-Match") for r in page_requests] == [None, None]
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert (report["status_304"], report["failed"], report["followed_from_pages"]) == (1, 0, 1)
    verbose = run("build", "--config", str(config), "--now", iso(later(days=2)), "-v")
    assert "info: site 'Topic': its feed URL" in verbose.stderr


def test_discovery_follows_one_hop_only(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/a").respond_with_data(page((RSS_TYPE, "/b")), content_type="text/html")
    server.expect_request("/b").respond_with_data(page((RSS_TYPE, "/c")), content_type="text/html")
    server.expect_request("/c").respond_with_data(DOC, content_type="application/rss+xml")
    Feed(server, "/ok.xml")
    config = write_config(
        tmp_path,
        [{"name": "OK", "feed": server.url_for("/ok.xml")}, {"name": "Pages", "feed": server.url_for("/a")}],
        **FAST,
    )
    report = build(config)
    assert report["failed_by_class"] == {"not_a_feed": 1}
    assert (hits(server, "/a"), hits(server, "/b"), hits(server, "/c")) == (1, 1, 0)
    row = status(config)["Pages"]
    assert (row["discovered"], row["failure_class"]) == (server.url_for("/b"), "not_a_feed")
    text = run("status", "--config", str(config), "--now", iso(later())).stdout
    assert f"followed the feed it advertises: {server.url_for('/b')} (it failed too)" in text
    sites = (tmp_path / "public" / "sites.html").read_text()
    assert "which failed too" in sites and "put that URL in sites.yaml" not in sites  # no advice to use a non-feed


@pytest.mark.parametrize(
    ("setup", "kind"),
    [
        pytest.param(
            lambda s: s.expect_request("/feed.xml").respond_with_data(
                "", status=302, headers={"Location": "/feed.xml"}
            ),
            "redirect",
            id="a-redirect-loop",
        ),
        pytest.param(
            lambda s: s.expect_request("/feed.xml").respond_with_data(b"<" * 70_000), "too_large", id="too-large"
        ),
        pytest.param(
            lambda s: s.expect_request("/feed.xml").respond_with_data("gone", status=404), "http_404", id="missing"
        ),
    ],
)
def test_the_followed_feed_passes_every_fetch_rule(server: HTTPServer, tmp_path: Path, setup, kind: str) -> None:  # type: ignore[no-untyped-def]
    server.expect_request("/").respond_with_data(page((RSS_TYPE, "/feed.xml")), content_type="text/html")
    setup(server)
    Feed(server, "/ok.xml")
    config = write_config(
        tmp_path,
        [{"name": "OK", "feed": server.url_for("/ok.xml")}, {"name": "Home", "feed": server.url_for("/")}],
        max_bytes=65536,
        **FAST,
    )
    assert build(config)["failed_by_class"] == {kind: 1}
    row = status(config)["Home"]
    assert (row["discovered"], row["failure_class"]) == (server.url_for("/feed.xml"), kind)


def test_a_follow_with_no_time_left_sends_nothing(server: HTTPServer) -> None:
    server.expect_request("/feed.xml").respond_with_data(DOC)
    result = fetcher().fetch(get(server.url_for("/feed.xml")), budget=0)
    assert isinstance(result, Failed) and result.error.kind == "timeout" and result.requests == 0
    assert hits(server, "/feed.xml") == 0


def test_a_page_that_turns_into_a_feed_is_no_longer_called_discovered(server: HTTPServer, tmp_path: Path) -> None:
    served = {"body": page((RSS_TYPE, "/feed.xml")), "type": "text/html"}
    server.expect_request("/home").respond_with_handler(
        lambda request: Response(served["body"], content_type=served["type"])
    )
    server.expect_request("/feed.xml").respond_with_data(DOC, content_type="application/rss+xml")
    config = write_config(tmp_path, [{"name": "Home", "feed": server.url_for("/home")}], **FAST)
    build(config)
    assert status(config)["Home"]["discovered"] == server.url_for("/feed.xml")
    served.update(body=rss(post(8)), type="application/rss+xml")
    build(config, later(days=1), "--force")
    row = status(config, later(days=1))["Home"]
    assert (row["discovered"], row["health"]) == (None, "ok")
    assert "followed" not in sites_row(tmp_path, "Home")
