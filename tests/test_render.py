"""render: templates -> staging -> swap; Atom, OPML, safety, determinism, refusing to publish nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from .conftest import (
    ATOM,
    DATA,
    NOW_ISO,
    atom_entries,
    build,
    entry_titles,
    post,
    rss,
    tree,
    without_first_build_warning,
    without_info,
    write_config,
)
from .test_parse import FORBIDDEN_TAGS, Markup, assert_harmless


def serve(server: HTTPServer, path: str, name: str) -> str:
    server.expect_request(path).respond_with_data((DATA / name).read_bytes(), content_type="application/xml")
    return server.url_for(path)


@pytest.fixture
def planet(server: HTTPServer, tmp_path: Path) -> Path:
    """A built planet of three feeds (one hostile) and one broken site; returns the output folder."""
    sites = [
        {"name": "Atom Site", "feed": serve(server, "/atom.xml", "atom10.xml"), "link": "https://atom.example.org/"},
        {"name": "JSON <b>Site</b> & Co", "feed": serve(server, "/feed.json", "jsonfeed11.json")},
        {
            "name": "Evil <script>alert('name')</script>",
            "feed": serve(server, "/evil.xml", "hostile.xml"),
            "link": "https://evil.example.org/",
        },
        {"name": "Gone", "feed": server.url_for("/gone.xml"), "link": "https://gone.example.org/"},
    ]
    server.expect_request("/gone.xml").respond_with_data("gone", status=410)
    result = build(
        write_config(tmp_path, sites, host_gap=0, sites_page_details=True)
    )  # one loopback host: no pacing between starts
    assert result.exit_code == 0, result.output
    return tmp_path / "public"


def test_all_files_are_published_and_nothing_is_left_behind(planet: Path) -> None:
    assert sorted(p.name for p in planet.iterdir()) == [
        ".syndicator-output",
        "archive",
        "feed.json",
        "feed.xml",
        "index.html",
        "opml.xml",
        "robots.txt",
        "search",
        "search.html",
        "search.js",
        "sitemap.xml",
        "sites",
        "sites.html",
        "style.css",
    ]
    assert sorted(p.name for p in planet.parent.iterdir()) == [".public.lock", "cache", "public", "sites.yaml"]


def test_feed_xml_is_atom_with_the_required_elements(planet: Path, server: HTTPServer) -> None:
    root = ET.parse(planet / "feed.xml").getroot()
    assert root.tag == f"{ATOM}feed"
    assert root.findtext(f"{ATOM}id") == "https://planet.example.org/"
    assert root.findtext(f"{ATOM}title") == "Planet Test"
    assert root.findtext(f"{ATOM}updated") == "2026-11-06T08:00:00Z"  # the newest entry update
    self_links = [link.get("href") for link in root.findall(f"{ATOM}link") if link.get("rel") == "self"]
    assert self_links == ["https://planet.example.org/feed.xml"]
    entries = atom_entries(planet / "feed.xml")
    assert len(entries) == 5
    assert root.findtext(f"{ATOM}author/{ATOM}name") == "Planet Test"  # covers entries without an author (4.1.2)
    for entry in entries:
        for name in ("id", "title", "published", "updated", "content"):
            assert entry.find(ATOM + name) is not None, name
        assert entry.find(f"{ATOM}author") is None or entry.findtext(f"{ATOM}author/{ATOM}name")
        assert entry.find(f"{ATOM}content").get("type") == "html"  # type: ignore[union-attr]
        assert entry.find(f"{ATOM}published").text <= entry.find(f"{ATOM}updated").text  # type: ignore[union-attr,operator]
    by_title = {e.findtext(f"{ATOM}title"): e for e in entries}
    both = by_title["Published & updated both"]
    assert both.findtext(f"{ATOM}id") == "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a"  # kept as the feed gave it
    assert both.find(f"{ATOM}link").get("href") == "https://atom.example.org/blog/posts/both"  # type: ignore[union-attr]
    assert (both.findtext(f"{ATOM}published"), both.findtext(f"{ATOM}updated")) == (
        "2026-11-01T09:00:00Z",
        "2026-11-05T10:00:00Z",
    )
    assert both.findtext(f"{ATOM}author/{ATOM}name") == "Bob"
    source = both.find(f"{ATOM}source")
    assert source is not None
    assert source.findtext(f"{ATOM}title") == "Atom Site"
    assert source.findtext(f"{ATOM}id") == server.url_for("/atom.xml")
    ids = [e.findtext(f"{ATOM}id") or "" for e in entries]
    assert len(set(ids)) == len(ids)
    assert all(":" in i for i in ids)  # every id is a URI, even where the feed's id was not


def test_feed_entries_caps_feed_xml_but_not_the_per_feed_rule(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(*[post(n, day=n) for n in range(1, 7)]))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}], feed_entries=3)
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "3 entries written" in result.stdout
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 6", "Post 5", "Post 4"]
    assert len(json.loads((tmp_path / "public" / "feed.json").read_text())["items"]) == 3


def test_opml_lists_every_site_in_order(planet: Path, server: HTTPServer) -> None:
    root = ET.parse(planet / "opml.xml").getroot()
    assert root.tag == "opml" and root.get("version") == "2.0"
    assert root.findtext("head/title") == "Planet Test"
    assert root.find("head/dateCreated") is None  # no build time: a build that changed nothing writes nothing
    outlines = [(o.get("text"), o.get("type"), o.get("xmlUrl"), o.get("htmlUrl")) for o in root.iter("outline")]
    assert outlines == [
        ("Atom Site", "rss", server.url_for("/atom.xml"), "https://atom.example.org/"),
        # no link in sites.yaml: the feed's own home page (JSON Feed home_page_url)
        ("JSON <b>Site</b> & Co", "rss", server.url_for("/feed.json"), "https://json.example.org/"),
        ("Evil <script>alert('name')</script>", "rss", server.url_for("/evil.xml"), "https://evil.example.org/"),
        ("Gone", "rss", server.url_for("/gone.xml"), "https://gone.example.org/"),
    ]


@pytest.mark.parametrize("page", ["index.html", "sites.html"])
def test_no_script_reaches_a_page(planet: Path, page: str) -> None:
    text = (planet / page).read_text()
    markup = Markup(text)
    assert (FORBIDDEN_TAGS - {"meta"}).isdisjoint(markup.tags), markup.tags
    for name, value in markup.attributes:
        assert not name.startswith("on"), name
        assert name != "style"
        assert not value.strip().lower().startswith(("javascript:", "data:")), value
    assert "alert(" not in text.replace("alert(&#39;", "")  # only ever as escaped text


def test_no_script_reaches_the_feeds(planet: Path) -> None:
    root = ET.parse(planet / "feed.xml").getroot()
    assert {element.tag.split("}")[-1] for element in root.iter()} <= {
        "feed",
        "id",
        "title",
        "updated",
        "link",
        "author",
        "name",
        "generator",
        "entry",
        "published",
        "source",
        "content",
    }
    for entry in atom_entries(planet / "feed.xml"):
        assert_harmless(entry.findtext(f"{ATOM}content") or "")
        link = entry.find(f"{ATOM}link")
        assert link is None or link.get("href", "").startswith("https://")
    for item in json.loads((planet / "feed.json").read_text())["items"]:
        assert_harmless(item["content_html"])


def test_hostile_text_is_escaped_not_dropped(planet: Path) -> None:
    index = (planet / "index.html").read_text()
    assert "Evil &lt;script&gt;" in index
    assert "JSON &lt;b&gt;Site&lt;/b&gt; &amp; Co" in index


def site_row(sites_html: str, name: str) -> str:
    (row,) = [row for row in sites_html.split("<tr")[1:] if name in row]
    return row


@pytest.mark.parametrize(
    ("second_build", "badge"),
    [
        pytest.param("2026-11-22T12:00:00Z", None, id="failing-for-2-days-no-badge"),
        pytest.param("2026-11-24T13:00:00Z", "last seen 2026-11-20", id="failing-for-4-days-badge"),
    ],
)
def test_sites_page_shows_last_seen_badge_after_stale_after(
    server: HTTPServer, tmp_path: Path, second_build: str, badge: str | None
) -> None:
    server.expect_oneshot_request("/feed.xml").respond_with_data(rss(post(1)))
    server.expect_request("/feed.xml").respond_with_data("oops", status=500)
    config = write_config(
        tmp_path, [{"name": "Flaky", "feed": server.url_for("/feed.xml")}], retries=0, sites_page_details=True
    )  # no 1 s retry pause
    assert build(config, now="2026-11-20T12:00:00Z").exit_code == 0
    first_row = site_row((tmp_path / "public" / "sites.html").read_text(), "Flaky")
    assert "badge" not in first_row and "error" not in first_row
    assert build(config, "--force", now=second_build).exit_code == 0
    row = site_row((tmp_path / "public" / "sites.html").read_text(), "Flaky")
    assert "HTTP 500" in row
    if badge is None:
        assert "badge" not in row
    else:
        assert f'<span class="badge">{badge}</span>' in row


def test_sites_page_marks_a_site_that_never_worked(planet: Path) -> None:
    row = site_row((planet / "sites.html").read_text(), "Gone")
    assert "never" in row and "HTTP 410" in row and "badge" in row


# --- same state and clock, same bytes ----------------------------------------------


def test_same_state_and_clock_give_byte_identical_output(planet: Path) -> None:
    folder = planet.parent
    outputs = []
    for seed in ("1", "2"):
        cache, output = folder / f"cache-{seed}", folder / f"out-{seed}"
        shutil.copytree(folder / "cache", cache)
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from syndicator.cli import main; main()",
                "build",
                "--config",
                str(folder / "sites.yaml"),
                "--cache",
                str(cache),
                "--output",
                str(output),
                "--now",
                NOW_ISO,
                "-qq",
            ],
            check=True,
            env=environment,
            cwd=folder,
        )
        outputs.append(tree(output))
    assert outputs[0] == outputs[1] == tree(planet)


# --- refusing to publish nothing, and publishing atomically -----------------------------


def test_empty_build_fails_with_exit_3_and_leaves_the_output_untouched(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}], retries=0)
    assert build(config).exit_code == 0
    before = tree(tmp_path / "public")
    server.clear()
    server.expect_request("/feed.xml").respond_with_data("no network", status=502)
    result = build(config, "--cache", str(tmp_path / "fresh-cache"))
    assert result.exit_code == 3
    assert result.stdout == ""
    assert "no entries" in result.stderr.splitlines()[-1]
    assert "public is unchanged" in result.stderr.splitlines()[-1]
    assert tree(tmp_path / "public") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".public.lock",
        "cache",
        "fresh-cache",
        "public",
        "sites.yaml",
    ]


def test_empty_build_publishes_no_folder_at_all(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/empty.xml").respond_with_data(rss(), content_type="application/rss+xml")
    config = write_config(tmp_path, [{"name": "Empty", "feed": server.url_for("/empty.xml")}])
    result = build(config)
    assert result.exit_code == 3
    assert not (tmp_path / "public").exists()
    assert f"nothing was published and {tmp_path / 'public'} was not created" in result.stderr


TEXT_TITLE_ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:uuid:0</id><updated>2026-11-04T00:00:00Z</updated>
<entry><title type="text">if a &lt; b &amp;&amp; &lt;script&gt;x&lt;/script&gt;</title><id>tag:t.example.org,2026:1</id>
<updated>2026-11-04T00:00:00Z</updated></entry></feed>
"""


def test_templates_can_be_overridden_and_still_autoescape(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/text.xml").respond_with_data(TEXT_TITLE_ATOM, content_type="application/atom+xml")
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "index.html").write_text(
        "<ul>{% for e in entries %}<li>{{ e.title }} ({{ e.site_name }})</li>{% endfor %}</ul>\n"
    )
    config = write_config(tmp_path, [{"name": "<i>Evil</i>", "feed": server.url_for("/text.xml")}])
    result = build(config, "--templates", str(templates))
    assert result.exit_code == 0, result.output
    index = (tmp_path / "public" / "index.html").read_text()
    assert index == (
        "<ul><li>if a &lt; b &amp;&amp; &lt;script&gt;x&lt;/script&gt; (&lt;i&gt;Evil&lt;/i&gt;)</li></ul>\n"
    )
    assert "<table" in (tmp_path / "public" / "sites.html").read_text()  # the bundled one


def test_a_folder_syndicator_did_not_write_is_never_replaced(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    mine = tmp_path / "my-documents"
    mine.mkdir()
    (mine / "thesis.txt").write_text("precious")
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    result = build(config, "--output", str(mine))
    assert result.exit_code == 6
    assert tree(mine) == {"thesis.txt": b"precious"}


@pytest.mark.parametrize(
    "published",
    [
        pytest.param(".", id="current-folder"),
        pytest.param("site/..", id="dot-dot"),
    ],
)
def test_output_given_as_the_current_folder(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, published: str
) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    folder = tmp_path / "www"
    folder.mkdir()
    config = write_config(folder, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    monkeypatch.chdir(folder)
    result = build(config, "--output", published)
    assert result.exit_code == 2  # the cache would be inside it: refused before anything is fetched
    assert "must not be the output folder" in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["sites.yaml"]
    result = build(config, "--output", published, "--cache", str(tmp_path / "cache"))
    assert result.exit_code == 6  # the folder holds sites.yaml: refused with a message, not a traceback
    assert "refusing to publish into a folder syndicator did not write" in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["sites.yaml"]


def test_each_build_replaces_what_it_wrote_and_keeps_the_rest(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    assert build(config).exit_code == 0
    public = tmp_path / "public"
    (public / "added-by-hand.html").write_text("mine")
    (public / "index.html").write_text("edited by hand")
    assert build(config, "--force").exit_code == 0
    assert (public / "added-by-hand.html").read_text() == "mine"
    assert "edited by hand" not in (public / "index.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".public.lock", "cache", "public", "sites.yaml"]


def test_output_retired_by_a_killed_build_is_restored(tmp_path: Path) -> None:
    """A kill between the two renames leaves only .public.old; the next publish
    restores it first, so even a failing publish leaves the old site online."""
    from syndicator.errors import RenderError
    from syndicator.site.publish import publish

    output = tmp_path / "public"
    retired = tmp_path / ".public.old"
    retired.mkdir()
    (retired / ".syndicator-output").write_text("x")
    (retired / "index.html").write_text("old page")
    with pytest.raises(RenderError):
        publish(output, {"n" * 300 + ".html": "a name too long to be written"})
    assert (output / "index.html").read_text() == "old page"


@pytest.mark.parametrize("target_exists", [True, False], ids=["link-to-a-folder", "link-to-nothing-yet"])
def test_output_that_is_a_symlink_is_published_into_its_target(
    server: HTTPServer, tmp_path: Path, target_exists: bool
) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    real = tmp_path / "releases" / "www"
    real.parent.mkdir()
    if target_exists:
        real.mkdir()
    webroot = tmp_path / "webroot"
    webroot.symlink_to(real, target_is_directory=True)
    for number, now in enumerate(("2026-11-30T12:00:00Z", "2026-12-01T12:00:00Z"), start=1):
        server.clear()
        server.expect_request("/feed.xml").respond_with_data(rss(*(post(n) for n in range(1, number + 1))))
        result = build(config, "--output", str(webroot), "--force", now=now)
        assert result.exit_code == 0, result.output
        assert webroot.is_symlink() and webroot.resolve() == real.resolve()
        assert (real / "index.html").is_file()
        assert f"Post {number}</a>" in (real / "index.html").read_text()  # this build's
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "releases", "sites.yaml", "webroot"]
    assert sorted(p.name for p in real.parent.iterdir()) == [".www.lock", "www"]


def test_a_symlink_left_as_the_retired_output_does_not_break_later_builds(server: HTTPServer, tmp_path: Path) -> None:
    """Older versions moved a symlinked --output aside as .NAME.old; the link is removed, never followed."""
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    real = tmp_path / "real"
    real.mkdir()
    (real / "keep.txt").write_text("the link's target is not touched")
    assert build(config, "--output", str(tmp_path / "webroot")).exit_code == 0
    (tmp_path / ".webroot.old").symlink_to(real, target_is_directory=True)
    result = build(config, "--output", str(tmp_path / "webroot"), "--force")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / ".webroot.old").is_symlink()
    assert tree(real) == {"keep.txt": b"the link's target is not touched"}
    assert (tmp_path / "webroot" / "index.html").is_file()


@pytest.mark.parametrize(
    ("name", "text", "line", "message"),
    [
        pytest.param(
            "index.html",
            '{% extends "_layout.html" %}\n{% block main %}{% for e in entries %}{{ e.title }\n{% endblock %}\n',
            2,
            "unexpected '}'",
            id="syntax-error",
        ),
        pytest.param(
            "sites.html", "<p>sites</p>\n\n{{ nosuchvar.x }}\n", 3, "'nosuchvar' is undefined", id="undefined-variable"
        ),
        pytest.param(
            "feed.xml",
            "<feed>\n{{ entries[99999].title }}\n</feed>\n",
            2,
            "list object has no element 99999",
            id="undefined-item",
        ),
        pytest.param(
            "opml.xml",
            "<opml>\n{% for s in sites %}\n{{ 1 // 0 }}\n{% endfor %}\n</opml>\n",
            3,
            "by zero",
            id="error-in-an-expression",
        ),
        pytest.param(
            "_layout.html",
            "<html>\n{{ planet.nosuchsetting }}\n</html>\n",
            2,
            "has no attribute",
            id="in-the-layout-of-another-template",
        ),
        pytest.param(
            "feed.xml",
            "<feed>\n\n{{ entries[0]|tojson }}\n</feed>\n",
            3,
            "not JSON serializable",
            id="a-jinja2-filter-given-the-wrong-value",
        ),
        pytest.param(
            "sites.html",
            '<p>\n{{ "%d"|format("x") }}\n</p>\n',
            2,
            "number is required",
            id="a-format-string-that-does-not-fit",
        ),
        pytest.param(
            "opml.xml",
            "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}\n{{ r(0) }}\n",
            1,
            "recursion",
            id="a-macro-recursing-without-end",
        ),
    ],
)
def test_template_error_names_the_file_and_line(
    server: HTTPServer, tmp_path: Path, name: str, text: str, line: int, message: str
) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    assert build(config).exit_code == 0
    before = tree(tmp_path / "public")
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / name).write_text(text)
    result = build(config, "--templates", str(templates), "--force")
    assert result.exit_code == 6
    prefix = f"syndicator: error: template {templates / name}:{line}: "
    stderr = without_info(result.stderr)
    assert stderr.startswith(prefix), result.stderr
    assert message in stderr
    assert stderr.count("\n") == 1
    assert tree(tmp_path / "public") == before
    assert not list(tmp_path.glob(".public.*-*"))  # pages are written as they render: no staging folder is left


def test_a_template_that_is_not_utf8_is_named(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "style.css").write_bytes(b"body { font-family: caf\xe9; }\n")
    result = build(config, "--templates", str(templates))
    assert result.exit_code == 6
    stderr = without_first_build_warning(without_info(result.stderr))
    assert stderr.startswith("syndicator: error: template style.css: 'utf-8' codec can't decode"), stderr
    assert stderr.count("\n") == 1
    assert not (tmp_path / "public").exists()


def test_a_missing_included_template_is_named(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "index.html").write_text("<p>\n{% include 'parts/entry.html' %}\n")
    result = build(config, "--templates", str(templates))
    assert result.exit_code == 6
    assert without_first_build_warning(without_info(result.stderr)).startswith(
        f"syndicator: error: template {templates / 'index.html'}:2: parts/entry.html not found in {templates}, "
    ), result.stderr
    assert not (tmp_path / "public").exists()


def test_an_exception_in_our_own_code_called_by_a_template_is_a_bug(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str) -> str:
        raise RuntimeError("bug in a filter")

    monkeypatch.setattr("syndicator.site.templating.strip_control", broken)
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    with pytest.raises(RuntimeError, match="bug in a filter"):
        build(config)
