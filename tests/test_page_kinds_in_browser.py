"""Every kind of page a planet publishes, in headless Chromium, in an LTR and an RTL language: the front
page and an older one, the sites page, the archive's months, a month, a site's and a category's page,
and the search page with posts found. Each at 1280 and 390 CSS px, light and dark, checked for console
errors, requests off the machine, sideways scrolling, axe-core's serious and critical findings, our own
structure and contrast checks (tests/page_checks.js) and visible keyboard focus.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .browser import Browser, axe_source, opened, serve
from .conftest import build

DEMO = Path(__file__).parent.parent / "examples" / "demo"
KINDS = {
    "front": "index.html",
    "older": "page2.html",
    "sites": "sites.html",
    "months": "archive/index.html",
    "month": "archive/2026-11.html",
    "site": "sites/lattice/index.html",
    "category": "categories/python/index.html",
    "search": "search.html?q=bridge",
}
LANGUAGES = ("en", "ar")
WIDTHS = (1280, 390)
FAILING_IMPACTS = {"serious", "critical"}


@pytest.fixture(scope="module")
def planets(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The demo planet in English and in Arabic (5 entries a page, so there is a page2.html), both
    served on 127.0.0.1: {language: its URL}."""
    folder = tmp_path_factory.mktemp("planets")
    for language in LANGUAGES:
        shutil.copytree(DEMO, folder / language)
        config = folder / language / "sites.yaml"
        settings = f"title: Demo Planet\nlanguage: {language}\npage_entries: 5\n"
        config.write_text(config.read_text(encoding="utf-8").replace("title: Demo Planet\n", settings), "utf-8")
        public, cache = folder / "public" / language, folder / language / "cache"
        result = build(config, "--output", str(public), "--cache", str(cache))
        assert result.exit_code == 0, result.output
    with serve(browser, folder / "public") as url:
        yield {language: f"{url}{language}/" for language in LANGUAGES}


@pytest.fixture(scope="module")
def visit(browser: Browser, planets: dict[str, str]) -> Callable[..., dict[str, Any]]:
    done: dict[tuple[str, str, int, bool], dict[str, Any]] = {}
    axe = axe_source()

    def get(kind: str, language: str, width: int, dark: bool) -> dict[str, Any]:
        key = (kind, language, width, dark)
        if key not in done:
            with opened(browser, planets[language] + KINDS[kind], width, dark=dark) as tab:
                if kind == "search":
                    browser.wait(lambda: bool(tab.evaluate("document.querySelectorAll('#results a').length")))
                facts = tab.check("facts")
                problems = [p for p in tab.check("structure") + tab.check("contrast") if "form elements" not in p]
                violations = tab.axe(axe)
                focus = []
                for _ in range(4):
                    tab.press("Tab", "Tab", 9)
                    focus.append(tab.check("focus"))
                lang = tab.evaluate("document.documentElement.lang + ' ' + document.documentElement.dir")
                done[key] = {
                    "console": list(tab.console),
                    "refused": list(tab.refused),
                    "facts": facts,
                    "problems": problems,
                    "axe": violations,
                    "focus": focus,
                    "lang": lang,
                }
        return done[key]

    return get


every_view = pytest.mark.parametrize(
    ("kind", "language", "width", "dark"),
    [
        pytest.param(kind, language, width, dark, id=f"{kind}-{language}-{width}-{'dark' if dark else 'light'}")
        for kind in KINDS
        for language in LANGUAGES
        for width in WIDTHS
        for dark in (False, True)
    ],
)


@every_view
def test_every_page_kind_passes_the_browser_checks(
    visit: Callable[..., dict[str, Any]], kind: str, language: str, width: int, dark: bool
) -> None:
    seen = visit(kind, language, width, dark)
    assert seen["console"] == [] and seen["refused"] == []
    assert seen["lang"] == ("ar rtl" if language == "ar" else "en ltr")
    assert seen["facts"]["scroll_width"] <= width
    serious = [f"{v['id']}: {v['help']} {v['nodes'][:2]}" for v in seen["axe"] if v["impact"] in FAILING_IMPACTS]
    assert serious == []
    assert seen["problems"] == []
    for place in seen["focus"]:
        assert place["visible"], place
        assert place["contrast"] >= 3, place
