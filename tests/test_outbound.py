"""The one outbound policy (fetch/outbound.py): webhooks and hub requests honour the environment's proxies
(HTTP_PROXY, HTTPS_PROXY, NO_PROXY) and CA bundle (REQUESTS_CA_BUNDLE...), as feed fetches do."""

from __future__ import annotations

import http.server
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from pytest_httpserver import HTTPServer

from syndicator.config.load import load_config
from syndicator.configtypes import Config
from syndicator.errors import ConfigError
from syndicator.fetch import outbound
from syndicator.push import websub
from syndicator.push.deliveries import _post as webhook_post
from syndicator.push.deliveries import make_session

from .conftest import in_thread, write_config

UA = "syndicator-test/1 (+https://planet.example/)"
#: Host names that resolve nowhere: only a proxy can reach them.
HOOK = "http://hooks.invalid/hook"
HUB = "http://hub.invalid/hub"


class _Proxy(http.server.ThreadingHTTPServer):
    """A loopback "proxy" that answers every request itself and records its request line and User-Agent:
    a POST for an absolute http:// URI gets ``status``, a CONNECT (an https URL) 403."""

    daemon_threads = True

    def __init__(self, status: int = 200) -> None:
        self.status, self.seen = status, []
        super().__init__(("127.0.0.1", 0), _ProxyHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def lines(self) -> list[str]:
        return [line for line, _ in self.seen]


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    server: _Proxy
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append((self.requestline, self.headers.get("User-Agent")))
        self._answer(self.server.status)

    def do_CONNECT(self) -> None:  # noqa: N802
        self.server.seen.append((self.requestline, self.headers.get("User-Agent")))
        self._answer(403)

    def _answer(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[_Proxy]:
    made = _Proxy()
    with in_thread(made):
        yield made


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return load_config(write_config(tmp_path, [{"name": "X", "feed": "https://x.example/f"}]))


def clear_ca_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in outbound.CA_VARIABLES:
        monkeypatch.delenv(name, raising=False)


# --- webhooks -------------------------------------------------------------------------------------------


def test_a_webhook_goes_through_the_proxy_the_environment_names(
    proxy: _Proxy, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    with make_session(config) as session:
        assert webhook_post(session, HOOK, b"{}", {"Content-Type": "application/json"}, 5.0) is None
    assert proxy.seen == [(f"POST {HOOK} HTTP/1.1", config.user_agent)]


def test_an_https_webhook_goes_through_https_proxy(
    proxy: _Proxy, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    with make_session(config) as session:
        error = webhook_post(session, "https://hooks.invalid/hook", b"{}", {}, 5.0)
    assert [line.rsplit(" ", 1)[0] for line in proxy.lines()] == ["CONNECT hooks.invalid:443"]  # a tunnel
    assert error is not None and error.startswith("ProxyError: ")  # the proxy refused the tunnel: retried later


def test_no_proxy_sends_a_webhook_direct(
    proxy: _Proxy, server: HTTPServer, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.expect_request("/hook", method="POST").respond_with_data("", status=204)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with make_session(config) as session:
        assert webhook_post(session, server.url_for("/hook"), b"{}", {}, 5.0) is None
        assert proxy.seen == [] and len(server.log) == 1
        monkeypatch.delenv("NO_PROXY")
        assert webhook_post(session, server.url_for("/hook"), b"{}", {}, 5.0) is None
    assert proxy.lines() == [f"POST {server.url_for('/hook')} HTTP/1.1"] and len(server.log) == 1


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[HTTPServer, Path]]:
    """An HTTPS server on 127.0.0.1 whose certificate a throwaway CA signed; yields (it, the CA's PEM file)."""
    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    server.start()
    try:
        yield server, bundle
    finally:
        server.clear()
        server.stop()


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"])
def test_a_webhook_trusts_the_ca_bundle_the_environment_names(
    https_server: tuple[HTTPServer, Path], config: Config, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, bundle = https_server
    server.expect_request("/hook", method="POST").respond_with_data("", status=200)
    clear_ca_variables(monkeypatch)
    with make_session(config) as session:
        refused = webhook_post(session, server.url_for("/hook"), b"{}", {}, 5.0)
    assert refused is not None and refused.startswith("SSLError: ") and server.log == []
    monkeypatch.setenv(variable, str(bundle))
    with make_session(config) as session:
        assert webhook_post(session, server.url_for("/hook"), b"{}", {}, 5.0) is None
    assert len(server.log) == 1


def test_a_ca_bundle_variable_naming_nothing_is_one_clear_error_for_webhooks_and_hubs(
    tmp_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_ca_variables(monkeypatch)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "missing.pem"))
    expected = f"REQUESTS_CA_BUNDLE={tmp_path / 'missing.pem'}: no such CA bundle file or folder"
    with pytest.raises(ConfigError) as webhooks:
        make_session(config)
    with pytest.raises(ConfigError) as hubs:
        outbound.new_session(UA)
    assert str(webhooks.value) == str(hubs.value) == expected


def test_a_webhook_keeps_no_cookie(server: HTTPServer, config: Config) -> None:
    server.expect_request("/hook", method="POST").respond_with_data("", status=200, headers={"Set-Cookie": "a=1"})
    with make_session(config) as session:
        assert webhook_post(session, server.url_for("/hook"), b"{}", {}, 5.0) is None
        assert webhook_post(session, server.url_for("/hook"), b"{}", {}, 5.0) is None
        assert len(session.cookies) == 0
    assert [request.headers.get("Cookie") for request, _ in server.log] == [None, None]


# --- hub requests ---------------------------------------------------------------------------------------


def subscribe(session: outbound.Session, hub: str) -> websub.HubAnswer:
    return websub.request_subscription(
        session, hub, mode="subscribe", topic="https://t.example/", callback="https://planet.example/websub/x"
    )


def test_a_hub_request_goes_through_the_proxy_the_environment_names(
    proxy: _Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy.status = 202
    monkeypatch.setenv("http_proxy", proxy.url)
    with outbound.new_session(UA) as session:
        answer = subscribe(session, HUB)
        ping = websub.notify_publish(session, HUB, ["https://p.example/feed.xml"])
    assert answer == websub.HubAnswer(True, 202, "202 Accepted") and ping.accepted
    assert proxy.seen == [(f"POST {HUB} HTTP/1.1", UA)] * 2


def test_an_https_hub_goes_through_https_proxy(proxy: _Proxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    with outbound.new_session(UA) as session:
        answer = subscribe(session, "https://hub.invalid/hub")
    assert [line.rsplit(" ", 1)[0] for line in proxy.lines()] == ["CONNECT hub.invalid:443"]  # a tunnel
    assert not answer.accepted and answer.status is None and answer.message.startswith("could not connect: ")


def test_no_proxy_sends_a_hub_request_direct(
    proxy: _Proxy, server: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.expect_request("/hub", method="POST").respond_with_data("", status=202)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("no_proxy", "localhost,127.0.0.1")
    with outbound.new_session(UA) as session:
        assert subscribe(session, server.url_for("/hub")).accepted
    assert proxy.seen == [] and len(server.log) == 1


def test_a_hub_request_trusts_the_ca_bundle_the_environment_names(
    https_server: tuple[HTTPServer, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, bundle = https_server
    server.expect_request("/hub", method="POST").respond_with_data("", status=202)
    clear_ca_variables(monkeypatch)
    with outbound.new_session(UA) as session:
        refused = subscribe(session, server.url_for("/hub"))
    assert not refused.accepted and "CERTIFICATE_VERIFY_FAILED" in refused.message and server.log == []
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    with outbound.new_session(UA) as session:
        assert subscribe(session, server.url_for("/hub")).accepted
    assert len(server.log) == 1


def test_a_hub_dripping_its_answer_is_cut_at_twice_the_timeout() -> None:
    """A total deadline: a hub that sends a byte of its headers every 0.1 s never lets a wait reach the
    timeout, but the request ends 2 * timeout after it started."""
    stop = threading.Event()
    with socket.create_server(("127.0.0.1", 0)) as listening:

        def drip() -> None:
            connection, _ = listening.accept()
            with connection:
                connection.recv(65536)
                for byte in b"HTTP/1.1 202 Accepted\r\nX-Slow: " + b"y" * 200:
                    if stop.wait(0.1):
                        return
                    try:
                        connection.sendall(bytes([byte]))
                    except OSError:
                        return

        threading.Thread(target=drip, daemon=True).start()
        started = time.monotonic()
        try:
            with outbound.new_session(UA) as session:
                answer = websub.notify_publish(
                    session, f"http://127.0.0.1:{listening.getsockname()[1]}/hub", ["https://p.example/f"], timeout=0.5
                )
        finally:
            stop.set()
    assert answer == websub.HubAnswer(False, None, "no answer within 1 s")
    assert time.monotonic() - started < 5
