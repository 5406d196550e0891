"""Helpers for the polite-polling end-to-end tests: a scriptable feed, the CLI, the report."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.cli import main

from .conftest import NOW, post, rss


def iso(when: datetime) -> str:
    """An ISO 8601 UTC string for --now."""
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def http_date(when: datetime) -> str:
    return format_datetime(when.astimezone(UTC), usegmt=True)


class Feed:
    """A feed on the loopback server that honours conditional requests and records them.

    Attributes:
        body: the document served (str); etag/last_modified: validators sent.
        status, headers: a non-200 status to answer with, and extra headers.
        requests: the headers of every request received, in order.
        delay: seconds to wait before answering (for concurrency tests).
    """

    active = 0
    peak = 0
    _lock = threading.Lock()

    def __init__(
        self,
        server: HTTPServer,
        path: str,
        body: str | None = None,
        etag: str | None = '"v1"',
        last_modified: str | None = None,
        status: int = 200,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        self.path, self.url = path, server.url_for(path)
        self.body = body if body is not None else rss(post(1), post(2))
        self.etag, self.last_modified, self.status = etag, last_modified, status
        self.headers = dict(headers or {})
        self.delay = delay
        self.requests: list[dict[str, str]] = []
        self.started: list[float] = []
        server.expect_request(path).respond_with_handler(self)

    def __call__(self, request: Request) -> Response:
        with Feed._lock:
            self.requests.append(dict(request.headers.items()) | {"_query": request.query_string.decode()})
            self.started.append(time.monotonic())
            Feed.active += 1
            Feed.peak = max(Feed.peak, Feed.active)
        try:
            if self.delay:
                time.sleep(self.delay)
            return self._answer(request)
        finally:
            with Feed._lock:
                Feed.active -= 1

    def _answer(self, request: Request) -> Response:
        headers = dict(self.headers)
        if self.etag:
            headers["ETag"] = self.etag
        if self.last_modified:
            headers["Last-Modified"] = self.last_modified
        if self.status != 200:
            return Response("no", status=self.status, headers=headers)
        match = request.headers.get("If-None-Match")
        since = request.headers.get("If-Modified-Since")
        if (match is not None and match == self.etag) or (match is None and since and since == self.last_modified):
            return Response(status=304, headers=headers)
        return Response(self.body, content_type="application/rss+xml", headers=headers)


def reset_concurrency() -> None:
    Feed.active = 0
    Feed.peak = 0


def run(*args: str) -> Result:
    """Run the real CLI in-process."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def build(config: Path, now: datetime = NOW, *extra: str, expect: int = 0) -> dict[str, Any]:
    """Run ``syndicator build --now`` and return report.json."""
    result = run("build", "--config", str(config), "--now", iso(now), *extra)
    assert result.exit_code == expect, result.output
    return json.loads((config.parent / "cache" / "report.json").read_text())


def status(config: Path, now: datetime = NOW) -> dict[str, dict[str, Any]]:
    """``syndicator status --json`` as {site name: row}."""
    result = run("status", "--config", str(config), "--json", "--now", iso(now))
    assert result.exit_code == 0, result.output
    return {row["name"]: row for row in json.loads(result.stdout)}


def later(**delta: float) -> datetime:
    return NOW + timedelta(**delta)


def site(feed: Feed, name: str | None = None) -> dict[str, str]:
    return {"name": name or feed.path.strip("/").removesuffix(".xml"), "feed": feed.url}


Handler = Callable[[Request], Response]
