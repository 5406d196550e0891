"""`python benchmarks/farm.py --selftest`: start a small farm, fetch with urllib, check.

Every behaviour of the profile is exercised once; the farm stops in `finally`.
Prints one line per check and a closing 'N passed, 0 failed'.
"""

from __future__ import annotations

import gzip
import tempfile
import threading
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from datetime import timedelta
from email.message import Message
from pathlib import Path

from farm import Farm, FarmProfile

_PROFILE = FarmProfile(
    seed=7,
    atom_share=0.3,
    gzip_share=0.5,
    no_validators_share=0.05,
    changing_etag_share=0.05,
    redirect_301_share=0.05,
    redirect_302_share=0.05,
    invalid_share=0.05,
    throttle_share=0.05,
    latency_ms=(0.0, 2.0),
    padding_share=0.5,
    padding_bytes=300,
)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)
_SENT = [0]  # requests made by _get


def _get(url: str, **headers: str) -> tuple[int, Message, bytes]:
    """(status, headers, body) of a GET, without following redirects; timeout 10 s."""
    request = urllib.request.Request(url, headers=headers)
    _SENT[0] += 1
    try:
        with _OPENER.open(request, timeout=10) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def _items(body: bytes) -> list[str]:
    """Item / entry ids of an RSS or Atom document, in document order."""
    root = ET.fromstring(body)
    return [
        el.text or ""
        for el in root.iter()
        if el.tag in ("guid", "{http://www.w3.org/2005/Atom}id")
        and el is not root.find("{http://www.w3.org/2005/Atom}id")
    ]


def _check(passed: list[str], condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(f"selftest failed: {what}")
    passed.append(what)
    print(f"ok  {what}")


def _first(farm: Farm, behaviour: str, **flags: bool) -> int:
    for j in range(farm.feeds):
        t = farm.traits(j)
        if t["behaviour"] == behaviour and all(t[k] == v for k, v in flags.items()):
            return j
    raise AssertionError(f"no feed with {behaviour} {flags}")


def _run(farm: Farm, ok: list[str]) -> None:
    """All checks against a started farm."""
    j = _first(farm, "normal", gzip=False)
    status, h, body = _get(farm.url(j))
    _check(ok, status == 200 and len(_items(body)) == 10, "normal feed: 200, 10 items")
    _check(ok, h["Date"] == farm.http_now(), "Date header is the farm clock")
    etag, modified = h["ETag"], h["Last-Modified"]
    status, _, body = _get(farm.url(j), **{"If-None-Match": etag})
    _check(ok, status == 304 and body == b"", "If-None-Match -> 304, no body")
    _check(
        ok,
        _get(farm.url(j), **{"If-Modified-Since": modified})[0] == 304,
        "If-Modified-Since -> 304",
    )
    farm.set_time(farm.now() + timedelta(minutes=5))
    touched = farm.touch(1.0)
    _check(ok, len(touched) == farm.feeds and farm.version(j) == 1, "touch(1.0) bumps every feed")
    status, h, body = _get(farm.url(j), **{"If-None-Match": etag})
    _check(
        ok,
        status == 200 and h["ETag"] != etag and _items(body)[0] == f"farm-{j}-10",
        "after touch: 200, new ETag, new item first",
    )
    _check(
        ok,
        _get(farm.url(j), **{"If-Modified-Since": modified})[0] == 200,
        "after touch: old If-Modified-Since -> 200",
    )
    j = _first(farm, "no_validators")
    status, h, _ = _get(farm.url(j), **{"If-Modified-Since": farm.http_now()})
    _check(ok, status == 200 and "ETag" not in h and "Last-Modified" not in h, "no validators")
    j = _first(farm, "changing_etag")
    s1, h1, b1 = _get(farm.url(j))
    s2, h2, b2 = _get(farm.url(j), **{"If-None-Match": h1["ETag"]})
    _check(ok, s2 == 200 and h1["ETag"] != h2["ETag"] and b1 == b2, "changing ETag, same body")
    j = _first(farm, "normal", gzip=True)
    s, h, b = _get(farm.url(j), **{"Accept-Encoding": "gzip"})
    _check(
        ok,
        h["Content-Encoding"] == "gzip" and len(_items(gzip.decompress(b))) == 10,
        "gzip when asked",
    )
    s, h, b = _get(farm.url(j))
    _check(ok, "Content-Encoding" not in h and len(_items(b)) == 10, "identity when gzip not asked")
    for behaviour, code, where in (("redirect_301", 301, "moved"), ("redirect_302", 302, "temp")):
        j = _first(farm, behaviour)
        s, h, _ = _get(farm.url(j))
        target = farm.url(j).replace("/feeds/", f"/feeds/{where}/")
        _check(ok, s == code and h["Location"] == target, f"{code} to /feeds/{where}/")
        s, h, b = _get(target)
        _check(
            ok,
            s == 200 and len(_items(b if "Content-Encoding" not in h else gzip.decompress(b))) == 10,
            f"{code} target serves the feed",
        )
    s, h, b = _get(farm.url(_first(farm, "invalid_html")))
    _check(ok, s == 200 and h.get_content_type() == "text/html", "invalid: HTML error page")
    s, h, b = _get(farm.url(_first(farm, "invalid_truncated")))
    try:
        ET.fromstring(b)
        truncated = False
    except ET.ParseError:
        truncated = True
    _check(ok, s == 200 and truncated, "invalid: truncated XML")
    for code in (429, 503):
        s, h, _ = _get(farm.url(_first(farm, f"throttle_{code}")))
        _check(ok, s == code and h["Retry-After"] == "120", f"{code} with Retry-After")
    wrong_host = farm.url(0).replace(farm.addresses[0], farm.addresses[1])
    _check(ok, _get(wrong_host)[0] == 404, "feed asked of the wrong host -> 404")


def _concurrency(ok: list[str]) -> None:
    """Four parallel GETs to one host with 50 ms latency overlap: peak 2 to 4."""
    quiet = FarmProfile(
        no_validators_share=0,
        changing_etag_share=0,
        redirect_301_share=0,
        redirect_302_share=0,
        invalid_share=0,
        throttle_share=0,
        latency_ms=(50.0, 50.0),
    )
    with Farm(hosts=1, feeds=4, port=0, profile=quiet) as farm:
        threads = [threading.Thread(target=_get, args=(farm.url(j),)) for j in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        stats = farm.stats()
    _check(
        ok,
        stats["requests"] == 4 and 2 <= stats["max_host_concurrency"] <= 4,
        f"parallel GETs: host peak {stats['max_host_concurrency']} of 4",
    )


def selftest() -> int:
    """Run every check; returns 0, or raises AssertionError naming the failed check."""
    ok: list[str] = []
    farm = Farm(hosts=3, feeds=60, port=0, profile=_PROFILE)
    farm.start()
    try:
        _SENT[0] = 0
        _run(farm, ok)
        made = _SENT[0]
        stats = farm.stats()
        _check(ok, stats["requests"] == made, f"farm counted {made} requests")
        _check(
            ok,
            stats["by_status"].get(304) == 2 and stats["bytes_sent"] > 0,
            "stats: two 304s, bytes sent",
        )
        _check(
            ok,
            stats["max_host_concurrency"] >= 1 and len(stats["hosts"]) >= 2,
            "stats: per-host peak concurrency",
        )
        farm.reset_stats()
        _check(ok, farm.stats()["requests"] == 0, "reset_stats")
        with tempfile.TemporaryDirectory() as tmp:
            path = farm.write_sites_yaml(Path(tmp) / "sites.yaml", workers=4, timeout=15)
            text = path.read_text()
        _check(
            ok,
            text.count("  - name: feed-") == 60 and "workers: 4\n" in text and f"feed: {farm.url(59)}\n" in text,
            "write_sites_yaml",
        )
    finally:
        farm.stop()
    _concurrency(ok)
    try:
        _get(farm.url(0))
        refused = False
    except (urllib.error.URLError, ConnectionError):
        refused = True
    _check(ok, refused, "stop(): nothing listens any more")
    print(f"selftest: {len(ok)} passed, 0 failed")
    return 0
