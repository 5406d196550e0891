"""``syndicator preview``: the published folder served over HTTP, to look at the planet in a browser.

The server is the standard library's (``http.server``: a thread per request,
:class:`http.server.SimpleHTTPRequestHandler` reading files below one
folder, never above it). It is for a look before publishing, not for the
public: by default it listens on 127.0.0.1 only; the command listens on
another address only when given one with ``--host``. What a build writes
is served (the pages, the feeds, ``static/``); what it does not is not: no
hidden file or folder (``.git`` of a checkout, ``.syndicator-output``) and
no folder listing, each a 404.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from syndicator.errors import ConfigError

log = logging.getLogger("syndicator")


class _Handler(SimpleHTTPRequestHandler):
    """Files below the folder, as they are; a hidden name or a folder without index.html is a 404,
    and requests are not logged (a preview is quiet)."""

    def send_head(self) -> Any:
        parts = unquote(urlsplit(self.path).path).split("/")
        if any(part.startswith(".") for part in parts if part):
            self.send_error(404, "Not found")
            return None
        return super().send_head()

    def list_directory(self, path: Any) -> None:
        self.send_error(404, "Not found")
        return None

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the name http.server calls it by
        log.debug("preview: " + format, *args)


def preview_server(folder: Path, host: str, port: int) -> ThreadingHTTPServer:
    """A server for ``folder`` bound to ``host``:``port`` (0: a free port), not yet serving; call its
    ``serve_forever()``, and ``server_close()`` after.

    Raises:
        ConfigError: ``folder`` holds no built site (no index.html), or the address cannot be listened on
            (taken, or a host name that resolves to nothing); one line naming it.
    """
    if not (folder / "index.html").is_file():
        raise ConfigError(f"{folder}: no site to preview (no index.html); run syndicator build first")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server_class = type("PreviewServer", (ThreadingHTTPServer,), {"address_family": family, "daemon_threads": True})
    try:
        return server_class((host, port), partial(_Handler, directory=str(folder)))
    except (OSError, OverflowError) as error:  # OverflowError: a port above 65535
        reason = getattr(error, "strerror", None) or error
        raise ConfigError(f"{address(host, port)}: cannot listen there ({reason})") from error


def is_loopback(host: str) -> bool:
    """True when every address ``host`` names is a loopback one (127.0.0.0/8, ::1; ``localhost``).

    A name that resolves to nothing is not loopback (the server then says it cannot listen there).
    """
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(info[4][0]).is_loopback for info in found)


def url_of(server: ThreadingHTTPServer) -> str:
    """The http URL of the server's folder (str), with the port it listens on."""
    host, port = server.server_address[:2]
    return f"http://{address(str(host), int(port))}/"


def address(host: str, port: int) -> str:
    """HOST:PORT, an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
