"""Property-based: hostile and broken feed documents never crash the build, never
put script or event handlers on a page, and always leave valid Atom behind.

The build here is the real one minus HTTP: parse -> store (SQLite on disk)
-> select -> render, the path every fetched body takes.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from syndicator.configtypes import Config, Site
from syndicator.errors import FeedError
from syndicator.model import SourceState
from syndicator.parse.feed import parse_feed
from syndicator.poll.path import save
from syndicator.site.render import render_site
from syndicator.site.selection import select_entries, site_statuses
from syndicator.state.store import Store

from .conftest import NOW
from .outputs import atom_problems, html_problems

NASTY = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "<iframe src=https://evil.example/>",
    "<svg onload=alert(1)>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&nbsp;",
    "&ldquo;",
    "&bogus;",
    "&#27;",
    "&#0;",
    "&#xD800;",
    "\x1b",
    "\x00",
    "\ufffe",
    "]]>",
    "<![CDATA[",
    "<!--",
    "-->",
    "&",
    "<",
    ">",
    '"',
    "'",
    "é",
    "\u202e",
    "💥",
    "<style>*{}</style>",
    "<base href=//evil>",
    "<form><input></form>",
    "<meta http-equiv=refresh content=0>",
    "data:text/html,x",
    "vbscript:x",
    "Tue, 12 Mar 2024 10:00:00 GMT",
    "2099-01-01T00:00:00Z",
    "1970-01-01",
    "not a date",
    "/relative",
    "//host/x",
    "http://[oops/1",
    "http://a.example:99999/",
    "http://a.example:x/",
    "https://[::1]/",
    "http://]x[/",
]
text = st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=8)), max_size=6).map("".join)
escaped = text.map(lambda s: s.replace("&", "&amp;").replace("<", "&lt;"))
field = st.one_of(text, escaped, text.map(lambda s: f"<![CDATA[{s}]]>"))


@st.composite
def rss_document(draw: st.DrawFn) -> bytes:
    items = []
    for _ in range(draw(st.integers(0, 4))):
        parts = [
            f"<{name}>{draw(field)}</{name}>"
            for name in draw(
                st.lists(
                    st.sampled_from(["title", "link", "guid", "pubDate", "description", "author", "dc:date"]),
                    max_size=6,
                    unique=True,
                )
            )
        ]
        items.append("<item>" + "".join(parts) + "</item>")
    document = (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<channel><title>{draw(field)}</title><link>{draw(field)}</link>" + "".join(items) + "</channel></rss>"
    )
    return _damage(draw, document)


@st.composite
def atom_document(draw: st.DrawFn) -> bytes:
    entries = "".join(
        f'<entry><id>{draw(field)}</id><title type="{draw(st.sampled_from(["text", "html", "xhtml"]))}">{draw(field)}'
        f'</title><link href="{draw(escaped).replace(chr(34), "")}"/><updated>{draw(field)}</updated>'
        f'<content type="{draw(st.sampled_from(["html", "text"]))}">{draw(field)}</content></entry>'
        for _ in range(draw(st.integers(0, 3)))
    )
    base = draw(
        st.sampled_from(
            ["", ' xml:base="https://base.example/d/"', ' xml:base="javascript:x"', ' xml:base="http://[oops/"']
        )
    )
    document = (
        f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"{base}><title>{draw(field)}</title>'
        f"<id>urn:f</id><updated>2024-01-01T00:00:00Z</updated>{entries}</feed>"
    )
    return _damage(draw, document)


@st.composite
def json_document(draw: st.DrawFn) -> bytes:
    values = st.one_of(text, st.integers(), st.none(), st.booleans(), st.lists(text, max_size=2))
    items = draw(
        st.lists(
            st.dictionaries(
                st.sampled_from(
                    [
                        "id",
                        "url",
                        "title",
                        "content_html",
                        "content_text",
                        "summary",
                        "date_published",
                        "date_modified",
                        "authors",
                        "attachments",
                        "external_url",
                    ]
                ),
                values,
                max_size=8,
            ),
            max_size=4,
        )
    )
    document = json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": draw(text), "items": items})
    return _damage(draw, document)


def _damage(draw: st.DrawFn, document: str) -> bytes:
    """Encode, then maybe cut, insert stray bytes, or prepend a BOM or junk."""
    body = document.encode(draw(st.sampled_from(["utf-8", "utf-8", "utf-16", "cp1252"])), "replace")
    how = draw(st.sampled_from(["none", "none", "cut", "bytes", "bom", "junk"]))
    if how == "cut":
        body = body[: draw(st.integers(0, len(body)))]
    elif how == "bytes":
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(st.binary(min_size=1, max_size=4)) + body[at:]
    elif how == "bom":
        body = b"\xef\xbb\xbf" + body
    elif how == "junk":
        body = b"  \n<html>" + body
    return body


SITE = Site("Hostile", "https://hostile.example/feed", "https://hostile.example/")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(rss_document(), atom_document(), json_document()))
def test_hostile_documents_build_safely(body: bytes) -> None:
    try:
        parsed = parse_feed(body, SITE.feed, {"content-type": "application/xml"}, NOW)
    except FeedError:
        return  # a clean, expected failure: the source keeps its last good copy
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        with Store.open(root / "cache") as store:
            save(store, SourceState(SITE.feed, SITE.feed), parsed.entries, NOW)
            snapshots = store.snapshots([SITE.feed])
        entries = select_entries([SITE], snapshots, 5)
        config = Config(path=root / "sites.yaml", title="Planet <&>", link="https://planet.example/", sites=(SITE,))
        statuses = site_statuses([SITE], {}, {SITE.feed: len(snapshots[SITE.feed])}, NOW, config.stale_after)
        render_site(config, entries, statuses, NOW, root / "public")
        assert atom_problems((root / "public" / "feed.xml").read_bytes()) == []
        for page in ("index.html", "sites.html"):
            assert html_problems((root / "public" / page).read_text(encoding="utf-8")) == []
        feed = json.loads((root / "public" / "feed.json").read_text(encoding="utf-8"))
        for item in feed["items"]:
            assert html_problems(item["content_html"]) == []
