"""The demo planet's pages in a real browser: headless Chromium driven over the DevTools protocol.

Each page (index.html, sites.html) is opened at 1280 and 390 CSS px (a desktop and a phone), in
the light and the dark colour scheme, and checked for: console errors (policy violations
included), scripts, style sheets, fonts or anything else loaded from another host (nothing may
leave the machine: tests/browser.py refuses it), sideways scrolling, the layout of the theme
(posts beside the subscriptions, a readable measure), accessibility (axe-core, whose serious and
critical findings fail, and our own checks in tests/page_checks.js) and visible keyboard focus.
Screenshots of every page, width and scheme are saved; the test that takes them prints where.
The tests skip only when no Chromium can be found (tests/browser.py says where it looks).
"""

from __future__ import annotations

import shutil
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .browser import Browser, BrowserError, axe_source, opened, serve
from .conftest import build

DEMO = Path(__file__).parent.parent / "examples" / "demo" / "sites.yaml"
PAGES = ("index.html", "sites.html")
WIDTHS = (1280, 390)
SCHEMES = ("light", "dark")
#: Where the team keeps screenshots it cites; they are copied there when its parent folder exists.
TEAM_SCREENS = Path("/work/notes/screens")
#: axe-core's impacts that fail a test (the others, moderate and minor, are printed only).
FAILING_IMPACTS = {"serious", "critical"}


@pytest.fixture(scope="module")
def demo(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo planet (examples/demo) built at a fixed time and served on 127.0.0.1; yields its URL."""
    folder = tmp_path_factory.mktemp("demo")
    result = build(DEMO, "--output", str(folder / "public"), "--cache", str(folder / "cache"))
    assert result.exit_code == 0, result.output
    with serve(browser, folder / "public") as url:
        yield url


@dataclass(frozen=True)
class Visit:
    """What one page showed at one width in one colour scheme."""

    console: list[str]
    requests: list[tuple[str, str]]
    refused: list[tuple[str, str]]
    facts: dict[str, Any]
    problems: list[str]
    axe: list[dict[str, Any]]
    focus: list[dict[str, Any]]


@pytest.fixture(scope="module")
def visit(browser: Browser, demo: str) -> Callable[[str, int, str], Visit]:
    """A demo page opened at a width and colour scheme, and all that was found there (each visit made once)."""
    done: dict[tuple[str, int, str], Visit] = {}
    axe = axe_source()

    def get(page: str, width: int, scheme: str) -> Visit:
        if (page, width, scheme) not in done:
            with opened(browser, demo + page, width, dark=scheme == "dark") as tab:
                facts = tab.check("facts")
                problems = tab.check("structure") + tab.check("contrast")
                violations = tab.axe(axe)
                focus = []
                for _ in range(3):  # the first links a keyboard reaches
                    tab.press("Tab", "Tab", 9)
                    focus.append(tab.check("focus"))
                done[page, width, scheme] = Visit(
                    list(tab.console), list(tab.requests), list(tab.refused), facts, problems, violations, focus
                )
        return done[page, width, scheme]

    return get


every_view = pytest.mark.parametrize(
    ("page", "width", "scheme"),
    [
        pytest.param(page, width, scheme, id=f"{page}-{width}-{scheme}")
        for page in PAGES
        for width in WIDTHS
        for scheme in SCHEMES
    ],
)


@every_view
def test_no_console_error_and_nothing_from_another_host(
    visit: Callable[..., Visit], demo: str, page: str, width: int, scheme: str
) -> None:
    seen = visit(page, width, scheme)
    assert seen.console == []
    assert seen.refused == []  # nothing but the demo's server was asked (the players preload nothing)
    assert seen.facts["scripts"] == 0
    assert seen.facts["sheets"] == [demo + "style.css"]
    assert seen.facts["font_faces"] == 0 and seen.facts["imports"] == []
    requests = [(kind, url) for kind, url in seen.requests if not url.startswith("data:")]  # the players' icons
    assert {"Document", "Stylesheet"} <= {kind for kind, _ in requests} <= {"Document", "Stylesheet", "Image", "Other"}
    assert all(url.startswith(demo) for _, url in requests), requests


@every_view
def test_nothing_scrolls_sideways_and_dates_stay_on_one_line(
    visit: Callable[..., Visit], page: str, width: int, scheme: str
) -> None:
    facts = visit(page, width, scheme).facts
    assert facts["viewport"] == width
    assert facts["scroll_width"] <= width
    assert facts["time_lines"] == 1


@every_view
def test_axe_finds_no_serious_accessibility_problem(
    visit: Callable[..., Visit], page: str, width: int, scheme: str
) -> None:
    violations = visit(page, width, scheme).axe
    for violation in violations:
        print(f"axe: {violation['impact']} {violation['id']}: {violation['help']} {violation['nodes'][:3]}")
    assert [v for v in violations if v["impact"] in FAILING_IMPACTS] == []


@every_view
def test_our_accessibility_checks_pass(visit: Callable[..., Visit], page: str, width: int, scheme: str) -> None:
    """Language, title, alt texts, named links, no form, headings in order, landmarks, text and link contrast."""
    assert visit(page, width, scheme).problems == []


@every_view
def test_keyboard_focus_is_visible(visit: Callable[..., Visit], page: str, width: int, scheme: str) -> None:
    focus = visit(page, width, scheme).focus
    assert [f["element"] for f in focus][:2] == ['<a> "Demo Planet"', '<a> "Latest"']
    for place in focus:
        assert place["visible"], place
        assert place["contrast"] >= 3, place


@pytest.mark.parametrize("page", PAGES)
def test_dark_mode_follows_the_system(visit: Callable[..., Visit], page: str) -> None:
    light, dark = (visit(page, 1280, scheme).facts for scheme in SCHEMES)
    assert sum(light["background"][:3]) > 3 * 230 and sum(light["color"][:3]) < 3 * 60
    assert sum(dark["background"][:3]) < 3 * 40 and sum(dark["color"][:3]) > 3 * 200


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_subscriptions_sit_beside_the_posts_on_a_wide_screen_and_after_them_on_a_phone(
    visit: Callable[..., Visit], scheme: str
) -> None:
    wide, phone = (visit("index.html", width, scheme).facts for width in WIDTHS)
    assert wide["aside"]["left"] >= wide["main"]["right"]
    assert wide["aside"]["top"] < wide["main"]["bottom"]
    assert phone["aside"]["top"] >= phone["main"]["bottom"]
    assert phone["aside"]["width"] == phone["main"]["width"]


@pytest.mark.parametrize("width", WIDTHS)
def test_posts_are_set_in_the_system_font_at_a_readable_measure(visit: Callable[..., Visit], width: int) -> None:
    facts = visit("index.html", width, "light").facts
    assert facts["font_family"].startswith("system-ui")
    assert facts["line_height"] == pytest.approx(1.5)
    assert facts["article_width"] <= facts["measure_65ch"] + 1  # at most 65 characters of "0" a line
    assert facts["article_width"] >= min(facts["measure_65ch"], width - 32) - 1  # the column is used


def png_size(path: Path) -> tuple[int, int]:
    """The width and height of a PNG file, from its header."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_screenshots_of_the_demo_planet(
    browser: Browser, demo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """index.html and sites.html at 1280 and 390 px, light and dark, as PNG files whole pages tall."""
    shots = []
    for page in PAGES:
        for width in WIDTHS:
            for scheme in SCHEMES:
                with opened(browser, demo + page, width, dark=scheme == "dark") as tab:
                    name = f"{page.removesuffix('.html')}-{width}{'-dark' if scheme == 'dark' else ''}.png"
                    shot = tab.screenshot(tmp_path / name, width, dark=scheme == "dark")
                    assert png_size(shot) == (width, tab.evaluate("document.documentElement.scrollHeight"))
                    assert tab.evaluate("[...document.images].every(image => image.complete && image.naturalWidth)")
                    shots.append(shot)
    assert shots[0].read_bytes() != shots[1].read_bytes()  # light and dark differ
    places = [tmp_path]
    if TEAM_SCREENS.parent.is_dir():
        TEAM_SCREENS.mkdir(exist_ok=True)
        for shot in shots:
            shutil.copyfile(shot, TEAM_SCREENS / shot.name)
        places.append(TEAM_SCREENS)
    with capsys.disabled():
        print(f"\nscreenshots of the demo planet: {' and '.join(map(str, places))}")


# --- the checks themselves -----------------------------------------------------------------

BAD_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Bad</title>
<link rel="stylesheet" href="https://cdn.example.org/theme.css">
<style>.faint { color: #aaa } .wide { width: 2000px } a.plain { text-decoration: none; color: #222 }
a:focus { outline: none }</style></head>
<body><h1>Bad page</h1><h3>Skipped a level</h3>
<p class="faint">Grey on white.</p><img src="x.png"><div class="wide">wide</div>
<p>Some text with <a class="plain" href="#x">a link like the text</a> in it.</p>
<form><input name="q"></form>
<script>console.error("boom")</script></body></html>
"""


def test_the_checks_find_what_is_wrong_with_a_bad_page(browser: Browser, tmp_path: Path) -> None:
    """A page with every fault the checks look for (and no policy to stop them) fails each check."""
    page = tmp_path / "bad.html"
    page.write_text(BAD_PAGE, encoding="utf-8")
    with opened(browser, page.as_uri(), 390) as tab:
        facts = tab.check("facts")
        problems = "\n".join(tab.check("structure") + tab.check("contrast"))
        violations = {v["id"]: v["impact"] for v in tab.axe(axe_source())}
        tab.press("Tab", "Tab", 9)
        focus = tab.check("focus")
        console, refused = list(tab.console), list(tab.refused)
    assert ("Stylesheet", "https://cdn.example.org/theme.css") in refused
    assert any("boom" in line for line in console)
    assert facts["scripts"] == 1 and facts["scroll_width"] > 390
    assert "no lang attribute" in problems and "an image without alt" in problems
    assert "heading level 1 followed by 3" in problems and "form elements" in problems
    assert "contrast 2.32:1" in problems and "link not underlined" in problems
    assert "text outside every landmark" in problems and "0 elements match main" in problems
    assert violations.get("image-alt") == "critical" and violations.get("color-contrast") == "serious"
    assert focus["element"] == '<a class=plain> "a link like the text"' and not focus["visible"]


def test_a_browser_that_stops_answering_fails_the_test(browser: Browser) -> None:
    with pytest.raises(BrowserError, match="no answer"):
        browser.wait(lambda: False, timeout=0.2)
