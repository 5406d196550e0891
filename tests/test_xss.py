"""XSS battery: hostile payloads in every field a feed can carry, through the real CLI.

Payloads (tests/xss_payloads.py) go into RSS 2.0, Atom and JSON Feed
documents and sites.yaml (tests/xss_feeds.py: one build per field kind, one
entry per payload), served from a loopback server and built with
``syndicator build``. Every output is then parsed as a browser or feed
reader would (html5lib for HTML, see tests/xss_dom.py) and walked: no
element, attribute or URL that runs script, loads a document or style, or
submits anywhere survives, and a hostile title still shows its text.
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from copy import deepcopy as copy_element
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import html5lib
import pytest
from pytest_httpserver import HTTPServer

from syndicator.configtypes import OLD_FEEDS

from .conftest import build, loopback_server, write_config
from .xss_dom import (
    fragment_problems,
    page_problems,
    parse_page,
    tree_problems,
    url_problem,
    url_scheme,
    visible_text,
)
from .xss_feeds import PLANET_TITLE, Build, all_builds, urls_html, when
from .xss_payloads import INERT_AS_WRITTEN, MARKUP, URLS, Payload

ATOM = "{http://www.w3.org/2005/Atom}"
XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
BUILDS = all_builds()
#: Schemes that run or render script when followed; never in an entry's id either.
SCRIPT_SCHEMES = {"javascript", "vbscript", "data"}
#: Atom elements whose ``type`` says whether a reader renders them as HTML.
TEXT_CONSTRUCTS = {"title", "subtitle", "summary", "content", "rights"}


@dataclass(frozen=True)
class Case:
    """One payload in one build: the entry dated ``when(index)`` carries it."""

    build: str
    index: int
    payload: Payload

    def __str__(self) -> str:
        return f"{self.build}/{self.payload.id}"


def cases(predicate: Callable[[Build], bool] = lambda b: True) -> list[Case]:
    """Every (build, payload) pair of the builds ``predicate`` selects."""
    return [Case(b.name, i, p) for b in BUILDS.values() if predicate(b) for i, p in enumerate(b.payloads)]


@dataclass
class Outputs:
    """The published files of one build, parsed; entries keyed by their date (UTC)."""

    folder: Path
    index: ET.Element
    sites: ET.Element  # the maintainer's sites page (sites_page_details: true): its errors name what feeds sent
    readers_sites: str  # the sites page readers get (the default), as text
    articles: dict[datetime, ET.Element]
    atom: ET.Element
    atom_entries: dict[datetime, ET.Element]
    json_feed: dict[str, Any]
    json_items: dict[datetime, dict[str, Any]]
    opml: ET.Element


def _read(folder: Path, readers_sites: str) -> Outputs:
    index = parse_page((folder / "index.html").read_text(encoding="utf-8"))
    articles = {}
    for article in index.iter("article"):
        time = next(article.iter("time"))  # the first <time> is the entry's date, before any content
        articles[datetime.fromisoformat(time.attrib["datetime"])] = article
    atom = ET.parse(folder / "feed.xml").getroot()
    entries = {datetime.fromisoformat(e.findtext(f"{ATOM}published", "")): e for e in atom.iter(f"{ATOM}entry")}
    feed = json.loads((folder / "feed.json").read_text(encoding="utf-8"))
    items = {datetime.fromisoformat(item["date_published"]): item for item in feed["items"]}
    return Outputs(
        folder,
        index,
        parse_page((folder / "sites.html").read_text(encoding="utf-8")),
        readers_sites,
        articles,
        atom,
        entries,
        feed,
        items,
        ET.parse(folder / "opml.xml").getroot(),
    )


def _publish(http: HTTPServer, spec: Build, folder: Path) -> Outputs:
    """Serve the build's feeds, run `syndicator build` on them, and read what it published."""
    sites = []
    for feed in spec.feeds:
        http.expect_request(feed.path).respond_with_data(feed.body, status=feed.status, content_type=feed.content_type)
        site = {"name": feed.site_name, "feed": http.url_for(feed.path) + feed.query}
        if feed.site_link:
            site["link"] = feed.site_link
        sites.append(site)
    # every entry of each feed's first fetch published: each one is a case to check
    settings = {"items_per_feed": 100, "new_feed_items": "all", "feed_entries": 1000, "page_entries": 1000}
    settings = {**settings, "host_gap": 0, **spec.settings}
    result = build(write_config(folder, sites, old_feeds=list(OLD_FEEDS), **settings))
    assert result.exit_code == 0, result.output
    readers_sites = (folder / "public" / "sites.html").read_text(encoding="utf-8")
    # Again with the maintainer's sites page: nothing is due, the site is rendered again from the same state.
    result = build(write_config(folder, sites, old_feeds=list(OLD_FEEDS), sites_page_details=True, **settings))
    assert result.exit_code == 0, result.output
    return _read(folder / "public", readers_sites)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Outputs]]:
    """The outputs of a build by name; each build runs once for the whole module."""
    done: dict[str, Outputs] = {}
    with loopback_server() as http:

        def get(name: str) -> Outputs:
            if name not in done:
                done[name] = _publish(http, BUILDS[name], tmp_path_factory.mktemp(name))
            return done[name]

        yield get


# --- What is unsafe in each output ----------------------------------------------


def atom_problems(element: ET.Element) -> list[str]:
    """Active content in an Atom element and its descendants (feed.xml as a feed reader reads it).

    Text constructs typed html (or xhtml) are parsed as HTML; every link,
    ``uri``, ``icon``, ``logo`` and ``xml:base`` must be http(s).
    """
    problems = []
    for node in element.iter():
        name = node.tag.rsplit("}", 1)[-1]
        kind = node.get("type", "text")
        if name in TEXT_CONSTRUCTS and "html" in kind:
            markup = "".join(ET.tostring(c, "unicode") for c in node) if kind == "xhtml" else node.text or ""
            problems += [f"<{name} type={kind}>: {p}" for p in fragment_problems(markup)]
        urls = [(a, node.get(a, "")) for a in ("href", "src", XML_BASE) if a in node.attrib]
        if name in ("uri", "icon", "logo"):
            urls.append((name, node.text or ""))
        if name == "id" and url_scheme(node.text or "") in SCRIPT_SCHEMES:
            problems.append(f"<id>{node.text}</id>: readers that link an entry by its id would run it")
        problems += [f"<{name}> {p}" for a, v in urls if (p := url_problem("url", v, own_files=False))]
    return problems


#: RSS 1.0 and RDF attributes that hold a URL (rdf:about, rdf:resource), by their qualified names.
RDF_URLS = (
    "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}about",
    "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}resource",
)


def rss_problems(root: ET.Element) -> list[str]:
    """Active content in an RSS 2.0, RSS 1.0 or FOAF document (old_feeds): each description and
    content:encoded parsed as HTML; every link, guid taken as a permalink, url and href must be http(s),
    and no RDF name (rdf:about, rdf:resource: an entry's atom:id) may have a scheme that runs script."""
    problems = []
    for node in root.iter():
        name = node.tag.rsplit("}", 1)[-1]
        if name in ("description", "encoded"):
            problems += [f"<{name}>: {p}" for p in fragment_problems(node.text or "")]
        urls = [(a, node.get(a, "")) for a in ("url", "href") if a in node.attrib]
        for about in (node.get(a, "") for a in RDF_URLS if a in node.attrib):  # an entry's atom:id: a name, not a link
            if url_scheme(about) in SCRIPT_SCHEMES:
                problems.append(f"<{name}> {about}: readers that link an item by its name would run it")
        text = (node.text or "").strip()
        if (name == "link" and text) or (name == "source" and "url" not in node.attrib):  # dc:source: a URL
            urls.append((name, text))
        if name == "guid" and node.get("isPermaLink") == "true":
            urls.append((name, text))
        problems += [f"<{name}> {p}" for _, v in urls if (p := url_problem("url", v, own_files=False))]
    return problems


def json_problems(item: dict[str, Any]) -> list[str]:
    """Active content in a JSON Feed object: its HTML parsed, its URLs http(s) (recursive)."""
    problems = []
    for key, value in item.items():
        if isinstance(value, dict):
            problems += [f"{key}.{p}" for p in json_problems(value)]
        elif isinstance(value, list):
            problems += [f"{key}.{p}" for v in value if isinstance(v, dict) for p in json_problems(v)]
        elif key == "id" and url_scheme(str(value)) in SCRIPT_SCHEMES:
            problems.append(f"id: {value!r}: readers that link an item by its id would run it")
        elif key == "content_html":
            problems += [f"content_html: {p}" for p in fragment_problems(value)]
        elif key.endswith(("url", "_page_url")) or key in ("icon", "favicon", "image", "banner_image", "avatar"):
            problem = url_problem("url", value, own_files=False) if value is not None else None
            problems += [f"{key}: {problem}"] if problem else []
    return problems


def without_own_links(article: ET.Element) -> ET.Element:
    """A copy of an entry's <article> without the theme's own links into the planet's archive (the
    permalink on its date, its categories' pages): relative, and no part of the feed's content."""
    copy = copy_element(article)
    for parent in copy.iter():
        for child in list(parent):
            own = child.get("class") == "permalink" or (child.tag.endswith("a") and parent.tag.endswith("li"))
            if isinstance(child.tag, str) and own and (child.get("href") or "").startswith(("archive/", "categories/")):
                parent.remove(child)
    return copy


def entry_problems(out: Outputs, index: int) -> list[str]:
    """Everything unsafe about entry ``index`` in index.html, feed.xml and feed.json."""
    date = when(index)
    parts = [
        ("index.html", out.articles.get(date)),
        ("feed.xml", out.atom_entries.get(date)),
        ("feed.json", out.json_items.get(date)),
    ]
    problems = [f"{name}: entry not published" for name, part in parts if part is None]
    if (article := out.articles.get(date)) is not None:
        problems += [f"index.html: {p}" for p in tree_problems(without_own_links(article))]
    if (entry := out.atom_entries.get(date)) is not None:
        problems += [f"feed.xml: {p}" for p in atom_problems(entry)]
    if (item := out.json_items.get(date)) is not None:
        problems += [f"feed.json: {p}" for p in json_problems(item)]
    return problems


# --- The battery ----------------------------------------------------------------


def test_battery_size() -> None:
    assert len(MARKUP) + len(URLS) >= 60
    assert len({p.id for p in MARKUP + URLS}) == len(MARKUP) + len(URLS)  # ids name one payload each


@pytest.mark.parametrize("payload", MARKUP + URLS, ids=lambda p: p.id)
def test_checker_flags_each_payload_published_unsanitized(payload: Payload) -> None:
    """The checks can fail: each payload, as HTML (URLs inside every URL attribute), is flagged raw."""
    markup = payload.with_word("Body") if payload in MARKUP else urls_html(html.unescape(payload.text))
    assert bool(fragment_problems(markup)) is (payload.id not in INERT_AS_WRITTEN)


@pytest.mark.parametrize("case", cases(), ids=str)
def test_payload_is_inert_in_every_output(case: Case, published: Callable[[str], Outputs]) -> None:
    problems = entry_problems(published(case.build), case.index)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", cases(lambda b: b.titles), ids=str)
def test_hostile_title_still_shows_its_text(case: Case, published: Callable[[str], Outputs]) -> None:
    out = published(case.build)
    date = when(case.index)
    heading = next(out.articles[date].iter("h2"))
    assert "Headline" in visible_text(heading)
    title = out.atom_entries[date].find(f"{ATOM}title")
    assert title is not None and title.get("type") == "text" and "Headline" in (title.text or "")
    assert "Headline" in out.json_items[date]["title"]


@pytest.mark.parametrize("case", cases(lambda b: b.name == "sites"), ids=str)
def test_site_name_is_escaped_text(case: Case, published: Callable[[str], Outputs]) -> None:
    out = published("sites")
    name = " ".join(case.payload.with_word("Site").split())
    rows = [row for row in out.sites.iter("tr") if row.get("class") in ("ok", "stale")]
    cell = next(td for td in rows[case.index].iter("td") if td.get("class") == "site")
    assert visible_text(cell) == name
    readers = parse_page(out.readers_sites)
    assert name in [visible_text(td) for td in readers.iter("td") if td.get("class") == "site"]
    assert name in visible_text(out.articles[when(case.index)])
    source = out.atom_entries[when(case.index)].find(f"{ATOM}source/{ATOM}title")
    assert source is not None and " ".join((source.text or "").split()) == name
    assert " ".join(out.json_items[when(case.index)]["_source"]["title"].split()) == name
    outlines = out.opml.findall("body/outline")
    assert " ".join(outlines[case.index].get("text", "").split()) == name


@pytest.mark.parametrize("name", list(BUILDS))
def test_whole_outputs_are_inert(name: str, published: Callable[[str], Outputs]) -> None:
    out = published(name)
    expected = {when(i) for i in range(len(BUILDS[name].payloads))}
    assert set(out.articles) == expected and set(out.atom_entries) == expected and set(out.json_items) == expected
    for page in ("index.html", "sites.html"):
        assert page_problems((out.folder / page).read_text(encoding="utf-8")) == [], page
    assert page_problems(out.readers_sites) == []
    for old in ("rss20.xml", "rss10.xml", "foafroll.xml"):
        assert rss_problems(ET.parse(out.folder / old).getroot()) == [], old
    assert [p for entry in ET.parse(out.folder / "atom.xml").getroot() for p in atom_problems(entry)] == []
    # Entries are checked one by one above; here the feeds' own elements and fields.
    assert [p for child in out.atom if child.tag != f"{ATOM}entry" for p in atom_problems(child)] == []
    assert json_problems({k: v for k, v in out.json_feed.items() if k != "items"}) == []
    opml_urls = [(k, v) for o in out.opml.iter("outline") for k, v in o.attrib.items() if k.endswith("Url")]
    assert [p for k, v in opml_urls if (p := url_problem(k, v, own_files=False))] == []


def test_planet_title_is_escaped_text(published: Callable[[str], Outputs]) -> None:
    out = published("sites")
    title = " ".join(PLANET_TITLE.split())
    assert visible_text(next(out.index.iter("title"))) == title
    assert visible_text(next(out.index.iter("h1"))) == title
    assert out.atom.findtext(f"{ATOM}title") == title
    assert out.json_feed["title"] == title
    assert out.opml.findtext("head/title") == title


# --- Enclosures and images beside the text ------------------------------------------


def _media_urls(out: Outputs, index: int) -> tuple[list[str], list[str], list[str]]:
    """The enclosure URLs of entry ``index`` in index.html (links and players), feed.xml and feed.json."""
    date = when(index)
    page = [
        e.get("href") or e.get("src") or ""
        for p in out.articles[date].iter("p")
        if p.get("class") == "enclosure"
        for e in p.iter()
        if e.tag in ("a", "audio", "video")
    ]
    atom = [
        link.get("href", "") for link in out.atom_entries[date].findall(f"{ATOM}link") if link.get("rel") == "enclosure"
    ]
    json_feed = [a["url"] for a in out.json_items[date].get("attachments", [])]
    return page, atom, json_feed


#: URL payloads that resolve to a usable http(s) URL, and some that never may.
RESOLVE_TO_WEB = {"relative-path", "quote-break-double", "javascript-in-query"}
NEVER_WEB = {"javascript", "javascript-upper", "vbscript", "data-html", "data-upper", "file", "mailto"}


@pytest.mark.parametrize("name", ["rss-urls", "rss-guid", "media-urls", "atom-urls", "json-urls"])
def test_enclosure_urls_reach_every_output_as_web_urls_only(name: str, published: Callable[[str], Outputs]) -> None:
    out = published(name)
    for index, payload in enumerate(BUILDS[name].payloads):
        page, atom, json_feed = _media_urls(out, index)
        assert sorted(set(page)) == sorted(atom) == sorted(json_feed), payload.id
        assert all(url_scheme(url) in ("http", "https") for url in page), payload.id
        if payload.id in RESOLVE_TO_WEB:
            assert len(atom) == 1, payload.id
        if payload.id in NEVER_WEB:
            assert atom == [], payload.id


def _image_urls(out: Outputs, index: int) -> tuple[list[str], list[str], list[str]]:
    """The image beside the text of entry ``index``: on index.html, leading feed.xml's content, in feed.json."""
    date = when(index)
    page = [
        img.get("src", "") for p in out.articles[date].iter("p") if p.get("class") == "image" for img in p.iter("img")
    ]
    content = html5lib.parseFragment(
        out.atom_entries[date].findtext(f"{ATOM}content") or "", namespaceHTMLElements=False
    )
    atom = [img.get("src", "") for img in content.iter("img") if "src" in img.attrib][:1]
    item = out.json_items[date]
    return page, atom, [item["image"]] if "image" in item else []


@pytest.mark.parametrize("name", ["media-urls", "json-urls"])
def test_image_urls_reach_every_output_as_web_urls_only(name: str, published: Callable[[str], Outputs]) -> None:
    out = published(name)
    for index, payload in enumerate(BUILDS[name].payloads):
        page, atom, json_feed = _image_urls(out, index)
        assert all(url_scheme(url) in ("http", "https") for url in page + atom + json_feed), payload.id
        if payload.id in RESOLVE_TO_WEB:
            assert len(json_feed) == 1, payload.id
            # Shown and put in the content only where the text shows no image of its own.
            assert page == atom == json_feed if name == "media-urls" else page == [], payload.id
        if payload.id in NEVER_WEB:
            assert page == json_feed == [], payload.id
