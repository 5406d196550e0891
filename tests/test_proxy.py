"""Proxies and CA bundles from the environment, as curl and requests read them; never .netrc credentials."""

from __future__ import annotations

import http.server
import socket
import ssl
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from pytest_httpserver import HTTPServer

from syndicator.fetch.http import Fetcher
from syndicator.fetch.outbound import CA_VARIABLES
from syndicator.model import Failed, Fetched, FetchRequest

from .conftest import build, in_thread, post, rss, without_first_build_warning, without_info, write_config

#: A host name that resolves nowhere: only a proxy can reach it.
UNREACHABLE = "http://feeds.invalid/feed.xml"


class _Proxy(http.server.ThreadingHTTPServer):
    """A forwarding HTTP proxy on loopback: every absolute-URI GET is answered from ``origin``."""

    def __init__(self, origin: str) -> None:
        self.origin, self.seen = origin, []
        super().__init__(("127.0.0.1", 0), _ProxyHandler)


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    server: _Proxy

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.server.seen.append((self.path, self.headers.get("Authorization")))
        path = self.path.split("/", 3)[3] if self.path.startswith("http://") else self.path.lstrip("/")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"{self.server.origin}/{path}", timeout=10) as answer:
            body = answer.read()
        self.send_response(200)
        self.send_header("Content-Type", "application/rss+xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy(server: HTTPServer) -> Iterator[_Proxy]:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    proxy = _Proxy(server.url_for("").rstrip("/"))
    with in_thread(proxy):
        yield proxy


def fetch(url: str) -> Fetched | Failed:
    with Fetcher("syndicator-test", timeout=5, retries=0) as fetcher:
        result = fetcher.fetch(FetchRequest(url, url))
    assert isinstance(result, Fetched | Failed)
    return result


def test_a_feed_is_fetched_through_the_proxy_the_environment_names(
    proxy: _Proxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".netrc").write_text("machine feeds.invalid login me password secret\n")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.server_address[1]}")
    config = write_config(tmp_path, [{"name": "Behind a proxy", "feed": UNREACHABLE}])
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "Post 1" in (tmp_path / "public" / "index.html").read_text()
    assert proxy.seen == [(UNREACHABLE, None)]  # the absolute URI, and no credentials from .netrc


def test_no_proxy_sends_a_host_direct(proxy: _Proxy, server: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert isinstance(fetch(server.url_for("/feed.xml")), Fetched)
    assert proxy.seen == []
    monkeypatch.delenv("NO_PROXY")
    assert isinstance(fetch(server.url_for("/feed.xml")), Fetched)
    assert [path for path, _ in proxy.seen] == [server.url_for("/feed.xml")]


def test_without_a_proxy_the_environment_names_nothing_is_proxied(
    proxy: _Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    result = fetch(UNREACHABLE)
    assert isinstance(result, Failed) and result.error.kind == "network"
    assert proxy.seen == []


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS feed on 127.0.0.1 whose certificate a throwaway CA signed; yields (URL, the CA's PEM file)."""
    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    server.start()
    try:
        yield server.url_for("/feed.xml"), bundle
    finally:
        server.clear()
        server.stop()


def clear_ca_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CA_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"])
def test_a_ca_bundle_from_the_environment_is_trusted(
    https_server: tuple[str, Path], variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, bundle = https_server
    clear_ca_variables(monkeypatch)
    refused = fetch(url)
    assert isinstance(refused, Failed) and refused.error.kind == "tls"
    monkeypatch.setenv(variable, str(bundle))
    assert isinstance(fetch(url), Fetched)


def test_a_ca_bundle_variable_naming_nothing_is_one_clear_error(
    tmp_path: Path, server: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    clear_ca_variables(monkeypatch)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/feed.xml")}])
    result = build(config)
    assert result.exit_code == 2
    expected = f"syndicator: error: SSL_CERT_FILE={tmp_path / 'missing.pem'}: no such CA bundle file or folder"
    assert without_first_build_warning(without_info(result.stderr)).strip() == expected
    assert not (tmp_path / "public").exists()


def test_the_threads_of_a_build_share_the_proxy_setting(
    proxy: _Proxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
    sites = [{"name": f"Site {n}", "feed": f"http://feeds{n}.invalid/feed.xml"} for n in range(6)]
    config = write_config(tmp_path, sites, host_gap=0)
    assert build(config).exit_code == 0
    assert sorted(path for path, _ in proxy.seen) == sorted(site["feed"] for site in sites)


def test_a_dead_proxy_is_named_as_the_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    result = fetch(UNREACHABLE)
    assert isinstance(result, Failed) and result.error.kind == "network"
    assert result.error.message.startswith("the proxy failed (HTTP_PROXY, HTTPS_PROXY or ALL_PROXY): ")
