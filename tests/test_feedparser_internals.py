"""The parts of feedparser 6.0 that parse.feedreader builds on, private ones included.

feedparser's development branch has renamed ``_FeedParserMixin``; pyproject.toml pins feedparser to
the 6.0 line, and this test names what a newer release must still have before that pin moves.
"""

from __future__ import annotations

import importlib

import pytest

#: (module, name, the attributes of it syndicator reads)
NEEDED = [
    (
        "feedparser.mixin",
        "_FeedParserMixin",
        (
            "namespaces",
            "can_be_relative_uri",
            "looks_like_html",
            "map_content_type",
            "_enforce_href",
            "_save_author",
            "_sync_author_detail",
        ),
    ),
    ("feedparser.mixin", "_cp1252", ()),
    ("feedparser.api", "LooseFeedParser", ()),
    ("feedparser.api", "StrictFeedParser", ()),
    ("feedparser.api", "PREFERRED_XML_PARSERS", ()),
    ("feedparser.encodings", "convert_to_utf8", ()),
    ("feedparser.exceptions", "UndeclaredNamespace", ()),
    ("feedparser.sanitizer", "replace_doctype", ()),
    ("feedparser.sgml", "sgmllib", ("SGMLParser",)),
    ("feedparser.urls", "_urljoin", ()),
    ("feedparser.urls", "make_safe_absolute_uri", ()),
    ("feedparser.util", "FeedParserDict", ()),
]


@pytest.mark.parametrize(("module", "name", "attributes"), NEEDED, ids=[f"{m}.{n}" for m, n, _ in NEEDED])
def test_feedparser_still_has_what_the_tolerant_reader_builds_on(
    module: str, name: str, attributes: tuple[str, ...]
) -> None:
    found = getattr(importlib.import_module(module), name, None)
    assert found is not None, f"feedparser has no {module}.{name}: syndicator's tolerant reader needs it"
    missing = [attribute for attribute in attributes if not hasattr(found, attribute)]
    assert not missing, f"{module}.{name} has no {', '.join(missing)}"


def test_the_reader_classes_are_the_mixins() -> None:
    from feedparser.api import LooseFeedParser, StrictFeedParser
    from feedparser.mixin import _FeedParserMixin

    assert issubclass(LooseFeedParser, _FeedParserMixin) and issubclass(StrictFeedParser, _FeedParserMixin)
