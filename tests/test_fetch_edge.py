"""The outbound-HTTP edge: content codings (br, nested gzip, unknown), private networks, credentials.

Every server listens on loopback. A learned URL that points at a non-loopback
private address (10.x, 169.254.169.254) is refused before any connection, so
no traffic leaves the machine; the "private" targets actually served are a
second server on 127.0.0.2, and names a patched resolver maps to it.
"""

from __future__ import annotations

import gzip
import json
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import brotli
import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer
from werkzeug import Response

from syndicator.cli import main
from syndicator.fetch import netguard
from syndicator.fetch.http import Fetcher
from syndicator.fetch.outbound import new_session
from syndicator.model import Failed, Fetched, FetchRequest
from syndicator.push.websub import request_subscription

from .conftest import build, loopback_server, post, rss, write_config

UA = "syndicator-test/1.0 (+https://planet.example.org/)"
DOC = rss(post(1)).encode()


def fetcher(allow_private: bool = False, resolver: Any = socket.getaddrinfo) -> Fetcher:
    return Fetcher(
        UA,
        timeout=1.0,
        retries=0,
        retry_delay=0.01,
        max_bytes=64 * 1024,
        allow_private=allow_private,
        resolver=resolver,
    )


def get(url: str) -> FetchRequest:
    return FetchRequest(source=url, url=url)


def coded(body: bytes, coding: str) -> Response:
    return Response(body, headers={"Content-Type": "application/rss+xml", "Content-Encoding": coding})


def to_loopback_2(names: dict[str, str]) -> Any:
    """A resolver that answers ``names`` (name -> address) itself and asks the system for the rest."""

    def resolve(host: str, port: int, family: int, kind: int) -> Sequence[tuple[Any, ...]]:
        if host in names:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host], port))]
        return socket.getaddrinfo(host, port, family, kind)

    return resolve


# --- content codings -----------------------------------------------------------------------------


def test_brotli_is_asked_for_and_decoded(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_response(coded(brotli.compress(DOC), "br"))
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Fetched) and result.body == DOC
    assert server.log[0][0].headers["Accept-Encoding"] == "gzip, br"


def test_a_body_labelled_br_that_is_not_compressed_is_used_as_sent(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_response(coded(DOC, "br"))
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Fetched) and result.body == DOC


def test_a_brotli_bomb_stops_at_max_bytes(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_response(coded(brotli.compress(b" " * 50_000_000), "br"))
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Failed) and result.error.kind == "too_large"


@pytest.mark.parametrize("layers", [2, 3])
def test_a_body_gzipped_again_is_decoded_again(server: HTTPServer, layers: int) -> None:
    body = DOC
    for _ in range(layers):
        body = gzip.compress(body)
    server.expect_request("/feed").respond_with_response(coded(body, "gzip"))
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Fetched) and result.body == DOC


def test_a_fourth_gzip_layer_is_left_as_it_is(server: HTTPServer) -> None:
    body = DOC
    for _ in range(4):
        body = gzip.compress(body)
    server.expect_request("/feed").respond_with_response(coded(body, "gzip"))
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Fetched) and result.body[:2] == b"\x1f\x8b"


def test_the_size_cap_applies_to_every_gzip_layer(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_response(coded(gzip.compress(gzip.compress(b" " * 5_000_000)), "gzip"))
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Failed) and result.error.kind == "too_large"


def test_an_unknown_coding_is_named(server: HTTPServer) -> None:
    server.expect_request("/feed").respond_with_response(coded(b"\x28\xb5\x2f\xfd...", "xyz"))
    result = fetcher().fetch(get(server.url_for("/feed")))
    assert isinstance(result, Failed)
    assert (result.error.kind, result.error.message) == ("unsupported_encoding", "unsupported Content-Encoding: xyz")


def test_a_build_reads_unsolicited_brotli_and_names_an_unknown_coding(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/br").respond_with_response(coded(brotli.compress(DOC), "br"))
    server.expect_request("/zstd").respond_with_response(coded(b"\x28\xb5\x2f\xfd", "zstd"))
    config = write_config(
        tmp_path,
        [
            {"name": "Br", "feed": server.url_for("/br"), "link": "https://a.example/"},
            {"name": "Z", "feed": server.url_for("/zstd"), "link": "https://b.example/"},
        ],
    )
    result = build(config)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert report["failed_by_class"] == {"unsupported_encoding": 1}
    assert "unsupported Content-Encoding: zstd" in result.stderr


# --- private networks: redirects -----------------------------------------------------------------


def test_a_redirect_to_another_loopback_host_is_refused_before_connecting(server: HTTPServer) -> None:
    with loopback_server("127.0.0.2") as other:
        other.expect_request("/feed").respond_with_data(DOC)
        server.expect_request("/start").respond_with_data("", status=301, headers={"Location": other.url_for("/feed")})
        result = fetcher().fetch(get(server.url_for("/start")))
        assert isinstance(result, Failed) and result.error.kind == "private_address"
        assert "127.0.0.2 is not a public address" in result.error.message
        assert other.log == []


def test_allow_private_follows_it(server: HTTPServer) -> None:
    with loopback_server("127.0.0.2") as other:
        other.expect_request("/feed").respond_with_data(DOC)
        server.expect_request("/start").respond_with_data("", status=301, headers={"Location": other.url_for("/feed")})
        result = fetcher(allow_private=True).fetch(get(server.url_for("/start")))
        assert isinstance(result, Fetched) and len(other.log) == 1


def test_a_redirect_on_the_same_host_is_trusted(server: HTTPServer) -> None:
    with loopback_server("127.0.0.1") as other:  # another port of the host sites.yaml names
        other.expect_request("/feed").respond_with_data(DOC)
        server.expect_request("/start").respond_with_data("", status=302, headers={"Location": other.url_for("/feed")})
        result = fetcher().fetch(get(server.url_for("/start")))
        assert isinstance(result, Fetched)


@pytest.mark.parametrize(
    "target",
    [
        "http://10.0.0.1/feed",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0:1/",
        "http://[::ffff:127.0.0.2]:1/",
        "http://[::1]:1/",
        "http://localhost:1/",
        "http://192.168.1.1/",
        "http://[fe80::1]/",
        "http://224.0.0.1/",
    ],
)
def test_a_redirect_to_a_private_literal_is_refused_without_a_request(server: HTTPServer, target: str) -> None:
    server.expect_request("/start").respond_with_data("", status=302, headers={"Location": target})
    result = fetcher().fetch(get(server.url_for("/start")))
    assert isinstance(result, Failed) and result.error.kind == "private_address"
    assert result.requests == 1  # the redirect only


def test_a_name_that_resolves_to_a_private_address_is_refused(server: HTTPServer) -> None:
    with loopback_server("127.0.0.2") as other:
        other.expect_request("/feed").respond_with_data(DOC)
        target = f"http://internal.test:{other.port}/feed"
        server.expect_request("/start").respond_with_data("", status=302, headers={"Location": target})
        result = fetcher(resolver=to_loopback_2({"internal.test": "127.0.0.2"})).fetch(get(server.url_for("/start")))
        assert isinstance(result, Failed) and result.error.kind == "private_address"
        assert "internal.test (127.0.0.2) is not a public address" in result.error.message
        assert other.log == []


def test_a_kept_connection_to_a_trusted_host_is_not_reused_for_a_learned_url(server: HTTPServer) -> None:
    """Source A (a.test, trusted for A) leaves a kept-alive connection; source B redirects to a.test:
    the pooled connection is screened by its peer, so B's redirect never reaches it."""
    server.expect_request("/a").respond_with_data(DOC)
    names = {"a.test": "127.0.0.1", "b.test": "127.0.0.1"}
    with fetcher(resolver=to_loopback_2(names)) as shared:
        first = shared.fetch(get(f"http://a.test:{server.port}/a"))
        assert isinstance(first, Fetched)
        server.expect_request("/b").respond_with_data(
            "", status=302, headers={"Location": f"http://a.test:{server.port}/a"}
        )
        second = shared.fetch(get(f"http://b.test:{server.port}/b"))
    assert isinstance(second, Failed) and second.error.kind == "private_address"
    assert [request.path for request, _ in server.log] == ["/a", "/b"]


def test_a_build_refuses_a_redirect_and_allow_private_networks_allows_it(server: HTTPServer, tmp_path: Path) -> None:
    with loopback_server("127.0.0.2") as other:
        other.expect_request("/feed").respond_with_data(DOC)
        server.expect_request("/start").respond_with_data("", status=302, headers={"Location": other.url_for("/feed")})
        sites = [{"name": "A", "feed": server.url_for("/start"), "link": "https://a.example/"}]
        result = build(write_config(tmp_path, sites))
        assert result.exit_code == 3 and other.log == []  # nothing to publish
        assert "127.0.0.2 is not a public address" in result.stderr
        allowed = tmp_path / "allowed"
        allowed.mkdir()
        result = build(write_config(allowed, sites, allow_private_networks=True))
        assert result.exit_code == 0, result.output
        assert len(other.log) == 1


# --- credentials ---------------------------------------------------------------------------------


def test_a_redirect_with_credentials_is_not_followed_nor_published(server: HTTPServer, tmp_path: Path) -> None:
    target = f"http://user:s3cret@127.0.0.1:{server.port}/feed"
    server.expect_request("/start").respond_with_data("", status=301, headers={"Location": target})
    server.expect_request("/feed").respond_with_data(DOC)
    server.expect_request("/ok").respond_with_data(rss(post(2)))
    sites = [
        {"name": "A", "feed": server.url_for("/start"), "link": "https://a.example/"},
        {"name": "B", "feed": server.url_for("/ok"), "link": "https://b.example/"},
    ]
    result = build(write_config(tmp_path, sites, snapshot=True))
    assert result.exit_code == 0, result.output
    assert [request.path for request, _ in server.log if request.path == "/feed"] == []
    state = gzip.decompress((tmp_path / "public" / "syndicator-state.json.gz").read_bytes())
    assert b"s3cret" not in state and b"s3cret" not in (tmp_path / "cache" / "report.json").read_bytes()
    assert "credentials (user:password@)" in result.stderr and "s3cret" not in result.output


# --- private networks: discovered feeds ----------------------------------------------------------


def page(*hrefs: str) -> str:
    links = "".join(f'<link rel="alternate" type="application/rss+xml" href="{href}">' for href in hrefs)
    return f"<!DOCTYPE html><html><head><title>Blog</title>{links}</head><body></body></html>"


def test_discover_leaves_out_a_private_feed_on_another_host(server: HTTPServer) -> None:
    with loopback_server("127.0.0.2") as other:
        server.expect_request("/").respond_with_data(
            page(other.url_for("/internal"), server.url_for("/feed")), content_type="text/html"
        )
        result = CliRunner().invoke(main, ["discover", server.url_for("/")], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert server.url_for("/feed") in result.stdout and "127.0.0.2" not in result.stdout


def test_add_refuses_a_page_whose_only_feed_is_private(server: HTTPServer, tmp_path: Path) -> None:
    with loopback_server("127.0.0.2") as other:
        other.expect_request("/internal").respond_with_data(DOC)
        server.expect_request("/").respond_with_data(page(other.url_for("/internal")), content_type="text/html")
        config = write_config(tmp_path, [{"name": "X", "feed": "https://x.example/feed", "link": "https://x.example/"}])
        before = config.read_bytes()
        result = CliRunner().invoke(main, ["add", server.url_for("/"), "--config", str(config)], catch_exceptions=False)
        assert result.exit_code != 0 and "not a public address" in result.stderr
        assert config.read_bytes() == before and other.log == []


def test_a_build_does_not_follow_a_private_advertised_feed(server: HTTPServer, tmp_path: Path) -> None:
    with loopback_server("127.0.0.2") as other:
        other.expect_request("/internal").respond_with_data(DOC)
        server.expect_request("/").respond_with_data(page(other.url_for("/internal")), content_type="text/html")
        server.expect_request("/ok").respond_with_data(rss(post(2)))
        sites = [
            {"name": "A", "feed": server.url_for("/"), "link": "https://a.example/"},
            {"name": "B", "feed": server.url_for("/ok"), "link": "https://b.example/"},
        ]
        result = build(write_config(tmp_path, sites))
        assert result.exit_code == 0, result.output
        report = json.loads((tmp_path / "cache" / "report.json").read_text())
        assert report["failed_by_class"] == {"private_address": 1} and other.log == []


# --- private networks: hubs and webhooks ---------------------------------------------------------


def test_an_advertised_hub_on_a_private_address_is_not_asked(server: HTTPServer) -> None:
    with loopback_server("127.0.0.2") as other, new_session(UA) as session:
        other.expect_request("/hub", method="POST").respond_with_data("", status=202)
        answer = request_subscription(
            session,
            other.url_for("/hub"),
            mode="subscribe",
            topic="https://t.example/",
            callback="https://planet.example/websub/x",
            source=server.url_for("/feed"),
        )
        assert not answer.accepted and "not a public address" in answer.message and other.log == []
        allowed = request_subscription(
            session,
            other.url_for("/hub"),
            mode="subscribe",
            topic="https://t.example/",
            callback="https://planet.example/websub/x",
            source=server.url_for("/feed"),
            allow_private=True,
        )
        assert allowed.accepted and len(other.log) == 1


def test_a_hub_name_that_resolves_to_a_private_address_is_refused_at_connect(
    server: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback_server("127.0.0.2") as other, new_session(UA) as session:
        other.expect_request("/hub", method="POST").respond_with_data("", status=202)
        real = socket.getaddrinfo
        monkeypatch.setattr(
            socket, "getaddrinfo", lambda host, *a, **k: real("127.0.0.2" if host == "hub.test" else host, *a, **k)
        )
        answer = request_subscription(
            session,
            f"http://hub.test:{other.port}/hub",
            mode="subscribe",
            topic="https://t.example/",
            callback="https://planet.example/websub/x",
            source=server.url_for("/feed"),
        )
        assert not answer.accepted and "hub.test (127.0.0.2) is not a public address" in answer.message
        assert other.log == []


def test_a_hub_on_the_feed_s_host_is_trusted(server: HTTPServer) -> None:
    server.expect_request("/hub", method="POST").respond_with_data("", status=202)
    with new_session(UA) as session:
        answer = request_subscription(
            session,
            server.url_for("/hub"),
            mode="subscribe",
            topic="https://t.example/",
            callback="https://planet.example/websub/x",
            source=server.url_for("/feed"),
        )
    assert answer.accepted


def test_a_webhook_redirect_is_never_followed(server: HTTPServer, tmp_path: Path) -> None:
    from syndicator.push.deliveries import _post, make_session  # noqa: PLC0415

    with loopback_server("127.0.0.2") as other:
        server.expect_request("/hook", method="POST").respond_with_data(
            "", status=307, headers={"Location": other.url_for("/hook")}
        )
        config = write_config(tmp_path, [{"name": "X", "feed": "https://x.example/f", "link": "https://x.example/"}])
        from syndicator.config.load import load_config  # noqa: PLC0415

        session = make_session(load_config(config))
        assert _post(session, server.url_for("/hook"), b"{}", {}, 1.0) == "HTTP 307"
        assert other.log == []


def test_is_public_judges_ipv4_inside_ipv6() -> None:
    assert not netguard.is_public("::ffff:10.0.0.1") and netguard.is_public("::ffff:8.8.8.8")
    assert not netguard.is_public("64:ff9b::a9fe:a9fe") and not netguard.is_public("0.0.0.0")
    assert netguard.refusal("http://127.0.0.1:1/", "http://127.0.0.1:2/") is None
