"""What the published pages say: footer, generator, authors, sites-page wording, "Read more", layout rules."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from pytest_httpserver import HTTPServer

from syndicator import __version__

from .conftest import ATOM, build, post, rss, tree, write_config


def publish(server: HTTPServer, tmp_path: Path, document: str) -> Path:
    """Serve ``document`` as the one feed of a planet, build it, and return the output folder."""
    server.expect_request("/feed.xml").respond_with_data(document, content_type="application/rss+xml")
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    result = build(config)
    assert result.exit_code == 0, result.output
    return tmp_path / "public"


def test_pages_name_syndicator_and_its_version_without_linking_anywhere(server: HTTPServer, tmp_path: Path) -> None:
    public = publish(server, tmp_path, rss(post(1)))
    footer = (public / "index.html").read_text().split("<footer>")[1]
    assert f"by syndicator {__version__}.</p>" in footer
    assert "<a " not in footer
    generator = ET.parse(public / "feed.xml").getroot().find(f"{ATOM}generator")
    assert generator is not None
    assert (generator.text, generator.attrib) == ("syndicator", {"version": __version__})
    for name, data in tree(public).items():
        assert b"github.com" not in data, name
