"""Render the farm's documents: RSS 2.0, Atom 1.0, an HTML error page, sites.yaml.

Pure functions of their arguments: the same feed, version and times always give
the same bytes, which is what makes the farm's strong ETags honest.
All datetimes are timezone-aware UTC.
"""

from __future__ import annotations

import base64
import json
import random
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from email.utils import format_datetime
from typing import Any
from xml.sax.saxutils import escape

_TEXT = (
    "polite poller conditional request validator entity tag modified since backoff "
    "interval schedule jitter host limit redirect gzip snapshot planet aggregator "
    "syndication archive digest weekly notes release changelog community update"
)
_WORDS = _TEXT.split(" ")


def http_date(when: datetime) -> str:
    """RFC 9110 IMF-fixdate of a UTC datetime, e.g. 'Wed, 01 Jan 2025 00:00:00 GMT'."""
    return format_datetime(when, usegmt=True)


def atom_date(when: datetime) -> str:
    """RFC 3339 date of a UTC datetime, e.g. '2025-01-01T00:00:00Z'."""
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def initial_item_times(j: int, items: int, start: datetime) -> list[datetime]:
    """Publication times (UTC) of feed j's first `items` items: hourly, the newest
    one 0 to 59 minutes (j % 60) before `start`."""
    newest = start - timedelta(minutes=j % 60)
    return [newest - timedelta(hours=items - 1 - i) for i in range(items)]


def padding_text(nbytes: int, seed: int) -> str:
    """`nbytes` ASCII characters of seeded base64 noise (no '-', so safe in a comment)."""
    if nbytes <= 0:
        return ""
    raw = random.Random(seed).randbytes(nbytes)
    return base64.b64encode(raw).decode("ascii")[:nbytes]


def _summary(j: int, n: int) -> str:
    words = " ".join(_WORDS[(j * 7 + n * 3 + k) % len(_WORDS)] for k in range(12))
    return f"<p>Item {n} of synthetic feed {j}: <em>{words}</em>.</p>"


def render_feed(
    j: int,
    site: str,
    first: int,
    times: Sequence[datetime],
    updated: datetime,
    atom: bool,
    padding: str = "",
) -> bytes:
    """The document of feed `j` (UTF-8 bytes), newest item first.

    site: base URL of the feed's host, ending in '/'; first: number of the item
    published at times[0] (item n is published at times[n - first]);
    updated: time of this version (lastBuildDate / feed updated);
    padding: text put in an XML comment to make the body bigger.
    """
    entries = [(first + k, t) for k, t in enumerate(times)][::-1]
    pad = f"<!-- {padding} -->\n" if padding else ""
    body = (_atom if atom else _rss)(j, site, entries, updated, pad)
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + body).encode("utf-8")


def _rss(j: int, site: str, entries: list[tuple[int, datetime]], updated: datetime, pad: str) -> str:
    items = "".join(
        f'<item><guid isPermaLink="false">farm-{j}-{n}</guid>'
        f"<title>Feed {j} post {n}</title><link>{site}posts/{j}/{n}.html</link>"
        f"<pubDate>{http_date(t)}</pubDate>"
        f"<description>{escape(_summary(j, n))}</description></item>\n"
        for n, t in entries
    )
    return (
        f'<rss version="2.0"><channel>\n{pad}<title>Farm feed {j}</title>'
        f"<link>{site}</link><description>Synthetic feed {j}</description>"
        f"<lastBuildDate>{http_date(updated)}</lastBuildDate>\n{items}</channel></rss>\n"
    )


def _atom(j: int, site: str, entries: list[tuple[int, datetime]], updated: datetime, pad: str) -> str:
    items = "".join(
        f"<entry><id>urn:farm:{j}:{n}</id><title>Feed {j} post {n}</title>"
        f'<link href="{site}posts/{j}/{n}.html"/>'
        f"<published>{atom_date(t)}</published><updated>{atom_date(t)}</updated>"
        f'<summary type="html">{escape(_summary(j, n))}</summary></entry>\n'
        for n, t in entries
    )
    return (
        f'<feed xmlns="http://www.w3.org/2005/Atom">\n{pad}<title>Farm feed {j}</title>'
        f'<id>urn:farm:{j}</id><link href="{site}"/>'
        f"<updated>{atom_date(updated)}</updated><author><name>Farm</name></author>\n"
        f"{items}</feed>\n"
    )


ERROR_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Service error</title></head>"
    b"<body><h1>Something went wrong</h1><p>Please try again later.</p></body></html>\n"
)


_PLAIN = re.compile(r"[A-Za-z_/]([\w./:-]*[\w./-])?")  # YAML plain scalars we can write unquoted
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}


def sites_yaml(settings: dict[str, Any], sites: Iterable[tuple[str, str, str]]) -> str:
    """sites.yaml text: top-level `settings` (str, int, float, bool or None values),
    then a `sites:` list of (name, feed URL, link URL)."""
    lines = [f"{key}: {_yaml_scalar(value)}" for key, value in settings.items()]
    lines.append("sites:")
    for name, feed, link in sites:
        lines += [f"  - name: {name}", f"    feed: {feed}", f"    link: {link}"]
    if lines[-1] == "sites:":
        lines[-1] = "sites: []"
    return "\n".join(lines) + "\n"


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS:
            return value
        return json.dumps(value)  # a JSON string is a valid YAML double-quoted scalar
    raise TypeError(f"unsupported sites.yaml value {value!r}")
