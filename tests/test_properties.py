"""Property-based, through the whole ``syndicator build``: one hostile site never stops the others.

Every example is a real build (the CLI, HTTP on 127.0.0.1, SQLite on disk)
of two sites: a healthy one and one whose feed carries a generated hostile
value in one place a URL, a text or an encoding can appear. The build must
exit 0 and publish the healthy site's entry. Examples are derandomized, so
a run is reproducible; the counts are in ``settings`` below.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer
from werkzeug import Response

from syndicator import urls

from .conftest import build, post, rss, write_config

#: URLs that have broken URL handling somewhere, and pieces to build more from.
URLS = [
    "http://[oops/1",
    "http://[::1]/feed",
    "http://[::1",
    "http://[fe80::1%25eth0]/x",
    "http://[::ffff:1.2.3.4]/",
    "http://[]/",
    "http://[v1.x]/",
    "http://a:99999/",
    "http://a:x/",
    "http://a:-1/",
    "http://%zz/",
    "http://a/%",
    "http://a/%zz%",
    "http://a/\x00b",
    "http://a\x01b/",
    "http://a/\x7f",
    "http://\u4f8b\u3048.\u30c6\u30b9\u30c8/p",
    "http://xn--/",
    "http://xn--zz/",
    "http://.",
    "http://..",
    "https:///x",
    "http://",
    "http:",
    "//evil.example/x",
    "javascript:alert(1)",
    "data:text/html,x",
    "mailto:",
    "",
    " ",
    "\t",
    "/relative/path",
    "?q=1",
    "#frag",
    "http://a/b c",
    "http://a/\u202e",
    "http://user:pass@a/",
    "http://a@b@c/",
    "HTTP://A/",
    "http://a/" + "x" * 70_000,
    "http://" + "a." * 200 + "/",
    "http://[" + "1:" * 100 + "]/",
]
hostile_url = st.one_of(
    st.sampled_from(URLS),
    st.tuples(st.sampled_from(URLS), st.text(max_size=12)).map("".join),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
    st.text(alphabet="[]:%@/?#.\\ 1aZ\x00\x7f\u00e9", max_size=30).map(lambda s: "http://" + s),
)
PLACES = [
    "guid",
    "link",
    "item-base",
    "channel-base",
    "enclosure",
    "image",
    "atom-link",
    "atom-base",
    "json-url",
    "json-external",
    "json-attachment",
    "location",
    "content-location",
    "html-base",
    "html-alternate",
]


def _xml_text(value: str) -> str:
    return escape(value)


def hostile_response(place: str, value: str) -> Callable[[], Response]:
    """The hostile site's answer with ``value`` in ``place``."""
    item = post(2, host="hostile.example")
    if place in ("guid", "link"):
        body = rss({**item, place: _xml_text(value)})
    elif place == "item-base":
        body = rss(item).replace("<item>", f"<item xml:base={quoteattr(value)}>")
    elif place == "channel-base":
        body = rss(item).replace("<channel>", f"<channel xml:base={quoteattr(value)}>")
    elif place == "enclosure":
        body = rss({**item, f'enclosure url={quoteattr(value)} type="audio/mpeg" length="1"': ""})
    elif place == "image":
        body = rss({**item, "description": escape(f"<p>text <img src={quoteattr(value)}></p>")})
    elif place in ("atom-link", "atom-base"):
        link = f"<link href={quoteattr(value)}/>" if place == "atom-link" else '<link href="/post/2"/>'
        base = f" xml:base={quoteattr(value)}" if place == "atom-base" else ""
        body = (
            '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"' + base + "><title>H</title>"
            "<id>urn:h</id><updated>2026-11-01T10:00:00Z</updated><entry><id>urn:h:2</id><title>Post 2</title>"
            f'{link}<updated>2026-11-01T10:02:00Z</updated><content type="html">&lt;p&gt;x&lt;/p&gt;</content>'
            "</entry></feed>"
        )
    elif place.startswith("json"):
        entry = {
            "id": "2",
            "title": "Post 2",
            "content_html": "<p>x</p>",
            "date_published": "2026-11-01T10:02:00Z",
            "url": "https://hostile.example/posts/2",
        }
        key = {"json-url": "url", "json-external": "external_url"}.get(place)
        if key:
            entry[key] = value
        else:
            entry["attachments"] = [{"url": value, "mime_type": "audio/mpeg"}]
        body = json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "H", "items": [entry]})
        return lambda: Response(body, content_type="application/feed+json")
    elif place == "location":
        return lambda: Response(
            "", status=301, headers=[("Location", value.encode("utf-8", "replace").decode("latin-1"))]
        )
    elif place == "content-location":
        return lambda: Response(
            rss(item),
            content_type="application/rss+xml",
            headers=[("Content-Location", value.encode("utf-8", "replace").decode("latin-1"))],
        )
    else:
        tag = f"<base href={quoteattr(value)}>" if place == "html-base" else ""
        alternate = quoteattr(value if place == "html-alternate" else "/feed.xml")
        page = (
            f'<!DOCTYPE html><html><head>{tag}<link rel="alternate" type="application/rss+xml" '
            f"href={alternate}></head><body>a page</body></html>"
        )
        return lambda: Response(page, content_type="text/html")
    return lambda: Response(body, content_type="application/rss+xml")


@contextmanager
def two_site_build(http: HTTPServer, hostile: Callable[[], Response], **settings: object) -> Iterator[Path]:
    """A folder with sites.yaml naming the healthy and the hostile site, served by ``http``."""
    http.clear()
    http.expect_request("/healthy.xml").respond_with_data(
        rss(post(1, host="healthy.example")), content_type="application/rss+xml"
    )
    http.expect_request("/hostile.xml").respond_with_handler(lambda request: hostile())
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_config(
            root,
            [
                {"name": "Healthy", "feed": http.url_for("/healthy.xml")},
                {"name": "Hostile", "feed": http.url_for("/hostile.xml")},
            ],
            retries=0,
            host_gap=0,
            **settings,
        )
        yield root


def assert_healthy_published(root: Path) -> None:
    result = build(root / "sites.yaml")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.stderr
    assert "https://healthy.example/posts/1" in (root / "public" / "index.html").read_text()
    json.loads((root / "public" / "feed.json").read_text())  # whole and readable


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(place=st.sampled_from(PLACES), value=hostile_url)
def test_a_hostile_url_anywhere_never_stops_the_build(_session_server: HTTPServer, place: str, value: str) -> None:
    if place == "location":  # a usable redirect to another host would ask DNS: only loopback and unusable targets
        assume(urls.hostname(urls.join(_session_server.url_for("/hostile.xml"), value) or "") in ("", "127.0.0.1"))
    with two_site_build(_session_server, hostile_response(place, value)) as root:
        assert_healthy_published(root)


@st.composite
def heavy_document(draw: st.DrawFn) -> tuple[str, bytes, str]:
    """A document with one very large or very deep part, or a bogus charset."""
    kind = draw(st.sampled_from(["title", "summary", "nesting", "charset-header", "charset-declaration", "many-items"]))
    size = draw(st.sampled_from([1_000_000, 300_000]))
    piece = draw(st.sampled_from(["a", "<b>", "&amp;", "<a href='x'>", "\u00e9", " ", "&#", "<![CDATA[", "<!--"]))
    content_type = "application/rss+xml"
    item = post(3, host="hostile.example")
    if kind == "title":
        body = rss({**item, "title": escape(piece * (size // len(piece)))})
    elif kind == "summary":
        body = rss({**item, "description": escape(piece * (size // len(piece)))})
    elif kind == "nesting":
        depth = draw(st.sampled_from([10_000, 2_000]))
        body = rss({**item, "description": "<x>" * depth + "deep" + "</x>" * depth})
    elif kind == "many-items":
        body = rss(*[{"title": str(n), "guid": str(n)} for n in range(draw(st.sampled_from([20_000, 5_000])))])
    else:
        charset = draw(st.text(alphabet=st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=40))
        body = rss(item)
        if kind == "charset-header":
            content_type = f"application/rss+xml; charset={charset}"
        else:
            body = body.replace('encoding="utf-8"', f"encoding={quoteattr(charset)}")
    return kind, body.encode("utf-8"), content_type


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(document=heavy_document())
def test_huge_deep_or_mislabelled_documents_never_stop_the_build(
    _session_server: HTTPServer, document: tuple[str, bytes, str]
) -> None:
    _, body, content_type = document
    with two_site_build(_session_server, lambda: Response(body, content_type=content_type)) as root:
        assert_healthy_published(root)
