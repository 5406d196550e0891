"""A host that stops a build's requests (429, 503 with Retry-After, the breaker) is named in one warning."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from .conftest import build, without_first_build_warning, write_config
from .polite_helpers import Feed, site

FAST = {"host_gap": 0, "retries": 0, "timeout": 1, "per_host_concurrency": 1}


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("syndicator: warning:")]


@pytest.mark.parametrize(
    ("status", "headers", "why", "until"),
    [
        pytest.param(429, {"Retry-After": "7200"}, "asked to wait 7200 s (HTTP 429)", "for 2 h", id="429-retry-after"),
        pytest.param(503, {"Retry-After": "600"}, "asked to wait 600 s (HTTP 503)", "for 10 min", id="503-retry-after"),
        pytest.param(429, {}, "answered HTTP 429 without Retry-After", "until the next build", id="429-alone"),
    ],
)
def test_a_throttled_host_is_named_once_with_the_sites_it_cost(
    server: HTTPServer, tmp_path: Path, status: int, headers: dict[str, str], why: str, until: str
) -> None:
    busy = Feed(server, "/busy.xml", status=status, headers=headers, etag=None)
    others = [Feed(server, f"/other{n}.xml") for n in range(3)]
    sites = [site(busy)] + [site(feed) for feed in others] + [site(others[0], name="other0 again")]
    config = write_config(tmp_path, sites, **FAST)
    result = build(config)
    assert result.exit_code == 3  # nothing else was requested, so no entries at all
    assert sum(len(feed.requests) for feed in others) == 0
    (warning,) = [line for line in warnings(result.stderr) if "host 127.0.0.1" in line]
    assert warning == f"syndicator: warning: host 127.0.0.1 {why}: 4 sites (3 feeds) not requested {until}"


def test_a_host_whose_breaker_tripped_is_named_once(server: HTTPServer, tmp_path: Path) -> None:
    failing = [Feed(server, f"/f{n}.xml", status=500, etag=None) for n in range(5)]
    config = write_config(tmp_path, [site(feed) for feed in failing], host_breaker=2, **FAST)
    result = build(config)
    assert sum(len(feed.requests) for feed in failing) == 2
    (warning,) = [line for line in warnings(result.stderr) if "host 127.0.0.1" in line]
    assert warning == (
        "syndicator: warning: host 127.0.0.1 failed 2 times in a row (last: HTTP 500), tripping its "
        "breaker (host_breaker: 2): 3 sites not requested until the next build"
    )


def test_no_warning_when_nothing_was_skipped(server: HTTPServer, tmp_path: Path) -> None:
    feeds = [Feed(server, f"/f{n}.xml") for n in range(3)]
    result = build(write_config(tmp_path, [site(feed) for feed in feeds], **FAST))
    assert result.exit_code == 0, result.output
    assert warnings(without_first_build_warning(result.stderr)) == []
