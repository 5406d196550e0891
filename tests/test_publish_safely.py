"""Publishing never deletes what syndicator did not write: a git checkout (GitHub Pages), CNAME, pages by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.errors import RenderError
from syndicator.site.output import CARRIED, MARKER
from syndicator.site.publish import publish

from .conftest import ARCHIVE_AND_SEARCH, build, post, rss, write_config

OURS = sorted(["feed.json", "feed.xml", "index.html", "opml.xml", "sites.html", "style.css", *ARCHIVE_AND_SEARCH])


def git_checkout(folder: Path) -> dict[str, str]:
    """A folder shaped like a fresh clone of a GitHub Pages branch; returns {relative path: text}."""
    files = {
        ".git/HEAD": "ref: refs/heads/gh-pages\n",
        ".git/objects/ab/cdef": "blob",
        ".git/config": "[core]\n",
        "CNAME": "planet.example.org\n",
        ".nojekyll": "",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return files


def local_planet(tmp_path: Path) -> Path:
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    return write_config(tmp_path, [{"name": "A", "feed": "a.xml"}])


def test_a_build_into_a_git_checkout_keeps_the_repository(tmp_path: Path) -> None:
    config = local_planet(tmp_path)
    public = tmp_path / "public"
    public.mkdir()
    kept = git_checkout(public)
    for hour in (12, 13):
        result = build(config, now=f"2026-11-30T{hour}:00:00Z")
        assert result.exit_code == 0, result.output
        for name, text in kept.items():
            assert (public / name).read_text() == text, name
        assert sorted(p.name for p in public.iterdir()) == sorted([MARKER, ".git", ".nojekyll", "CNAME", *OURS])
    marker = (public / MARKER).read_text().splitlines()
    assert sorted({line.split("/")[0] for line in marker[1:]}) == OURS  # what the next publish may replace
    assert all(line.split("/")[0] in OURS for line in marker[1:])  # nothing else


def test_a_git_checkout_holding_a_page_of_its_own_is_refused(tmp_path: Path) -> None:
    config = local_planet(tmp_path)
    public = tmp_path / "public"
    public.mkdir()
    git_checkout(public)
    (public / "index.html").write_text("the old planet's page")
    result = build(config)
    assert result.exit_code == 6
    assert "a git checkout holding files syndicator did not write and would replace: index.html;" in result.stderr
    assert (public / "index.html").read_text() == "the old planet's page"
    assert not (public / MARKER).exists()


def test_a_file_syndicator_stopped_writing_goes_and_one_it_never_wrote_stays(tmp_path: Path) -> None:
    output = tmp_path / "public"
    publish(output, {"index.html": "1", "rss20.xml": "1", "img/logo.svg": "<svg/>"})
    (output / "about.html").write_text("by hand")
    publish(output, {"index.html": "2"})
    assert sorted(p.name for p in output.iterdir()) == [MARKER, "about.html", "index.html"]
    assert (output / "about.html").read_text() == "by hand"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public"]


def test_a_marker_of_an_earlier_version_takes_only_todays_files_as_ours(tmp_path: Path) -> None:
    output = tmp_path / "public"
    output.mkdir()
    (output / MARKER).write_text("written by syndicator; the whole folder is replaced on each build\n")
    (output / "index.html").write_text("old")
    (output / "CNAME").write_text("planet.example.org\n")
    publish(output, {"index.html": "new"})
    assert (output / "index.html").read_text() == "new" and (output / "CNAME").exists()


def test_what_a_killed_publish_carried_away_is_put_back(tmp_path: Path) -> None:
    """Killed after moving the foreign entries into staging, before the swap: the next publish
    (even one that fails) moves them back first."""
    output = tmp_path / "public"
    publish(output, {"index.html": "old"})
    staging = tmp_path / ".public.staging-123-abcd"
    staging.mkdir()
    (staging / "index.html").write_text("half")
    (staging / CARRIED).write_text(".git\nCNAME\n")
    (staging / ".git").mkdir()
    (staging / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    (staging / "CNAME").write_text("planet.example.org\n")
    with pytest.raises(RenderError):
        publish(output, {"n" * 300: "a name too long to be written"})
    assert (output / ".git" / "HEAD").read_text() == "ref: refs/heads/gh-pages\n"
    assert (output / "CNAME").read_text() == "planet.example.org\n"
    assert (output / "index.html").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public"]


def test_a_change_inside_git_does_not_render_again(tmp_path: Path, server: HTTPServer) -> None:
    """The published-folder check reads only the files syndicator wrote: a commit in the
    checkout (new objects in .git) is not an edit of the site; a page edited by hand is."""
    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}])
    public = tmp_path / "public"
    public.mkdir()
    git_checkout(public)
    assert build(config).exit_code == 0

    def rendered(minute: int) -> bool:
        assert build(config, now=f"2026-11-30T12:{minute:02d}:00Z").exit_code == 0  # nothing due
        return bool(json.loads((tmp_path / "cache" / "report.json").read_text())["rendered"])

    (public / ".git" / "objects" / "cd").mkdir()
    (public / ".git" / "objects" / "cd" / "ef01").write_text("a commit")
    assert rendered(1) is False
    (public / "index.html").write_text("edited by hand")
    assert rendered(2) is True
    assert "edited by hand" not in (public / "index.html").read_text()


def test_static_folders_are_copied_byte_for_byte_the_planets_winning(tmp_path: Path) -> None:
    theme = tmp_path / "theme"
    for folder, files in (
        (theme / "static", {"images/logo.png": b"\x89PNG theme", "robots.txt": b"theme"}),
        (
            tmp_path / "static",
            {"images/logo.png": b"\x89PNG\r\n\x1a\n\x00planet", ".hidden": b"x", "faces/a.jpg": b"\xff\xd8"},
        ),
    ):
        for name, data in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
    config = local_planet(tmp_path)
    assert build(config, "--templates", str(theme)).exit_code == 0
    public = tmp_path / "public"
    assert (public / "images" / "logo.png").read_bytes() == b"\x89PNG\r\n\x1a\n\x00planet"
    assert (public / "faces" / "a.jpg").read_bytes() == b"\xff\xd8"
    assert (public / "robots.txt").read_bytes() == b"theme"
    assert not (public / ".hidden").exists()
    (tmp_path / "static" / "faces" / "a.jpg").unlink()
    assert build(config, "--templates", str(theme), now="2026-11-30T12:01:00Z").exit_code == 0
    assert not (public / "faces" / "a.jpg").exists()  # syndicator wrote it, and no longer does


def test_a_theme_page_becomes_a_file_of_its_own(tmp_path: Path) -> None:
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "rss20.xml").write_text(
        '<rss version="2.0"><channel><title>{{ planet.title }}</title>'
        "{% for e in entries %}<item><title>{{ e.title }}</title></item>{% endfor %}"
        "</channel></rss>\n"
    )
    (theme / "about.html").write_text('{% extends "_layout.html" %}{% block main %}About us{% endblock %}')
    (theme / "_partial.html").write_text("a partial")
    (theme / "notes.md").write_text("not a page")
    (theme / "extra.css").write_text("{{ not a template }}")
    config = local_planet(tmp_path)
    assert build(config, "--templates", str(theme)).exit_code == 0
    public = tmp_path / "public"
    assert (
        (public / "rss20.xml").read_text()
        == '<rss version="2.0"><channel><title>Planet Test</title><item><title>Post 1</title></item></channel></rss>\n'
    )
    about = (public / "about.html").read_text()
    assert "About us" in about and "<title>Planet Test</title>" in about
    assert (public / "extra.css").read_text() == "{{ not a template }}"
    assert not (public / "_partial.html").exists() and not (public / "notes.md").exists()


def test_a_changed_static_file_renders_again(tmp_path: Path, server: HTTPServer) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}])
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "logo.svg").write_text("<svg/>")
    assert build(config).exit_code == 0
    (tmp_path / "static" / "logo.svg").write_text("<svg>new</svg>")
    assert build(config, now="2026-11-30T12:01:00Z").exit_code == 0  # nothing due
    assert json.loads((tmp_path / "cache" / "report.json").read_text())["rendered"] is True
    assert (tmp_path / "public" / "logo.svg").read_text() == "<svg>new</svg>"
