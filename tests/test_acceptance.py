"""Acceptance: every feed of the real-world corpus, served over loopback, through one build.

The corpus lives beside the repository (``../shared/corpus``) or where
``SYNDICATOR_CORPUS`` points; without it these tests skip. A feed
*contributes* when its entries reach feed.xml, either credited to its own
site or, for a post that several corpus feeds carry (the same blog as RSS,
Atom and JSON Feed), credited to another site that carries the same post.
"""

from __future__ import annotations

import csv
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.state.store import Store
from syndicator.urls import canonical as canonical_url

from .conftest import ATOM, build, loopback_server, write_config

CORPUS = Path(os.environ.get("SYNDICATOR_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
#: Share of the corpus feeds with items that must contribute entries.
REQUIRED_SHARE = 0.95
_TYPES = {".json": "application/feed+json", ".html": "text/html", ".htm": "text/html"}

pytestmark = pytest.mark.skipif(
    not (CORPUS / "MANIFEST.tsv").is_file() or not (CORPUS / "feeds").is_dir(),
    reason=f"the real-world feed corpus is absent ({CORPUS}); set SYNDICATOR_CORPUS",
)


@dataclass(frozen=True)
class CorpusFeed:
    """One row of MANIFEST.tsv for a file under feeds/."""

    file: str  # e.g. "feeds/0001-nnw-3960.json"
    format: str
    items: int | None  # the manifest's items=N, or None when it gives none

    @property
    def name(self) -> str:
        return Path(self.file).name


def corpus_feeds() -> list[CorpusFeed]:
    with (CORPUS / "MANIFEST.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    feeds = []
    for row in rows:
        if not row["file"].startswith("feeds/"):
            continue
        found = re.search(r"\bitems=(\d+)", row["notes"] or "")
        feeds.append(CorpusFeed(row["file"], row["format"], int(found.group(1)) if found else None))
    return feeds


@pytest.fixture(scope="module")
def corpus_server() -> Iterator[HTTPServer]:
    """Its own loopback server: /feeds/NAME answers with the corpus file, byte for byte."""

    def serve(request: Request) -> Response:
        path = CORPUS / "feeds" / Path(request.path).name
        if not path.is_file():
            return Response("not in the corpus", status=404)
        return Response(path.read_bytes(), content_type=_TYPES.get(path.suffix, "application/xml"))

    def setup(http: HTTPServer) -> None:
        http.expect_request(re.compile(r"^/feeds/[^/]+$")).respond_with_handler(serve)

    with loopback_server(setup=setup) as http:
        yield http


@dataclass(frozen=True)
class CorpusBuild:
    feeds: list[CorpusFeed]
    urls: dict[str, str]  # file name -> feed URL
    output: Path
    cache: Path
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def corpus_build(corpus_server: HTTPServer, tmp_path_factory: pytest.TempPathFactory) -> CorpusBuild:
    """One build of the whole corpus, one site per feed, with feed_entries high enough, and every entry of
    each first fetch published (new_feed_items: all), to hide nothing."""
    folder = tmp_path_factory.mktemp("corpus")
    feeds = corpus_feeds()
    urls = {feed.name: corpus_server.url_for(f"/feeds/{feed.name}") for feed in feeds}
    sites = [{"name": feed.name, "feed": urls[feed.name]} for feed in feeds]
    # Every feed is on one loopback host: lift the per-host politeness that would pace them (0.5 s apart).
    config = write_config(
        folder,
        sites,
        feed_entries=100_000,
        new_feed_items="all",
        timeout=5,
        retries=0,
        per_host_concurrency=8,
        host_gap=0,
        host_breaker=0,
    )
    result = build(config, "-q")
    return CorpusBuild(feeds, urls, folder / "public", folder / "cache", result.exit_code, result.stdout, result.stderr)


def test_corpus_build_succeeds_and_feed_xml_parses(corpus_build: CorpusBuild) -> None:
    assert corpus_build.exit_code == 0, corpus_build.stderr[-2000:]
    root = ET.parse(corpus_build.output / "feed.xml").getroot()
    assert root.tag == f"{ATOM}feed"
    assert len(root.findall(f"{ATOM}entry")) > len(corpus_build.feeds)


def test_corpus_feeds_with_items_contribute_entries(corpus_build: CorpusBuild) -> None:
    assert corpus_build.exit_code == 0, corpus_build.stderr[-2000:]
    root = ET.parse(corpus_build.output / "feed.xml").getroot()
    credited: set[str] = set()
    published: set[str] = set()
    for entry in root.findall(f"{ATOM}entry"):
        credited.add(entry.findtext(f"{ATOM}source/{ATOM}id") or "")
        published.add(entry.findtext(f"{ATOM}id") or "")
        link = entry.find(f"{ATOM}link")
        if link is not None:
            published.add(canonical_url(link.get("href", "")))
    with Store.open(corpus_build.cache) as store:
        states = store.states()
        snapshots = store.snapshots(corpus_build.urls.values())
    expected = [feed for feed in corpus_build.feeds if feed.items]
    missing: dict[str, str] = {}
    shared: list[str] = []
    for feed in expected:
        url = corpus_build.urls[feed.name]
        if url in credited:
            continue
        stored = snapshots[url]
        keys = {s.entry.id for s in stored} | {canonical_url(s.entry.link) for s in stored if s.entry.link}
        if keys & published:
            shared.append(feed.name)  # its posts are there, credited to another feed carrying the same post
            continue
        state = states.get(url)
        if state is not None and state.error_kind:
            missing[feed.name] = f"{state.error_kind}: {state.error_message}"
        else:
            missing[feed.name] = f"{len(stored)} entries stored, none in feed.xml"
    report = "\n".join(f"  {name}: {why}" for name, why in sorted(missing.items()))
    print(
        f"\n{len(expected) - len(missing)} of {len(expected)} corpus feeds with items contribute "
        f"({len(shared)} through posts credited to another feed: {', '.join(shared)}); "
        f"{len(missing)} do not:\n{report}"
    )
    assert len(expected) - len(missing) >= REQUIRED_SHARE * len(expected), report


def test_items_of_one_feed_sharing_a_link_all_contribute(corpus_build: CorpusBuild) -> None:
    """0167-spng-phd.xml: five undated items without guids, three linking to the same blog page."""
    name = "0167-spng-phd.xml"
    if name not in corpus_build.urls:
        pytest.skip(f"{name} is not in this corpus")
    assert corpus_build.exit_code == 0, corpus_build.stderr[-2000:]
    root = ET.parse(corpus_build.output / "feed.xml").getroot()
    credited = [
        entry
        for entry in root.findall(f"{ATOM}entry")
        if entry.findtext(f"{ATOM}source/{ATOM}id") == corpus_build.urls[name]
    ]
    assert len(credited) == 5
