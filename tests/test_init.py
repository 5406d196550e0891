"""Moving in: ``syndicator init`` writes sites.yaml from an old planet's config (Planet Venus, Planet 2.0,
pluto, rawdog, OPML), and a site without a ``link`` shows its feed's own home page, through the real CLI.

The configs are small fixtures written here; the feeds are served by the loopback test server. The
corpus tests read shared/corpus/opml (``SYNDICATOR_CORPUS``, else ``../shared/corpus`` beside the
repository) and skip when it is absent.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.config.load import load_config
from syndicator.configtypes import Site

from .conftest import build, post, rss, write_config


def _atom(link: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>C</title>'
        f'<id>urn:c</id><updated>2026-11-01T10:00:00Z</updated><link rel="alternate" href="{link}"/>'
        "<entry><title>C post</title><id>urn:c:1</id><link href='https://c.example.org/1'/>"
        "<updated>2026-11-01T10:00:00Z</updated></entry></feed>"
    )


def _json_feed(home: str) -> str:
    item = {"id": "b1", "url": "https://b.example.org/1", "title": "B post", "date_published": "2026-11-02T10:00:00Z"}
    return json.dumps(
        {"version": "https://jsonfeed.org/version/1.1", "title": "B", "home_page_url": home, "items": [item]}
    )


def test_a_site_without_link_shows_its_feeds_home_page_on_every_page(tmp_path: Path, server: HTTPServer) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1), link="https://a.example.org/"))
    server.expect_request("/b.json").respond_with_data(
        _json_feed("https://b.example.org/"), content_type="application/feed+json"
    )
    server.expect_request("/c.atom").respond_with_data(_atom("https://feed-says.example.org/"))
    server.expect_request("/d.xml").respond_with_data(rss(post(4, host="d.example.org"), link="javascript:alert(1)"))
    sites = [
        {"name": "Alpha", "feed": server.url_for("/a.xml")},
        {"name": "Beta", "feed": server.url_for("/b.json")},
        {"name": "Gamma", "feed": server.url_for("/c.atom"), "link": "https://own.example.org/"},
        {"name": "Delta", "feed": server.url_for("/d.xml")},
    ]
    config = write_config(tmp_path, sites)
    result = build(config)
    assert result.exit_code == 0, result.output
    public = tmp_path / "public"
    for page in ("index.html", "sites.html", "opml.xml", "feed.xml"):
        text = (public / page).read_text(encoding="utf-8")
        assert "https://a.example.org/" in text, page
        assert "https://b.example.org/" in text, page
        assert "https://own.example.org/" in text, page  # the link sites.yaml gives wins
        assert "https://feed-says.example.org/" not in text, page
        assert "javascript:" not in text, page  # only an http(s) home page is taken
    sites_page = (public / "sites.html").read_text(encoding="utf-8")
    assert '<a href="https://a.example.org/" rel="noopener noreferrer"><bdi>Alpha</bdi></a>' in sites_page
    assert "<bdi>Delta</bdi></td>" in sites_page  # no link: a name alone
    opml = (public / "opml.xml").read_text(encoding="utf-8")
    assert 'htmlUrl="https://b.example.org/"' in opml


# --- syndicator init ---------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("SYNDICATOR_CORPUS") or ROOT.parent / "shared" / "corpus")

VENUS = """\
[Planet]
name = Planet Grün
link = https://planet.example.org/
owner_name = Zoë Ørsted
owner_email = zoe@example.org
items_per_page = 25
date_format = %B %d, %Y %I:%M %p
activity_threshold = 90
feed_timeout = 20
spider_threads = 4
log_level = DEBUG
template_files = index.html.tmpl rss20.xml.tmpl

[index.html.tmpl]
days_per_page = 7

[{alpha}]
name = Alex Grönholm
face = alex.png
facewidth = 80

[{beta}]
name = Łukasz Langa
filters = excerpt.py

[https://lists.example.org/blogroll.opml]
content_type = opml
"""


def run(*args: str) -> Result:
    """``syndicator ARGS`` through the real CLI."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_init_writes_a_whole_sites_yaml_from_a_venus_config(tmp_path: Path) -> None:
    old = tmp_path / "config.ini"
    old.write_text(VENUS.format(alpha="https://alpha.example.org/feed", beta="https://beta.example.org/feed"), "utf-8")
    new = tmp_path / "sites.yaml"
    result = run("init", str(old), "--output", str(new))
    assert result.exit_code == 0, result.output
    config = load_config(new)
    assert (config.title, config.link, config.owner) == ("Planet Grün", "https://planet.example.org/", "Zoë Ørsted")
    assert (config.page_entries, config.activity_threshold, config.timeout, config.workers) == (25, 90 * 86400, 20, 4)
    assert config.date_format == "%B %d, %Y %I:%M %p"
    assert config.old_feeds == ("rss20.xml",)  # template_files: its rss20.xml subscribers keep their feed
    assert config.sites == (
        Site("Alex Grönholm", "https://alpha.example.org/feed", face="alex.png", extra={"facewidth": "80"}),
        Site("Łukasz Langa", "https://beta.example.org/feed"),
    )
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"wrote {new} from {old} (Planet Venus / Planet 2.0 INI): 2 sites, 0 with a link")
    for expected in (
        "not supported: owner_email = zoe@example.org (the pages show no e-mail address",
        "not supported: log_level = DEBUG (",
        "not supported: per-site filters, on 1 sites (write them again as rules of filters, see docs/filters.md)",
        "not supported: [index.html.tmpl] section (",
        "not supported: reading list <https://lists.example.org/blogroll.opml> (",
        "note: 1 faces are image files (alex.png): put them in a static/ folder beside sites.yaml",
    ):
        assert any(line.startswith(expected) for line in lines), expected
    text = new.read_text(encoding="utf-8")
    for line in lines[1:]:
        assert f"#   {line}\n" in text  # every note is in the file too
    assert "title: Planet Grün  # name\n" in text
    assert "\\u" not in text and "\\x" not in text


def _venus_bytes(encoding: str) -> bytes:
    text = VENUS.format(alpha="https://alpha.example.org/feed", beta="https://beta.example.org/feed")
    if encoding != "utf-8":  # latin-1 has no Ł: a name it has instead
        text = text.replace("Łukasz Langa", "François Pinard").replace(
            "[Planet]\n", f"[Planet]\nencoding = {encoding}\n"
        )
    return text.encode(encoding)


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_non_ascii_names_survive_byte_for_byte_into_sites_yaml_and_the_pages(
    tmp_path: Path, server: HTTPServer, encoding: str
) -> None:
    data = _venus_bytes(encoding).replace(b"https://alpha.example.org/feed", server.url_for("/a.xml").encode())
    data = data.replace(b"https://beta.example.org/feed", server.url_for("/b.xml").encode())
    old = tmp_path / "config.ini"
    old.write_bytes(data)
    server.expect_request("/a.xml").respond_with_data(rss(post(1), link="https://alpha.example.org/"))
    server.expect_request("/b.xml").respond_with_data(
        rss(post(2, host="beta.example.org"), link="https://b.example.org/")
    )
    assert run("init", str(old), "-o", str(tmp_path / "sites.yaml")).exit_code == 0
    names = [site.name for site in load_config(tmp_path / "sites.yaml").sites]
    assert [name.encode(encoding) for name in names] == [
        line.split(b" = ", 1)[1] for line in data.splitlines() if line.startswith(b"name = ") and b"Planet" not in line
    ]
    assert all(name.encode("utf-8") in (tmp_path / "sites.yaml").read_bytes() for name in names)
    assert build(tmp_path / "sites.yaml").exit_code == 0
    for page in ("index.html", "sites.html", "opml.xml", "feed.xml"):
        text = (tmp_path / "public" / page).read_text(encoding="utf-8")
        assert all(name in text for name in names), page
    sites_page = (tmp_path / "public" / "sites.html").read_text(encoding="utf-8")
    assert '<a href="https://alpha.example.org/" rel="noopener noreferrer"><bdi>Alex Grönholm</bdi></a>' in sites_page


PLUTO = """\
title = Planet Ünïcode
author = Die Crew

[jane]
  title    = Jane Doe-Müller
  feed     = https://jane.example.org/feed.xml
  link     = https://jane.example.org/
  avatar   = https://faces.example.org/jane.png
  author   = irc:jane member
  location = de
  includes = linux|suse

[joe]
  name     = Joe
  feed_url = https://joe.example.org/atom.xml
  url      = https://joe.example.org/
  face     = joe.png
"""


def test_init_keeps_pluto_avatars_and_authors_and_needs_a_link(tmp_path: Path) -> None:
    old = tmp_path / "planet.ini"
    old.write_text(PLUTO, encoding="utf-8")
    new = tmp_path / "sites.yaml"
    refused = run("init", str(old), "-o", str(new))
    assert refused.exit_code == 2
    assert refused.stderr == (
        f"syndicator: error: {old}: names no public home page (link) for the planet; give it with --link\n"
    )
    assert not new.exists()
    result = run("init", str(old), "-o", str(new), "--link", "https://planet.example.org/")
    assert result.exit_code == 0, result.output
    config = load_config(new)
    assert (config.title, config.owner) == ("Planet Ünïcode", "Die Crew")
    assert config.sites == (
        Site(
            "Jane Doe-Müller",
            "https://jane.example.org/feed.xml",
            "https://jane.example.org/",
            "https://faces.example.org/jane.png",
            {"author": "irc:jane member", "location": "de"},
        ),
        Site("Joe", "https://joe.example.org/atom.xml", "https://joe.example.org/", "joe.png"),
    )
    assert (
        "not supported: per-site includes, on 1 sites (write them again as rules of filters, see docs/filters.md)"
        in result.stdout
    )


def test_import_keeps_pluto_avatars_and_authors(tmp_path: Path) -> None:
    old = tmp_path / "planet.ini"
    old.write_text(PLUTO, encoding="utf-8")
    config = tmp_path / "sites.yaml"
    config.write_text("title: T\nlink: https://planet.example.org/\n", encoding="utf-8")
    assert run("import", str(old), "--config", str(config)).exit_code == 0
    jane = load_config(config).sites[0]
    assert (jane.face, jane.extra) == (
        "https://faces.example.org/jane.png",
        {"author": "irc:jane member", "location": "de"},
    )


RAWDOG = """\
# rawdog config
maxarticles 150
maxage 0
timeout 30s
numthreads 8
datetimeformat %H:%M, %A, %d %B
pagetemplate page.tmpl
include more-feeds
feeddefaults
\thttp_proxy http://proxy.example.org:3128/

feed 1h https://rené.example.org/feed.rss
\tdefine_name René Descartes
\tdefine_nick rené
feed 30m https://secret.example.org/feed user=bob password=hunter2 id=secret
feed 3h https://plain.example.org/feed format=text define_name=Plain
"""


def test_init_reads_a_rawdog_config(tmp_path: Path) -> None:
    old = tmp_path / "config"
    old.write_text(RAWDOG, encoding="utf-8")
    new = tmp_path / "sites.yaml"
    result = run("init", str(old), "-o", str(new), "--title", "Planet Raw", "--link", "https://raw.example.org/")
    assert result.exit_code == 0, result.output
    config = load_config(new)
    assert (config.title, config.page_entries, config.timeout, config.workers) == ("Planet Raw", 150, 30, 8)
    assert config.date_format == "%H:%M, %A, %d %B"
    assert config.sites == (
        Site("René Descartes", "https://rené.example.org/feed.rss", extra={"nick": "rené"}),
        Site("https://secret.example.org/feed", "https://secret.example.org/feed", extra={"id": "secret"}),
        Site("Plain", "https://plain.example.org/feed"),
    )
    lines = result.stdout.splitlines()
    for expected in (
        "not supported: maxage = 0 (",
        "not supported: pagetemplate = page.tmpl (",
        "not supported: per-site period, on 3 sites (syndicator learns how often each feed changes",
        "not supported: per-site http_proxy, on 3 sites (syndicator takes its proxy from the environment",
        "not supported: per-site user, on 1 sites (no HTTP authentication",
        "not supported: per-site format, on 1 sites (",
        "not supported: include more-feeds (add that file's feeds with syndicator import)",
    ):
        assert any(line.startswith(expected) for line in lines), expected
    assert "hunter2" not in new.read_text(encoding="utf-8") and "hunter2" not in result.stdout


OPML = """\
<?xml version="1.0" encoding="windows-1252"?>
<opml version="2.0"><head><title>Planet Caf\xe9</title><ownerName>Andr\xe9</ownerName>
<ownerEmail>andre@example.org</ownerEmail></head><body>
<outline text="Caf\xe9 &amp; Cr\xe8me" xmlUrl="https://cafe.example.org/feed" htmlUrl="https://cafe.example.org/"/>
<outline text="No home" xmlUrl="https://nohome.example.org/feed" htmlUrl=""/>
</body></opml>
"""


def test_init_reads_an_opml_list(tmp_path: Path) -> None:
    old = tmp_path / "list.opml"
    old.write_bytes(OPML.encode("cp1252"))
    new = tmp_path / "sites.yaml"
    result = run("init", str(old), "-o", str(new), "--link", "https://planet.example.org/")
    assert result.exit_code == 0, result.output
    config = load_config(new)
    assert (config.title, config.owner) == ("Planet Café", "André")
    assert config.sites == (
        Site("Café & Crème", "https://cafe.example.org/feed", "https://cafe.example.org/"),
        Site("No home", "https://nohome.example.org/feed"),
    )
    assert "not supported: owneremail = andre@example.org (" in result.stdout
    assert "1 with a link (the others show their feed's own home page after the first build)" in result.stdout


def test_init_never_overwrites_a_file_without_force(tmp_path: Path) -> None:
    old = tmp_path / "config.ini"
    old.write_text(VENUS.format(alpha="https://alpha.example.org/feed", beta="https://beta.example.org/feed"), "utf-8")
    new = tmp_path / "sites.yaml"
    new.write_text("# mine\n", encoding="utf-8")
    result = run("init", str(old), "-o", str(new))
    assert result.exit_code == 2
    assert result.stderr == (
        f"syndicator: error: {new}: already exists; give --force to replace it, or --output to write another file\n"
    )
    assert new.read_text(encoding="utf-8") == "# mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.ini", "sites.yaml"]
    assert run("init", str(old), "-o", str(new), "--force").exit_code == 0
    assert load_config(new).title == "Planet Grün"


def test_an_old_config_without_usable_feeds_writes_nothing(tmp_path: Path) -> None:
    old = tmp_path / "config.ini"
    old.write_text("[Planet]\nname = P\nlink = https://p.example.org/\n\n[ftp://x.example.org/f]\nname = X\n", "utf-8")
    result = run("init", str(old), "-o", str(tmp_path / "sites.yaml"))
    assert result.exit_code == 2
    assert result.stderr == f"syndicator: error: {old}: no feed with an http(s) URL to list; nothing was written\n"
    assert not (tmp_path / "sites.yaml").exists()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(
            "[Planet]\nname = P\nlink = https://p.example.org/\n[https://a.example.org/f\nname = A\n",
            "line 4: a section header without its closing ']'",
            id="unclosed-header",
        ),
        pytest.param(
            "[Planet]\nname = P\nlink = https://p.example.org/\n[https://a.example.org/f]\nname = A\n"
            "[https://a.example.org/f]\nname = B\n",
            "line 6: [https://a.example.org/f] is listed twice (a site would be lost)",
            id="same-section-twice",
        ),
    ],
)
def test_a_broken_section_is_refused_naming_its_line(tmp_path: Path, text: str, problem: str) -> None:
    old = tmp_path / "config.ini"
    old.write_text(text, "utf-8")
    result = run("init", str(old), "-o", str(tmp_path / "sites.yaml"))
    assert result.exit_code == 2
    assert result.stderr == f"syndicator: error: {old}: {problem}\n"
    assert not (tmp_path / "sites.yaml").exists()


def test_init_into_a_missing_folder_says_which(tmp_path: Path) -> None:
    old = tmp_path / "config.ini"
    old.write_text(VENUS.format(alpha="https://alpha.example.org/feed", beta="https://beta.example.org/feed"), "utf-8")
    result = run("init", str(old), "-o", str(tmp_path / "new" / "sites.yaml"))
    assert result.exit_code == 2
    assert result.stderr == (
        f"syndicator: error: {tmp_path / 'new' / 'sites.yaml'}: cannot write: there is no folder "
        f"{tmp_path.resolve() / 'new'}; create it first\n"
    )


def test_a_face_that_is_a_missing_image_file_is_a_warning_naming_the_site(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    sites = [{"name": "Henne", "feed": "a.xml", "face": "henne.png"}, {"name": "B", "feed": "a.xml", "face": "b.png"}]
    config = write_config(tmp_path, sites)
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "b.png").write_bytes(b"\x89PNG")
    result = build(config)
    assert result.exit_code == 0, result.output
    faces = [line for line in result.stderr.splitlines() if "its face" in line]
    assert faces == [
        f"syndicator: warning: {config}:5: sites[0] 'Henne': its face henne.png is not in {tmp_path / 'static'}; "
        "the pages show a broken image until it is there"
    ]
    (tmp_path / "static" / "henne.png").write_bytes(b"\x89PNG")
    assert "its face" not in build(config).stderr


# --- the real planets of the corpus ------------------------------------------------------------

LISTS = [
    ("01-planetpython-config.ini", [], 567),
    ("02-planetopenstack-planet-openstack-org.opml", ["--link", "https://planet.openstack.org/"], 217),
    ("03-planetopensuse-planet.ini", ["--link", "https://planet.opensuse.org/"], 204),
]


@pytest.mark.parametrize(("name", "options", "count"), LISTS)
def test_the_corpus_planets_move_in_without_a_garbled_name(
    tmp_path: Path, name: str, options: list[str], count: int
) -> None:
    source = CORPUS / "opml" / name
    if not source.exists():
        pytest.skip(f"corpus not found at {CORPUS} (set SYNDICATOR_CORPUS)")
    result = run("init", str(source), "-o", str(tmp_path / "sites.yaml"), *options)
    assert result.exit_code == 0, result.output
    sites = load_config(tmp_path / "sites.yaml").sites
    assert len(sites) == count
    raw = source.read_bytes()
    names = [re.sub(r" \(\d+\)$", "", site.name) for site in sites]  # " (2)": a name two sites had
    garbled = [name for name in names if name.encode() not in raw and html.escape(name).encode() not in raw]
    assert garbled == []
