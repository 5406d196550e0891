"""Hostile feeds for the XSS battery (tests/test_xss.py): one :class:`Build` per field kind.

Each build publishes one site (or one site per payload) whose feed carries
one entry per payload, so a handful of builds covers every payload in every
field. Entry ``i`` of a build is dated :func:`when` ``(i)`` (one minute apart,
newest first), which is how the battery finds it again in index.html,
feed.xml and feed.json whatever the payload did to the other fields.

Field words: in markup payloads the visible word is "Headline" in titles,
"Summary" in summaries, "Body" in content, "Writer" in author names,
"Channel" in feed titles and "Site" in site names.
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

from .conftest import rss
from .xss_payloads import MARKUP, URLS, Payload

BASE_DATE = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
HOME = "https://blog.example.org/"
RSS_TYPE = "application/rss+xml"
ATOM_TYPE = "application/atom+xml"
JSON_TYPE = "application/feed+json"
XHTML = "http://www.w3.org/1999/xhtml"
XLINK = "http://www.w3.org/1999/xlink"


def when(index: int) -> datetime:
    """The date of entry ``index`` of a build (UTC): one minute apart, newest first."""
    return BASE_DATE - timedelta(minutes=index)


@dataclass(frozen=True)
class Feed:
    """One site of a build: its name and home page, and the document served at ``path``."""

    path: str
    body: str
    content_type: str
    site_name: str = "Hostile"
    site_link: str | None = HOME
    query: str = ""  # appended to the feed URL in sites.yaml
    status: int = 200


@dataclass(frozen=True)
class Build:
    """One `syndicator build`: its feeds, the payload of each entry, and extra settings.

    ``payloads[i]`` is carried by the entry dated ``when(i)``; ``titles`` says
    whether entry titles carry it (with the word "Headline").
    """

    name: str
    feeds: tuple[Feed, ...]
    payloads: tuple[Payload, ...]
    titles: bool = False
    settings: dict[str, Any] = field(default_factory=dict)


def _esc(text: str) -> str:
    """Text as XML character data (the value arrives exactly as given)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cdata(text: str) -> str:
    """Text as one CDATA section; a "]]>" inside is split across two sections."""
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def _raw_attr(url: Payload) -> str:
    """A URL payload written raw into a double-quoted XML attribute (references kept)."""
    return url.text.replace('"', "&quot;").replace("<", "&lt;")


def _rfc822(index: int) -> str:
    return format_datetime(when(index), usegmt=True)


def _iso(index: int) -> str:
    return when(index).strftime("%Y-%m-%dT%H:%M:%SZ")


def urls_html(url: str) -> str:
    """HTML that puts ``url`` in every URL attribute an allowed element has."""
    return (
        f'<p><a href="{url}">link</a> <img src="{url}" alt="i"> <img srcset="{url} 2x" alt="s"></p>'
        f'<blockquote cite="{url}">q</blockquote><q cite="{url}">c</q><del cite="{url}">d</del>'
    )


# --- RSS ------------------------------------------------------------------------


def rss_markup(cdata: bool) -> Build:
    """Markup payloads in RSS titles, descriptions, content:encoded and authors (CDATA or escaped)."""
    wrap = _cdata if cdata else _esc
    name = "rss-cdata" if cdata else "rss"
    items = []
    for i, p in enumerate(MARKUP):
        item = {
            "title": wrap(p.with_word("Headline")),
            "link": f"{HOME}posts/{i}",
            "guid isPermaLink='false'": f"urn:xss:{name}:{i}",
            "pubDate": _rfc822(i),
            "description": wrap(p.with_word("Summary")),
        }
        if cdata:  # no content:encoded, so the description is the content too
            item["dc:creator"] = wrap(p.with_word("Writer"))
        else:
            item["content:encoded"] = wrap(p.with_word("Body"))
            item["author"] = wrap(p.with_word("Writer"))
        items.append(item)
    feed = Feed(f"/{name}.xml", rss(*items), RSS_TYPE)
    return Build(name, (feed,), tuple(MARKUP), titles=True, settings={"summary_chars": 20} if cdata else {})


def rss_urls(permalink: bool) -> Build:
    """URL payloads as RSS item links (or permalink guids), enclosures and URLs inside descriptions."""
    name = "rss-guid" if permalink else "rss-urls"
    items = []
    for i, u in enumerate(URLS):
        item = {
            "title": f"Link {i}",
            "pubDate": _rfc822(i),
            f'enclosure url="{_raw_attr(u)}" type="audio/mpeg" length="1"': "",
            "description": _esc(urls_html(u.text)),
        }
        if permalink:
            item["guid"] = u.text.replace("<", "&lt;")
        else:
            item["link"] = u.text.replace("<", "&lt;")
            item["guid isPermaLink='false'"] = f"urn:xss:{name}:{i}"
        items.append(item)
    return Build(name, (Feed(f"/{name}.xml", rss(*items), RSS_TYPE),), tuple(URLS))


def media_urls() -> Build:
    """URL payloads as Media RSS content (an image and an audio file), thumbnails and itunes:image.

    Each item has a title and no text, so the image it gives is shown and
    carried in every output (in the content too).
    """
    items = []
    for i, u in enumerate(URLS):
        url = _raw_attr(u)
        items.append(
            {
                "title": f"Media {i}",
                "pubDate": _rfc822(i),
                "guid isPermaLink='false'": f"urn:xss:m:{i}",
                "link": f"{HOME}media/{i}",
                "description": "",
                f'media:content url="{url}" medium="image"': "",
                f'media:content url="{url}" type="audio/mpeg"': "",
                f'media:thumbnail url="{url}"': "",
                f'itunes:image href="{url}"': "",
            }
        )
    body = rss(*items).replace(
        '<rss version="2.0"',
        '<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" '
        'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"',
        1,
    )
    return Build("media-urls", (Feed("/media-urls.xml", body, RSS_TYPE),), tuple(URLS))


# --- Atom -----------------------------------------------------------------------


def _atom(entries: list[str], title: str = "Hostile Atom", link: str = HOME) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        f'<feed xmlns="http://www.w3.org/2005/Atom" xmlns:xlink="{XLINK}">'
        f'<title type="text">{title}</title><link href="{link}"/><id>urn:xss:feed</id>'
        f"<updated>{_iso(0)}</updated>{''.join(entries)}</feed>"
    )


def _xhtml_div(markup: str) -> str | None:
    """``markup`` inside an XHTML div when it is well-formed XML there, else None."""
    div = f'<div xmlns="{XHTML}" xmlns:xlink="{XLINK}">{markup}</div>'
    try:
        ET.fromstring(div)
    except ET.ParseError:
        return None
    return div


def _atom_text(tag: str, value: str, kind: str) -> str:
    """An Atom text construct: type html (escaped), xhtml (if well-formed, else text) or text."""
    if kind == "xhtml" and (div := _xhtml_div(value)) is not None:
        return f'<{tag} type="xhtml">{div}</{tag}>'
    return f'<{tag} type="{"html" if kind == "html" else "text"}">{_esc(value)}</{tag}>'


def atom_markup(kind: str) -> Build:
    """Markup payloads in Atom titles, summaries, content and author names.

    ``kind`` "html": every text construct typed html. "xhtml": titles and
    content typed xhtml where the payload is well-formed XML (text where it
    is not), summaries typed text.
    """
    name = f"atom-{kind}"
    entries = []
    for i, p in enumerate(MARKUP):
        entries.append(
            f"<entry><id>urn:xss:{name}:{i}</id>{_atom_text('title', p.with_word('Headline'), kind)}"
            f'<link rel="alternate" href="{HOME}posts/{i}"/><published>{_iso(i)}</published>'
            f"<updated>{_iso(i)}</updated><author><name>{_esc(p.with_word('Writer'))}</name></author>"
            f"{_atom_text('summary', p.with_word('Summary'), 'html' if kind == 'html' else 'text')}"
            f"{_atom_text('content', p.with_word('Body'), kind)}</entry>"
        )
    settings = {} if kind == "html" else {"summary_chars": 20}
    return Build(
        name, (Feed(f"/{name}.xml", _atom(entries), ATOM_TYPE),), tuple(MARKUP), titles=True, settings=settings
    )


def atom_urls() -> Build:
    """URL payloads as Atom entry xml:base, alternate and enclosure links, and inside content."""
    entries = []
    for i, u in enumerate(URLS):
        url = _raw_attr(u)
        content = _esc('<p><a href="relative/more">more</a><img src="pic.png" alt="p"></p>' + urls_html(u.text))
        entries.append(
            f'<entry xml:base="{url}"><id>urn:xss:atom-urls:{i}</id><title>Link {i}</title>'
            f'<link rel="alternate" href="{url}"/><link rel="enclosure" href="{url}" length="1"/>'
            f"<published>{_iso(i)}</published><updated>{_iso(i)}</updated>"
            f'<content type="html">{content}</content></entry>'
        )
    return Build("atom-urls", (Feed("/atom-urls.xml", _atom(entries), ATOM_TYPE),), tuple(URLS))


# --- JSON Feed ------------------------------------------------------------------


def _json(items: list[dict[str, Any]], title: str = "Hostile JSON", home: str = HOME, version: str = "1.1") -> str:
    return json.dumps(
        {"version": f"https://jsonfeed.org/version/{version}", "title": title, "home_page_url": home, "items": items}
    )


def json_markup(text: bool) -> Build:
    """Markup payloads in JSON Feed titles, content_html (or content_text), summaries and authors."""
    name = "json-text" if text else "json"
    items = []
    for i, p in enumerate(MARKUP):
        item: dict[str, Any] = {
            "id": f"urn:xss:{name}:{i}",
            "url": f"{HOME}posts/{i}",
            "title": p.with_word("Headline"),
            "date_published": _iso(i),
        }
        if text:  # JSON Feed 1.0 author object, plain-text content
            item.update(content_text=p.with_word("Body"), author={"name": p.with_word("Writer")})
        else:
            item.update(
                content_html=p.with_word("Body"),
                summary=p.with_word("Summary"),
                authors=[{"name": p.with_word("Writer")}],
            )
        items.append(item)
    body = _json(items, version="1" if text else "1.1")
    return Build(
        name,
        (Feed(f"/{name}.json", body, JSON_TYPE),),
        tuple(MARKUP),
        titles=True,
        settings={"summary_chars": 20} if text else {},
    )


def json_urls() -> Build:
    """URL payloads as JSON Feed url, external_url, attachment, image and banner_image URLs and inside content_html.

    JSON has no character references, so each value is given decoded, as the
    XML parser hands it over in the RSS and Atom builds.
    """
    items = []
    for i, u in enumerate(URLS):
        url = html.unescape(u.text)
        items.append(
            {
                "id": f"urn:xss:json-urls:{i}",
                "title": f"Link {i}",
                "url": url,
                "external_url": url,
                "date_published": _iso(i),
                "content_html": urls_html(url),
                "attachments": [{"url": url, "mime_type": "audio/mpeg"}],
                "image": url,
                "banner_image": url,
            }
        )
    return Build("json-urls", (Feed("/json-urls.json", _json(items), JSON_TYPE),), tuple(URLS))


# --- Feed-level fields and sites.yaml --------------------------------------------


def feed_fields() -> Build:
    """URL payloads as each feed's own link (the base of its relative URLs), markup as its title.

    One site per (format, URL payload), each feed with one entry whose link,
    content link and image are relative.
    """
    feeds: list[Feed] = []
    payloads: list[Payload] = []
    for u in URLS:
        for fmt in ("rss", "atom", "json"):
            k = len(payloads)
            title = MARKUP[k % len(MARKUP)].with_word("Channel")
            content = '<p><a href="more">more</a> <img src="pic.png" alt="p"></p>'
            if fmt == "rss":
                item = {
                    "title": f"Entry {k}",
                    "link": f"posts/{k}",
                    "guid isPermaLink='false'": f"urn:xss:f:{k}",
                    "pubDate": _rfc822(k),
                    "description": _esc(content),
                }
                body, kind = rss(item, title=_esc(title), link=u.text.replace("<", "&lt;")), RSS_TYPE
            elif fmt == "atom":
                entry = (
                    f'<entry><id>urn:xss:f:{k}</id><title>Entry {k}</title><link href="posts/{k}"/>'
                    f'<updated>{_iso(k)}</updated><content type="html">{_esc(content)}</content></entry>'
                )
                body, kind = _atom([entry], title=_esc(title), link=_raw_attr(u)), ATOM_TYPE
            else:
                item = {
                    "id": f"urn:xss:f:{k}",
                    "title": f"Entry {k}",
                    "url": f"posts/{k}",
                    "date_published": _iso(k),
                    "content_html": content,
                }
                body, kind = _json([item], title=title, home=html.unescape(u.text)), JSON_TYPE
            feeds.append(Feed(f"/feeds/{k}", body, kind, site_name=f"Feed {fmt} {u.id}", site_link=None))
            payloads.append(Payload(f"{fmt}/{u.id}", u.text))
    return Build("feed-fields", tuple(feeds), tuple(payloads))


#: The planet's title in the sites build: sites.yaml is trusted, and still escaped everywhere.
PLANET_TITLE = '</title><script>alert("planet")</script>Planet & "Co" <b>'
#: An HTML page served as a feed, advertising hostile alternates: its error shows on sites.html.
NOT_A_FEED = (
    '<!DOCTYPE html><html><head><base href="javascript:alert(1)//">'
    '<link rel="alternate" type="application/rss+xml" href="javascript:alert(2)">'
    '<link rel="alternate" type="application/atom+xml" '
    "href='https://ok.example/feed\"><script>alert(3)</script>'></head><body>x</body></html>"
)


def site_names() -> Build:
    """Markup payloads as site names in sites.yaml, with attribute-breaking site and feed URLs.

    Entry ``i`` (no author, so the site name stands in) comes from site
    ``i``; two more sites fail, one with an HTML page advertising hostile
    feeds, so their errors show on sites.html.
    """
    feeds = []
    for i, p in enumerate(MARKUP):
        item = {
            "title": f"Entry {i}",
            "link": f"{HOME}sites/{i}",
            "guid isPermaLink='false'": f"urn:xss:s:{i}",
            "pubDate": _rfc822(i),
            "description": "Hello",
        }
        feeds.append(
            Feed(
                f"/sites/{i}.xml",
                rss(item),
                RSS_TYPE,
                site_name=p.with_word("Site"),
                site_link=f'https://site{i}.example/"><script>alert({i})</script>',
                query=f'?q="><svg/onload=alert({i})>',
            )
        )
    feeds.append(Feed("/sites/page.html", NOT_A_FEED, "text/html", site_name="Not a feed <b>"))
    feeds.append(Feed("/sites/gone.xml", "gone", "text/plain", site_name="Gone <i>", status=404))
    return Build("sites", tuple(feeds), tuple(MARKUP), settings={"title": PLANET_TITLE})


def all_builds() -> dict[str, Build]:
    """Every build of the battery by name."""
    builds = [
        rss_markup(cdata=False),
        rss_markup(cdata=True),
        rss_urls(permalink=False),
        rss_urls(permalink=True),
        media_urls(),
        atom_markup("html"),
        atom_markup("xhtml"),
        atom_urls(),
        json_markup(text=False),
        json_markup(text=True),
        json_urls(),
        feed_fields(),
        site_names(),
    ]
    return {b.name: b for b in builds}
