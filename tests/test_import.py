"""syndicator import and add: subscription lists and feed URLs merged into sites.yaml, through the real CLI.

Every feed URL points at the loopback test server, so the builds here use
no network beyond 127.0.0.1. The corpus test reads shared/corpus/opml and
skips when it is absent.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.config.load import load_config
from syndicator.config.sites import NAME_MAX_CHARS
from syndicator.configtypes import Site

from .conftest import build, post, rss

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("SYNDICATOR_CORPUS") or ROOT.parent / "shared" / "corpus")

#: An existing planet with comments, aligned values, quotes, ``~`` and a setting after the sites.
PLANET = """\
# My planet: comments, spacing and order must survive an import.
title:   "Planet Test"     # aligned on purpose
link: https://planet.example.org/
sites:
  # the first site
  - name: Alpha
    feed: {alpha}
    link: ~
  - name: 'Beta'   # quoted
    feed: {beta}
  # - name: Disabled
  #   feed: https://disabled.example.org/feed

workers:    4   # after the sites
"""


def run(*args: str) -> Result:
    """``syndicator ARGS`` through the real CLI."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def planet(tmp_path: Path, server: HTTPServer) -> Path:
    """PLANET written to tmp_path/sites.yaml, its two feeds on the test server."""
    path = tmp_path / "sites.yaml"
    path.write_text(
        PLANET.format(alpha=server.url_for("/alpha.xml"), beta=server.url_for("/beta.xml")), encoding="utf-8"
    )
    return path


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def sites(config: Path) -> list[tuple[str, str, str | None]]:
    """(name, feed, link) of every site, as load_config reads the file."""
    return [(site.name, site.feed, site.link) for site in load_config(config).sites]


def folder_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- OPML --------------------------------------------------------------------------------------


def test_opml_nested_outlines_duplicates_bad_urls_and_name_collisions(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(tmp_path, server)
    before = config.read_text(encoding="utf-8")
    url = server.url_for
    port = server.port
    long_name = "L" * 300
    opml = write(
        tmp_path / "list.opml",
        f"""<?xml version="1.0" encoding="utf-8"?>
<opml version="2.0"><head><title>Feeds</title></head><body>
  <outline text="Blogs">
    <outline text="Alpha" xmlUrl="{url("/alpha2.xml")}" htmlUrl="{url("/alpha2/")}"/>
    <outline text="Alpha again" xmlUrl="HTTP://127.0.0.1:{port}/alpha.xml#top"/>
    <outline text="Deeper">
      <outline text="Gamma&#10;  Blog" xmlUrl="{url("/gamma.xml")}" htmlUrl="javascript:alert(1)"/>
      <outline text="Gamma copy" xmlUrl="{url("/gamma.xml")}"/>
      <outline text="Gamma tracked" xmlUrl="{url("/gamma.xml")}?utm_source=opml"/>
    </outline>
  </outline>
  <outline text="yes" xmlUrl="{url("/yes.xml")}"/>
  <outline text="{long_name}" xmlUrl="{url("/long.xml")}"/>
  <outline xmlUrl="{url("/untitled.xml")}"/>
  <outline text="Gopher" xmlUrl="gopher://gopher.example.org/feed"/>
  <outline text="Secret" xmlUrl="https://user:pw@secret.example.org/feed"/>
  <outline text="Spaced" xmlUrl="https://spaced.example.org/a feed"/>
  <outline text="Another list" type="source" xmlUrl="https://lists.example.org/more.opml"/>
</body></opml>
""",
    )
    result = run("import", str(opml), "--config", str(config))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    cut = "L" * (NAME_MAX_CHARS - 1) + "\u2026"
    assert result.stdout.splitlines() == [
        f"added Alpha (2) <{url('/alpha2.xml')}>",
        f"added Gamma Blog <{url('/gamma.xml')}>",
        f"added yes <{url('/yes.xml')}>",
        f"added {cut} <{url('/long.xml')}>",
        f"added {url('/untitled.xml')} <{url('/untitled.xml')}>",
        f"skipped Alpha again: <HTTP://127.0.0.1:{port}/alpha.xml#top> already listed as 'Alpha'",
        f"skipped Gamma copy: <{url('/gamma.xml')}> listed twice in {opml}",
        f"skipped Gamma tracked: <{url('/gamma.xml')}?utm_source=opml> listed twice in {opml}",
        "skipped Gopher: 'gopher://gopher.example.org/feed' is not an http(s) URL",
        "skipped Secret: credentials in a URL would be published on the site; remove the user:password@ part",
        "skipped Spaced: 'https://spaced.example.org/a feed' contains a space or a control character",
        "added 5 sites, skipped 6 (3 already listed, 3 not http(s) URLs)",
    ]
    assert sites(config) == [
        ("Alpha", url("/alpha.xml"), None),
        ("Beta", url("/beta.xml"), None),
        ("Alpha (2)", url("/alpha2.xml"), url("/alpha2/")),
        ("Gamma Blog", url("/gamma.xml"), None),  # a javascript: home page is dropped
        ("yes", url("/yes.xml"), None),  # quoted: PyYAML would read a bare yes as True
        (cut, url("/long.xml"), None),
        (url("/untitled.xml"), url("/untitled.xml"), None),
    ]
    block = (
        f"  - name: Alpha (2)\n    feed: {url('/alpha2.xml')}\n    link: {url('/alpha2/')}\n"
        f"  - name: Gamma Blog\n    feed: {url('/gamma.xml')}\n"
        f"  - name: 'yes'\n    feed: {url('/yes.xml')}\n"
        f"  - name: {cut}\n    feed: {url('/long.xml')}\n"
        f"  - name: {url('/untitled.xml')}\n    feed: {url('/untitled.xml')}\n"
    )
    # after the last site, before the comments that end the list
    assert config.read_text(encoding="utf-8") == before.replace("  # - name: Disabled", block + "  # - name: Disabled")

    for path in ("/alpha.xml", "/beta.xml", "/alpha2.xml", "/gamma.xml", "/yes.xml", "/long.xml", "/untitled.xml"):
        server.expect_request(path).respond_with_data(rss(post(len(path), host="127.0.0.1")))
    built = build(config)
    assert built.exit_code == 0, built.output
    assert built.stdout.startswith("7 sites: 7 feeds due, 7 requested (7 changed, 0 unchanged, 0 failed)")


def test_the_sites_keep_every_byte_and_the_new_ones_go_after_the_last_site(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(tmp_path, server)
    before = config.read_text(encoding="utf-8")
    opml = write(
        tmp_path / "one.opml",
        f'<opml version="1.0"><body><outline text="New: one" '
        f'xmlUrl="{server.url_for("/new.xml")}" htmlUrl="https://new.example.org/"/>'
        "</body></opml>",
    )
    assert run("import", str(opml), "--config", str(config)).exit_code == 0
    block = f"  - name: 'New: one'\n    feed: {server.url_for('/new.xml')}\n    link: https://new.example.org/\n"
    last_site = f"    feed: {server.url_for('/beta.xml')}\n"
    assert config.read_text(encoding="utf-8") == before.replace(last_site, last_site + block, 1)


@pytest.mark.parametrize(
    ("layout", "entry"),
    [
        pytest.param("sites:\n- name: A\n  feed: {a}\n", "- name: B\n  feed: {b}\n", id="no-indent"),
        pytest.param(
            "sites:\n    -   name: A\n        feed: {a}\n", "    -   name: B\n        feed: {b}\n", id="wide-indent"
        ),
        pytest.param("sites:\n  - {{name: A, feed: '{a}'}}\n", "  - name: B\n    feed: {b}\n", id="flow-entry"),
    ],
)
def test_new_entries_take_the_indentation_of_the_last_one(tmp_path: Path, layout: str, entry: str) -> None:
    head = "title: T\nlink: https://planet.example.org/\n"
    a, b = "https://a.example.org/feed", "https://b.example.org/feed"
    config = write(tmp_path / "sites.yaml", head + layout.format(a=a) + "# end\n")
    opml = write(tmp_path / "b.opml", f'<opml version="2.0"><body><outline text="B" xmlUrl="{b}"/></body></opml>')
    assert run("import", str(opml), "--config", str(config)).exit_code == 0
    assert config.read_text(encoding="utf-8") == head + layout.format(a=a) + entry.format(b=b) + "# end\n"
    assert [name for name, _feed, _link in sites(config)] == ["A", "B"]


def test_crlf_line_breaks_are_kept(tmp_path: Path) -> None:
    text = "title: T\r\nlink: https://planet.example.org/\r\nsites:\r\n  - name: A\r\n    feed: https://a.example.org/f\r\n"
    config = tmp_path / "sites.yaml"
    config.write_bytes(text.encode())
    opml = write(tmp_path / "b.opml", '<opml><body><outline text="B" xmlUrl="https://b.example.org/f"/></body></opml>')
    assert run("import", str(opml), "--config", str(config)).exit_code == 0
    assert config.read_bytes() == (text + "  - name: B\r\n    feed: https://b.example.org/f\r\n").encode()


@pytest.mark.parametrize(
    ("text", "result"),
    [
        pytest.param("", "sites:\n  - name: B\n", id="no-sites-key"),
        pytest.param("sites:\n", "sites:\n  - name: B\n", id="null"),
        pytest.param("sites: []   # none yet\n", "sites:   # none yet\n  - name: B\n", id="empty-list"),
        pytest.param("sites: ~\nworkers: 2\n", "sites:\n  - name: B\n    feed: F\nworkers: 2\n", id="tilde-then-key"),
    ],
)
def test_a_planet_without_sites_gets_a_sites_list(tmp_path: Path, text: str, result: str) -> None:
    head = "title: T\nlink: https://planet.example.org/\n"
    config = write(tmp_path / "sites.yaml", head + text)
    opml = write(tmp_path / "b.opml", '<opml><body><outline text="B" xmlUrl="https://b.example.org/f"/></body></opml>')
    done = run("import", str(opml), "--config", str(config))
    assert done.exit_code == 0, done.output
    assert config.read_text(encoding="utf-8").startswith(head + result.replace("F", "https://b.example.org/f"))
    assert sites(config) == [("B", "https://b.example.org/f", None)]


# --- planet INI files --------------------------------------------------------------------------


def test_venus_ini(tmp_path: Path) -> None:
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    ini = write(
        tmp_path / "config.ini",
        """\
# Planet Venus
[Planet]
name = Planet Example
link = https://planet.example.org/
filters = categories.py
template_files = themes/index.html.tmpl

[categories.py]
keep = python

[index.html.tmpl]
days_per_page = 7

[https://one.example.org/feed/]
name = One
link = https://one.example.org/

[https://two.example.org/atom.xml?tag=100%25]
name = "Two's Blog"

[HTTPS://ONE.example.org/feed/]
name = One again

[ftp://old.example.org/rss]
name = Old
""",
    )
    result = run("import", str(ini), "--config", str(config))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "added One <https://one.example.org/feed/>",
        "added Two's Blog <https://two.example.org/atom.xml?tag=100%25>",
        f"skipped One again: <HTTPS://ONE.example.org/feed/> listed twice in {ini}",
        "skipped Old: 'ftp://old.example.org/rss' is not an http(s) URL",
        "added 2 sites, skipped 2 (1 already listed, 1 not http(s) URLs)",
    ]
    assert sites(config) == [
        ("One", "https://one.example.org/feed/", "https://one.example.org/"),
        ("Two's Blog", "https://two.example.org/atom.xml?tag=100%25", None),
    ]


def test_pluto_ini(tmp_path: Path) -> None:
    config = write(
        tmp_path / "sites.yaml",
        "title: T\nlink: https://planet.example.org/\nsites:\n"
        "  - name: Ruby News\n    feed: https://news.example.org/feed\n",
    )
    ini = write(
        tmp_path / "planet.ini",
        """\
title = Planet Ruby

[planet]
  title = Planet Ruby

[rubyblog]
  title    = Ruby Blog
  feed     = https://blog.example.org/feed.xml
  link     = https://blog.example.org/
  location = en

[news]
  title = Ruby News
  feed  = https://other-news.example.org/atom
  link  = not a url

#[gone]
#  feed = https://gone.example.org/feed

[byname]
  name = By Name
  feed = https://byname.example.org/rss

[untitled]
  feed = https://untitled.example.org/rss
""",
    )
    result = run("import", str(ini), "--config", str(config))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "added 4 sites, skipped 0 (0 already listed, 0 not http(s) URLs)"
    assert sites(config) == [
        ("Ruby News", "https://news.example.org/feed", None),
        ("Ruby Blog", "https://blog.example.org/feed.xml", "https://blog.example.org/"),
        ("Ruby News (2)", "https://other-news.example.org/atom", None),
        ("By Name", "https://byname.example.org/rss", None),
        ("untitled", "https://untitled.example.org/rss", None),
    ]


# --- dry run, refusals, errors -----------------------------------------------------------------


def test_dry_run_prints_and_writes_nothing(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(tmp_path, server)
    before = config.read_bytes()
    opml = write(
        tmp_path / "list.opml",
        f'<opml><body><outline text="New" xmlUrl="{server.url_for("/n.xml")}"/>'
        f'<outline text="Beta" xmlUrl="{server.url_for("/beta.xml")}"/></body></opml>',
    )
    files = folder_files(tmp_path)
    result = run("import", str(opml), "--config", str(config), "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"would add New <{server.url_for('/n.xml')}>",
        f"would skip Beta: <{server.url_for('/beta.xml')}> already listed as 'Beta'",
        "would add 1 site, skip 1 (1 already listed, 0 not http(s) URLs); nothing was written",
    ]
    assert config.read_bytes() == before
    assert folder_files(tmp_path) == files


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        pytest.param(
            "bad.opml",
            '<?xml version="1.0"?>\n<opml><body><outline text="A" xmlUrl="https://a.example.org/"></body></opml>',
            r"malformed XML: Opening and ending tag mismatch: outline line 2 and body, line 2, "
            r"column \d+",
            id="malformed-xml",
        ),
        pytest.param(
            "feed.xml",
            "<rss version='2.0'><channel/></rss>",
            r"not an OPML file \(its root element is <rss>\)",
            id="xml-not-opml",
        ),
        pytest.param(
            "list.txt",
            "just some words\n",
            "not an OPML file nor a planet INI file: line 1: cannot read 'just some words'",
            id="plain-text",
        ),
        pytest.param(
            "data.bin",
            b"\xff\xfe\x00binary",
            r"not an OPML file, and not UTF-8 text \(byte 0\): save it as UTF-8, or name its encoding in its "
            r"\[Planet\] section \(encoding = latin-1\)",
            id="binary",
        ),
        pytest.param(
            "empty.ini", "", r"not an OPML file nor a planet INI file: no \[Planet\] section and no feeds", id="empty"
        ),
        pytest.param("missing.opml", None, "cannot read: No such file or directory", id="missing"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_sites_yaml_is_untouched(
    server: HTTPServer, tmp_path: Path, name: str, content: str | bytes | None, message: str
) -> None:
    config = planet(tmp_path, server)
    before = config.read_bytes()
    source = tmp_path / name
    if isinstance(content, bytes):
        source.write_bytes(content)
    elif content is not None:
        source.write_text(content, encoding="utf-8")
    files = folder_files(tmp_path)
    result = run("import", str(source), "--config", str(config))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert re.fullmatch(f"syndicator: error: {re.escape(str(source))}: {message}\n", result.stderr), result.stderr
    assert config.read_bytes() == before
    assert folder_files(tmp_path) == files


def test_a_missing_sites_yaml_is_refused_not_created(tmp_path: Path) -> None:
    opml = write(tmp_path / "b.opml", '<opml><body><outline text="B" xmlUrl="https://b.example.org/f"/></body></opml>')
    config = tmp_path / "sites.yaml"
    result = run("import", str(opml), "--config", str(config))
    assert result.exit_code == 2
    assert result.stderr == (
        f"syndicator: error: {config}: no such file; write one from the old planet's config with "
        "`syndicator init OLD_CONFIG`, or create it with the planet's title and link (docs/moving-in.md)\n"
    )
    assert not config.exists()


def test_a_result_that_would_not_load_leaves_the_file_untouched(tmp_path: Path) -> None:
    config = write(tmp_path / "sites.yaml", "title: T\n# no link yet\n")
    opml = write(tmp_path / "b.opml", '<opml><body><outline text="B" xmlUrl="https://b.example.org/f"/></body></opml>')
    result = run("import", str(opml), "--config", str(config))
    assert result.exit_code == 2
    assert result.stderr == (
        f"syndicator: error: {config}:1: link: is required (with the new sites; {config} was not changed)\n"
    )
    assert config.read_text(encoding="utf-8") == "title: T\n# no link yet\n"
    assert folder_files(tmp_path) == ["b.opml", "sites.yaml"]


def test_an_invalid_sites_yaml_is_reported_as_load_config_reports_it(tmp_path: Path) -> None:
    text = "title: T\nlink: https://planet.example.org/\nsites:\n  - name: A\n    feed: ftp://a.example.org/\n"
    config = write(tmp_path / "sites.yaml", text)
    opml = write(tmp_path / "b.opml", '<opml><body><outline text="B" xmlUrl="https://b.example.org/f"/></body></opml>')
    result = run("import", str(opml), "--config", str(config))
    assert result.exit_code == 2
    assert result.stderr == (
        f"syndicator: error: {config}:5: sites[0].feed: 'ftp://a.example.org/' is not an http(s) URL\n"
    )
    assert config.read_text(encoding="utf-8") == text


def test_a_symlinked_sites_yaml_stays_a_link_and_keeps_its_mode(tmp_path: Path) -> None:
    real = write(tmp_path / "real.yaml", "title: T\nlink: https://planet.example.org/\n")
    real.chmod(0o640)
    config = tmp_path / "sites.yaml"
    config.symlink_to(real.name)
    opml = write(tmp_path / "b.opml", '<opml><body><outline text="B" xmlUrl="https://b.example.org/f"/></body></opml>')
    assert run("import", str(opml), "--config", str(config)).exit_code == 0
    assert config.is_symlink()
    assert sites(real) == [("B", "https://b.example.org/f", None)]
    assert real.stat().st_mode & 0o777 == 0o640


# --- the real corpus ---------------------------------------------------------------------------


def _listed() -> dict[str, int]:
    """Subscription list file name -> "feeds listed=N" from the corpus MANIFEST.tsv ({} without the corpus)."""
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.is_file():
        return {}
    with manifest.open(encoding="utf-8", newline="") as file:
        rows = [row for row in csv.DictReader(file, delimiter="\t") if row["file"].startswith("opml/")]
    return {
        row["file"]: int(re.search(r"feeds listed=(\d+)", row["notes"])[1])  # type: ignore[index]
        for row in rows
    }


#: Corpus lists in a format syndicator does not read: Planet Scheme's s-expressions, Perlsphere's Plagger YAML.
NOT_READ = {"opml/08-planetscheme-config.scm", "opml/09-perlsphere-perlsphere.yaml"}


@pytest.mark.parametrize("name", sorted(_listed()) or ["(corpus absent)"])
def test_corpus_lists_import_into_an_empty_planet(tmp_path: Path, name: str) -> None:
    listed = _listed()
    if not listed:
        pytest.skip(f"corpus not found at {CORPUS} (set SYNDICATOR_CORPUS)")
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    result = run("import", str(CORPUS / name), "--config", str(config))
    if name in NOT_READ:
        assert result.exit_code == 2
        assert result.stderr.startswith(f"syndicator: error: {CORPUS / name}: not an OPML file nor a planet INI file")
        return
    assert result.exit_code == 0, result.output
    summary = re.fullmatch(
        r"added (\d+) sites?, skipped (\d+) \((\d+) already listed, (\d+) not http\(s\) URLs\)",
        result.stdout.splitlines()[-1],
    )
    assert summary is not None, result.stdout
    added, skipped = int(summary[1]), int(summary[2])
    assert added + skipped == listed[name]
    assert skipped <= max(2, listed[name] // 50)  # the corpus lists are clean: a few repeats at most
    assert len(load_config(config).sites) == added


# --- add ---------------------------------------------------------------------------------------

PAGE = (
    "<!DOCTYPE html><html><head><title>Blog</title>"
    '<link rel="alternate" type="application/rss+xml" title="RSS" href="/feed.xml"></head>'
    "<body>Hello</body></html>"
)


def serve_blog(server: HTTPServer, title: str = "Server Blog") -> None:
    server.expect_request("/").respond_with_data(PAGE, content_type="text/html; charset=utf-8")
    server.expect_request("/feed.xml").respond_with_data(
        rss(post(1, host="127.0.0.1"), title=title, link=server.url_for("/home/")), content_type="application/rss+xml"
    )


def test_add_discovers_the_feed_of_a_page(server: HTTPServer, tmp_path: Path) -> None:
    serve_blog(server)
    config = planet(tmp_path, server)
    before = config.read_text(encoding="utf-8")
    result = run("add", server.url_for("/"), "--config", str(config))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"added Server Blog <{server.url_for('/feed.xml')}>\n"
    assert sites(config)[2:] == [("Server Blog", server.url_for("/feed.xml"), server.url_for("/home/"))]
    last_site = f"    feed: {server.url_for('/beta.xml')}\n"
    block = f"  - name: Server Blog\n    feed: {server.url_for('/feed.xml')}\n    link: {server.url_for('/home/')}\n"
    assert config.read_text(encoding="utf-8") == before.replace(last_site, last_site + block, 1)
    assert [request.path for request, _response in server.log] == ["/", "/feed.xml"]


def test_add_takes_name_and_refuses_a_feed_already_listed(server: HTTPServer, tmp_path: Path) -> None:
    serve_blog(server)
    config = planet(tmp_path, server)
    assert run("add", server.url_for("/feed.xml"), "--name", "Alpha", "--config", str(config)).exit_code == 0
    assert sites(config)[2] == ("Alpha (2)", server.url_for("/feed.xml"), server.url_for("/home/"))
    text = config.read_text(encoding="utf-8")
    server.clear_log()

    again = run("add", server.url_for("/feed.xml"), "--config", str(config))
    assert again.exit_code == 2
    assert again.stderr == (
        f"syndicator: error: <{server.url_for('/feed.xml')}> is already listed in {config} as 'Alpha (2)'\n"
    )
    assert server.log == []  # refused before any request
    by_page = run("add", server.url_for("/"), "--config", str(config))
    assert by_page.exit_code == 2
    assert by_page.stderr == (
        f"syndicator: error: <{server.url_for('/feed.xml')}> already listed as 'Alpha (2)' "
        f"in {config}; nothing was added\n"
    )
    assert config.read_text(encoding="utf-8") == text


def test_add_needs_a_name_when_the_feed_has_no_title(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/untitled.xml").respond_with_data(rss(post(1), title=""))
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    result = run("add", server.url_for("/untitled.xml"), "--config", str(config))
    assert result.exit_code == 2
    assert result.stderr == (
        f"syndicator: error: <{server.url_for('/untitled.xml')}> gives no title: name the site with --name\n"
    )
    assert config.read_text(encoding="utf-8") == "title: T\nlink: https://planet.example.org/\n"
    named = run("add", server.url_for("/untitled.xml"), "--name", "Named", "--config", str(config))
    assert named.exit_code == 0, named.output
    assert sites(config) == [("Named", server.url_for("/untitled.xml"), "https://blog.example.org/")]


def test_names_lose_the_characters_sites_yaml_refuses_and_the_rest_imports(server: HTTPServer, tmp_path: Path) -> None:
    """One outline's text holds U+202E (sites.yaml refuses it in a name): it is dropped, not the import."""
    config = write(tmp_path / "empty.yaml", "title: T\nlink: https://planet.example.org/\nsites: []\n")
    url = server.url_for
    opml = write(
        tmp_path / "rlo.opml",
        f"""<?xml version="1.0" encoding="utf-8"?>
<opml version="2.0"><body>
  <outline text="Plain" xmlUrl="{url("/plain.xml")}"/>
  <outline text="Evil\u202ename" xmlUrl="{url("/evil.xml")}"/>
  <outline text="Zero\u200b width \u2066isolated\u2069" xmlUrl="{url("/zero.xml")}"/>
  <outline text="\u202e\u200f\ufeff" xmlUrl="{url("/hidden.xml")}"/>
</body></opml>
""",
    )
    result = run("import", str(opml), "--config", str(config))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert sites(config) == [
        ("Plain", url("/plain.xml"), None),
        ("Evilname", url("/evil.xml"), None),
        ("Zero width isolated", url("/zero.xml"), None),
        (url("/hidden.xml"), url("/hidden.xml"), None),  # nothing left: named by its URL, as a nameless feed
    ]
    assert "\u202e" not in config.read_text(encoding="utf-8")
    assert result.stdout.splitlines()[-1] == "added 4 sites, skipped 0 (0 already listed, 0 not http(s) URLs)"


def test_add_drops_the_characters_sites_yaml_refuses_from_the_feed_title(server: HTTPServer, tmp_path: Path) -> None:
    serve_blog(server, title="Server\u202e Blog\u200b")
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    result = run("add", server.url_for("/feed.xml"), "--config", str(config))
    assert result.exit_code == 0, result.output
    assert sites(config) == [("Server Blog", server.url_for("/feed.xml"), server.url_for("/home/"))]


def test_add_a_page_without_a_feed_fails_and_writes_nothing(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/plain").respond_with_data(
        "<!DOCTYPE html><html><head></head></html>", content_type="text/html"
    )
    config = planet(tmp_path, server)
    before = config.read_bytes()
    result = run("add", server.url_for("/plain"), "--config", str(config))
    assert result.exit_code == 1
    assert result.stderr == (
        f"syndicator: error: {server.url_for('/plain')}: an HTML page, not a feed, and it advertises no feed\n"
    )
    assert config.read_bytes() == before


def test_planet_openstack_keeps_its_non_ascii_names(tmp_path: Path) -> None:
    source = CORPUS / "opml" / "02-planetopenstack-planet-openstack-org.opml"  # no XML declaration: UTF-8
    if not source.is_file():
        pytest.skip(f"corpus not found at {CORPUS} (set SYNDICATOR_CORPUS)")
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    assert run("import", str(source), "--config", str(config)).exit_code == 0
    names = [site[0] for site in sites(config)]
    assert "Daniel P. Berrangé" in names and "Javier Peña" in names
    assert not [name for name in names if "Ã" in name or "Å" in name]


def test_add_refuses_a_url_that_is_not_http_before_any_request(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(tmp_path, server)
    result = run("add", "ftp://example.org/feed", "--config", str(config))
    assert result.exit_code == 2
    assert "is not an http(s) URL" in result.stderr
    assert server.log == []


# --- the commands themselves -------------------------------------------------------------------


def test_build_does_not_load_ruamel(tmp_path: Path) -> None:
    feed = write(tmp_path / "feed.xml", rss(post(1)))
    config = write(
        tmp_path / "sites.yaml",
        f"title: T\nlink: https://planet.example.org/\nsites:\n  - name: A\n    feed: {feed.name}\n",
    )
    script = (
        "import sys\nfrom syndicator.cli import main\n"
        "try:\n    main(['build', '--config', sys.argv[1], '--now', '2026-11-30T12:00:00Z'])\n"
        "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ruamel',)))"
    )
    done = subprocess.run([sys.executable, "-c", script, str(config)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert (tmp_path / "public" / "index.html").is_file()


def test_import_and_add_have_help_and_are_in_the_docs() -> None:
    from syndicator.cli.reference import commands_reference

    reference = commands_reference()
    for command, usage in (
        ("import", "syndicator import FILE [--config PATH] [--dry-run]"),
        ("add", "syndicator add URL [--name NAME] [--config PATH] [--timeout SECONDS]"),
    ):
        result = run(command, "--help")
        assert result.exit_code == 0
        assert "--config" in result.stdout
        assert usage in reference
    page = (ROOT / "docs" / "import-and-add.md").read_text(encoding="utf-8")
    (summary,) = re.findall(r"^added \d+ sites?, .*$", page, flags=re.MULTILINE)
    assert re.fullmatch(r"added \d+ sites?, skipped \d+ \(\d+ already listed, \d+ not http\(s\) URLs\)", summary)


def test_plan_is_pure_and_keeps_names_unique() -> None:
    from syndicator.drivers.merge import plan
    from syndicator.parse.sublists import Candidate

    existing = [Site("A", "https://a.example.org/f"), Site("A (2)", "https://a2.example.org/f")]
    result = plan(
        existing, [Candidate("https://x.example.org/f", "A"), Candidate("https://y.example.org/f", "A")], "list.opml"
    )
    assert [site.name for site in result.added] == ["A (3)", "A (4)"]
    long = plan(
        [Site("N" * (NAME_MAX_CHARS - 1) + "\u2026", "https://n.example.org/f")],
        [Candidate("https://m.example.org/f", "N" * 250)],
        "list.opml",
    )
    assert long.added[0].name == "N" * (NAME_MAX_CHARS - 5) + "\u2026 (2)"
    assert len(long.added[0].name) == NAME_MAX_CHARS


# --- names in any encoding, bounded lists, hostile XML ------------------------------------------

NAMES = ["Daniel P. Berrangé", "Jiří Stránský", "Łukasz Langa"]


def opml_text(encoding: str | None = None) -> str:
    declaration = f'<?xml version="1.0" encoding="{encoding}"?>\n' if encoding else ""
    outlines = "".join(
        f'<outline text="{name}" xmlUrl="https://f{n}.example.org/feed"/>' for n, name in enumerate(NAMES)
    )
    return f'{declaration}<opml version="2.0"><body>{outlines}</body></opml>\n'


def ini_text(encoding: str | None = None) -> str:
    planet = f"[Planet]\nname = P\nencoding = {encoding}\n\n" if encoding else "[Planet]\nname = P\n\n"
    return planet + "".join(f"[https://f{n}.example.org/feed]\nname = {name}\n\n" for n, name in enumerate(NAMES))


@pytest.mark.parametrize(
    ("name", "data"),
    [
        pytest.param("l.opml", opml_text().encode("utf-8"), id="opml-utf8-no-declaration"),
        pytest.param("l.opml", b"\xef\xbb\xbf" + opml_text().encode("utf-8"), id="opml-utf8-bom"),
        pytest.param("l.opml", opml_text("UTF-16").encode("utf-16"), id="opml-utf16-bom"),
        pytest.param("l.opml", opml_text("windows-1250").encode("cp1250"), id="opml-declared-windows-1250"),
        pytest.param("l.ini", ini_text().encode("utf-8"), id="ini-utf8-no-declaration"),
        pytest.param("l.ini", b"\xef\xbb\xbf" + ini_text().encode("utf-8"), id="ini-utf8-bom"),
        pytest.param("l.ini", ini_text("iso-8859-2").encode("iso-8859-2"), id="ini-declared-iso-8859-2"),
    ],
)
def test_non_ascii_names_survive_every_format(tmp_path: Path, name: str, data: bytes) -> None:
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    (tmp_path / name).write_bytes(data)
    result = run("import", str(tmp_path / name), "--config", str(config))
    assert result.exit_code == 0, result.output
    assert [site[0] for site in sites(config)] == NAMES
    assert "Berrangé" in config.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        pytest.param("MAX_LIST_FEEDS", 2, "more than 2 feeds: split the list", id="feeds"),
        pytest.param(
            "MAX_LIST_BYTES", 100, "larger than 0 MiB: split the list, or remove what is not a feed", id="bytes"
        ),
    ],
)
@pytest.mark.parametrize("kind", ["opml", "ini"])
def test_a_list_past_a_limit_is_one_line_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, value: int, message: str, kind: str
) -> None:
    from syndicator.parse import sublists

    monkeypatch.setattr(sublists, setting, value)
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    source = write(tmp_path / f"l.{kind}", opml_text() if kind == "opml" else ini_text())
    before = config.read_bytes()
    result = run("import", str(source), "--config", str(config))
    assert result.exit_code == 2
    assert result.stderr == f"syndicator: error: {source}: {message}\n"
    assert config.read_bytes() == before


def test_the_limits_hold_just_above_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from syndicator.parse import sublists

    monkeypatch.setattr(sublists, "MAX_LIST_FEEDS", 3)
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    source = write(tmp_path / "l.opml", opml_text())  # exactly 3 feeds: read
    assert run("import", str(source), "--config", str(config)).exit_code == 0
    assert len(sites(config)) == 3


def test_a_value_past_libxml2_s_limit_is_refused_naming_its_line(tmp_path: Path) -> None:
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    source = tmp_path / "big.opml"
    source.write_bytes(
        b'<opml><body>\n<outline text="A" xmlUrl="https://a.example.org/f"/>\n<outline text="'
        + b"x" * 10_500_000
        + b'" xmlUrl="https://b.example.org/f"/>\n</body></opml>\n'
    )
    result = run("import", str(source), "--config", str(config))
    assert result.exit_code == 2
    assert result.stderr == (
        f"syndicator: error: {source}: a value longer than 10,000,000 bytes after feed 1 "
        "<https://a.example.org/f>: refused\n"
    )
    assert config.read_text(encoding="utf-8") == "title: T\nlink: https://planet.example.org/\n"


LAUGHS = "".join(f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(
            '<?xml version="1.0"?>\n<!DOCTYPE opml [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<opml><head>'
            '<title>&x;</title></head><body><outline text="A" xmlUrl="https://a.example.org/f"/></body></opml>',
            "declares the XML entity 'x': refused (an entity can read local files or expand without bound; "
            "OPML needs none)",
            id="xxe-in-text",
        ),
        pytest.param(
            '<!DOCTYPE opml [<!ENTITY x SYSTEM "file:///etc/passwd">]><opml><body>'
            '<outline text="&x;" xmlUrl="https://a.example.org/f"/></body></opml>',
            "malformed XML: Attribute references external entity 'x', line 1, column 88",
            id="xxe-in-attribute",
        ),
        pytest.param(
            f'<!DOCTYPE opml [<!ENTITY lol0 "lol">{LAUGHS}]><opml><head><title>t</title></head><body>'
            '<outline text="A" xmlUrl="https://a.example.org/f"/></body></opml>',
            "declares the XML entity 'lol0': refused (an entity can read local files or expand without bound; "
            "OPML needs none)",
            id="billion-laughs-declared",
        ),
    ],
)
def test_entities_are_refused(tmp_path: Path, content: str, message: str) -> None:
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    source = write(tmp_path / "evil.opml", content)
    result = run("import", str(source), "--config", str(config))
    assert result.exit_code == 2
    assert result.stderr == f"syndicator: error: {source}: {message}\n"
    assert config.read_text(encoding="utf-8") == "title: T\nlink: https://planet.example.org/\n"


def test_a_billion_laughs_used_at_once_is_refused(tmp_path: Path) -> None:
    config = write(tmp_path / "sites.yaml", "title: T\nlink: https://planet.example.org/\n")
    source = write(
        tmp_path / "evil.opml",
        f'<!DOCTYPE opml [<!ENTITY lol0 "lol">{LAUGHS}]><opml><body>'
        '<outline text="&lol9;" xmlUrl="https://a.example.org/f"/></body></opml>',
    )
    result = run("import", str(source), "--config", str(config))
    assert result.exit_code == 2
    assert result.stderr in (
        f"syndicator: error: {source}: entities that expand too far before the first feed: refused\n",
        f"syndicator: error: {source}: declares the XML entity 'lol0': refused (an "
        "entity can read local files or expand without bound; OPML needs none)\n",
    )
    assert config.read_text(encoding="utf-8") == "title: T\nlink: https://planet.example.org/\n"


def test_many_outlines_of_one_name_are_numbered_in_order(tmp_path: Path) -> None:
    config = write(
        tmp_path / "sites.yaml",
        "title: T\nlink: https://planet.example.org/\nsites:\n"
        "  - name: Same\n    feed: https://x.example.org/f\n"
        "  - name: Same (3)\n    feed: https://y.example.org/f\n",
    )
    outlines = "".join(f'<outline text="Same" xmlUrl="https://f{n}.example.org/f"/>' for n in range(3000))
    source = write(tmp_path / "same.opml", f"<opml><body>{outlines}</body></opml>")
    assert run("import", str(source), "--config", str(config)).exit_code == 0
    names = [site[0] for site in sites(config)]
    assert names[:4] == ["Same", "Same (3)", "Same (2)", "Same (4)"]
    assert names[-1] == "Same (3002)" and len(set(names)) == len(names) == 3002
