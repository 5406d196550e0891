"""The planet's ``language``: page text from the shipped catalogues (en, de, fr, es, ar), day and month
names from CLDR, ``lang`` and ``dir`` on the pages, the feeds' language; a language without a catalogue
is English text under its own tag; the catalogues hold every text of the templates. Through the real CLI
with a feed on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po
from pytest_httpserver import HTTPServer

from syndicator.site.locales import CATALOGUES

from .conftest import build, post, rss, write_config

ROOT = Path(__file__).parent.parent
SHIPPED = ("de", "fr", "es", "ar")
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


def planet(tmp_path: Path, server: HTTPServer, language: str | None) -> Path:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1, day=30), post(2, day=29)))
    settings = {"language": language} if language else {}
    sites = [{"name": "Notes", "feed": server.url_for("/feed.xml")}]
    config = write_config(tmp_path, sites, host_gap=0, date_format="%A %d %B %Y", **settings)
    result = build(config)
    assert result.exit_code == 0, result.output
    return tmp_path / "public"


def test_a_german_planet_speaks_german_with_german_dates(tmp_path: Path, server: HTTPServer) -> None:
    public = planet(tmp_path, server, "de")
    front = (public / "index.html").read_text(encoding="utf-8")
    assert '<html lang="de" dir="ltr">' in front
    assert '<h2 id="subscriptions">Abonnements</h2>' in front and ">Neueste</a>" in front
    assert "Montag, 30. November 2026" in front  # the day's heading: CLDR's full date
    assert "Montag 30 November 2026</time>" in front  # date_format's %A and %B, in German
    sites = (public / "sites.html").read_text(encoding="utf-8")
    assert "<th>Letzter Beitrag</th>" in sites and "1 Seite." in sites and ">erreichbar<" in sites
    months = (public / "archive" / "index.html").read_text(encoding="utf-8")
    assert 'November 2026</a> <span class="count">2 Beiträge</span>' in months
    assert ET.parse(public / "feed.xml").getroot().get("{http://www.w3.org/XML/1998/namespace}lang") == "de"
    assert json.loads((public / "feed.json").read_text(encoding="utf-8"))["language"] == "de"


def test_an_arabic_planet_is_laid_out_right_to_left(tmp_path: Path, server: HTTPServer) -> None:
    public = planet(tmp_path, server, "ar")
    front = (public / "index.html").read_text(encoding="utf-8")
    assert '<html lang="ar" dir="rtl">' in front
    assert "الاشتراكات" in front and "الاثنين" in front and "نوفمبر" in front
    months = (public / "archive" / "index.html").read_text(encoding="utf-8")
    assert "تدوينتان" in months  # the dual: two posts


@pytest.mark.parametrize(("language", "word"), [("fr", "Abonnements"), ("es", "Suscripciones"), ("fr-CA", "lundi")])
def test_french_and_spanish_planets(tmp_path: Path, server: HTTPServer, language: str, word: str) -> None:
    front = (planet(tmp_path, server, language) / "index.html").read_text(encoding="utf-8")
    assert f'<html lang="{language}" dir="ltr">' in front and word in front


def test_a_language_without_a_catalogue_is_english_text_under_its_own_tag(tmp_path: Path, server: HTTPServer) -> None:
    front = (planet(tmp_path, server, "sw") / "index.html").read_text(encoding="utf-8")
    assert '<html lang="sw" dir="ltr">' in front and ">Subscriptions</h2>" in front


def test_without_a_language_the_pages_are_english_and_the_feeds_claim_none(tmp_path: Path, server: HTTPServer) -> None:
    public = planet(tmp_path, server, None)
    front = (public / "index.html").read_text(encoding="utf-8")
    assert '<html lang="en" dir="ltr">' in front and "Monday 30 November 2026" in front
    assert ET.parse(public / "feed.xml").getroot().get("{http://www.w3.org/XML/1998/namespace}lang") is None
    assert "language" not in json.loads((public / "feed.json").read_text(encoding="utf-8"))


def test_a_bad_language_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"name": "A", "feed": "a.xml"}], language="english please")
    result = build(config)
    assert result.exit_code != 0
    assert "language" in result.output and "is not a BCP 47 language tag" in result.output
    assert len([line for line in result.output.splitlines() if "error" in line]) == 1


def template_messages() -> dict[str, tuple[str, ...]]:
    """{msgid: its forms} of every text the templates give to _() or ngettext()."""
    found = {}
    options = {"extensions": "jinja2.ext.i18n", "trim_blocks": "true", "lstrip_blocks": "true"}
    for _, _, message, _, _ in extract_from_dir(
        str(ROOT / "templates"), method_map=[("**.html", "jinja2")], options_map={"**.html": options}
    ):
        forms = message if isinstance(message, tuple) else (message,)
        found[forms[0]] = forms
    return found


def test_the_template_catalogue_is_up_to_date() -> None:
    with (CATALOGUES / "messages.pot").open("rb") as pot:
        listed = {m.id[0] if isinstance(m.id, tuple) else m.id for m in read_po(pot) if m.id}
    assert listed == set(template_messages()), "run the pybabel extract command of docs/languages.md"


@pytest.mark.parametrize("language", SHIPPED)
def test_every_shipped_catalogue_translates_every_text_with_the_same_placeholders(language: str) -> None:
    with (CATALOGUES / language / "LC_MESSAGES" / "messages.po").open("rb") as po:
        catalogue = read_po(po)
    for msgid, forms in template_messages().items():
        message = catalogue.get(forms if len(forms) > 1 else msgid)
        assert message is not None and message.string, f"{language}: {msgid!r} is not translated"
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        assert len(strings) == catalogue.num_plurals if len(forms) > 1 else len(strings) == 1
        wanted = set(PLACEHOLDER.findall(msgid)) - {"num"}  # a plural form may leave the number out ("two")
        for string in strings:
            assert string and set(PLACEHOLDER.findall(string)) - {"num"} == wanted, (language, msgid, string)
