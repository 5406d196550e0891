"""Strict checkers for the published files, shared by the output tests.

* :func:`atom_problems`: feed.xml against the RFC 4287 RELAX NG schema in
  ``tests/data/atom.rng`` plus the rules RFC 4287 states in prose (the
  Schematron notes of its appendix B): RFC 3339 dates with a time zone,
  absolute IRIs as ids, an author for every entry, content or an alternate
  link for every entry, unique entry ids.
* :func:`html_problems`: script, event handlers, javascript: URLs, and any
  request a page would make to a host other than its own, except images.
"""

from __future__ import annotations

import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

from lxml import etree

ATOM = "{http://www.w3.org/2005/Atom}"
SCHEMA = Path(__file__).parent / "data" / "atom.rng"
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_IRI = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>"{}|\\^`\x00-\x1f]+$')


@cache
def _schema() -> etree.RelaxNG:
    return etree.RelaxNG(etree.parse(str(SCHEMA)))


def atom_problems(document: bytes) -> list[str]:
    """Everything wrong with an Atom document (bytes); [] when it is valid."""
    try:
        root = etree.fromstring(document, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as e:
        return [f"not well-formed: {e}"]
    schema = _schema()
    problems = [] if schema.validate(root) else [str(error) for error in schema.error_log]
    for element in root.iter(f"{ATOM}updated", f"{ATOM}published"):
        if not _RFC3339.match(element.text or ""):
            problems.append(f"date {element.text!r} is not RFC 3339 with a time zone")
    ids = [element.text or "" for element in root.iter(f"{ATOM}id")]
    problems += [f"id {i!r} is not an absolute IRI" for i in ids if not _IRI.match(i)]
    feed_author = root.find(f"{ATOM}author") is not None
    entry_ids = []
    for entry in root.iter(f"{ATOM}entry"):
        entry_ids.append(entry.findtext(f"{ATOM}id"))
        if not feed_author and entry.find(f"{ATOM}author") is None:
            problems.append("an entry has no author and neither has the feed")
        alternate = [link for link in entry.findall(f"{ATOM}link") if link.get("rel", "alternate") == "alternate"]
        if entry.find(f"{ATOM}content") is None and not alternate:
            problems.append("an entry has neither content nor an alternate link")
    if len(entry_ids) != len(set(entry_ids)):
        problems.append("entry ids repeat")
    return problems


class _Requests(HTMLParser):
    """Collects what a browser would load or run from a page."""

    _LOADS = {
        ("img", "src"),
        ("script", "src"),
        ("link", "href"),
        ("iframe", "src"),
        ("embed", "src"),
        ("object", "data"),
        ("video", "src"),
        ("video", "poster"),
        ("audio", "src"),
        ("source", "src"),
        ("input", "src"),
        ("frame", "src"),
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.loads: list[tuple[str, str]] = []
        self.clicked: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        # the search page's own script and form (search.html), named exactly; nothing else may run or post
        own = (tag, named.get("src") or named.get("action")) in {("script", "search.js"), ("form", "search.html")}
        if tag in ("script", "style", "iframe", "object", "embed", "form", "base", "frame") and not own:
            self.problems.append(f"<{tag}> element")
        if tag == "meta" and any(n == "http-equiv" and (v or "").lower() == "refresh" for n, v in attrs):
            self.problems.append("meta refresh")
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on"):
                self.problems.append(f"event handler {name} on <{tag}>")
            if name == "style":
                self.problems.append(f"style attribute on <{tag}>")
            if value.startswith(("javascript:", "vbscript:", "data:")) and name in ("href", "src", "action"):
                self.problems.append(f"{value.split(':')[0]}: URL in {name} of <{tag}>")
            pointer = tag == "link" and (named.get("rel") or "").lower() in ("canonical", "alternate")
            if ((tag, name) in self._LOADS and not pointer) or name == "srcset":  # a canonical link loads nothing
                self.loads.append((tag, value))
        if tag in ("audio", "video") and named.get("preload") == "none" and "autoplay" not in named and "src" in named:
            src = (named["src"] or "").strip().lower()
            self.loads.remove((tag, src))
            self.clicked.append((tag, src))  # fetched only when the reader presses play


def html_problems(page: str) -> list[str]:
    """Unsafe markup in a published HTML page (str); [] when there is none.

    A page may load its own files (relative URLs) and images from any
    http(s) host, and nothing else; an audio or video element with
    ``preload="none"`` and no autoplay loads nothing until the reader
    presses play, and then only from an http(s) URL.
    """
    parser = _Requests()
    parser.feed(page)
    parser.close()
    problems = list(parser.problems)
    problems += [f"<{tag}> plays {url}" for tag, url in parser.clicked if not url.startswith(("http:", "https:"))]
    for tag, url in parser.loads:
        third_party = url.startswith(("http:", "https:", "//"))
        if third_party and tag != "img":
            problems.append(f"<{tag}> loads {url}")
    return problems


def run_build(folder: Path, sites: list[dict[str, str]], now: str, **settings: object) -> Path:
    """Run the real CLI build with a sites.yaml written in ``folder``; return the output folder."""
    from click.testing import CliRunner

    from syndicator.cli import main

    from .conftest import write_config

    config = write_config(folder, sites, **settings)
    result = CliRunner().invoke(
        main, ["build", "--config", str(config), "--now", now, "--force"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return folder / "public"
