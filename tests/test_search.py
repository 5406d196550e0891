"""The planet's search: the index (site/search.py) and search.html in headless Chromium, from a folder
opened as file:// and from a server on 127.0.0.1, asking no other site.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from syndicator.site.search import DOCS, Document, search_files, shard_name, words

from .browser import Browser, axe_source, opened, serve
from .conftest import build

DEMO = Path(__file__).parent.parent / "examples" / "demo"
FAILING_IMPACTS = {"serious", "critical"}


def test_words_are_folded_case_and_accents_and_unspaced_scripts_split() -> None:
    assert words("Café CAFÉ naïve") == {"cafe", "naive"}
    assert words("Straße") == {"strasse"}
    assert words("a I x2 日本語") == {"x2", "日", "本", "語"}
    assert words("مرحبا بالعالم") == {"مرحبا", "بالعالم"}


def test_the_index_is_sharded_by_the_first_two_letters_and_the_same_bytes_every_time() -> None:
    documents = [
        Document(
            f"archive/2026-11.html#e-{n}",
            f"Post {n}",
            "Site",
            "2026-11-01T00:00:00Z",
            "python packaging" if n % 2 else "rust",
        )
        for n in range(DOCS + 3)
    ]
    files = search_files(documents)
    assert files == search_files(documents)
    assert sorted(name for name in files if "/d-" in name) == ["search/d-0.js", "search/d-1.js"]
    assert shard_name("python") == "search/t-0070-0079.js" and shard_name("日") == "search/t-65e5.js"
    python = files["search/t-0070-0079.js"]
    assert python.startswith('syndicatorSearch.terms(...["py",{"post":') is False  # "post" is under "po"
    assert '"python":[1,3,5,' in python and '"rust"' not in python
    assert "<" not in "".join(files.values()).replace("\\u003c", "")


def test_a_title_cannot_end_the_index_script() -> None:
    files = search_files([Document("x", "</script><script>alert(1)</script>", "S", "2026-11-01T00:00:00Z", "")])
    assert "</script>" not in files["search/d-0.js"]


@pytest.fixture(scope="module")
def planet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo planet built into a folder, to be opened as file://."""
    folder = tmp_path_factory.mktemp("search")
    shutil.copytree(DEMO, folder / "demo")
    result = build(folder / "demo" / "sites.yaml", "--output", str(folder / "public"), "--cache", str(folder / "cache"))
    assert result.exit_code == 0, result.output
    return folder / "public"


def found(browser: Browser, url: str, width: int = 1280, dark: bool = False) -> tuple[str, list[str], list]:
    """The status line and the titles search.html shows at ``url``, and what the page asked off the machine."""
    with opened(browser, url, width, dark=dark) as tab:
        browser.wait(lambda: bool(tab.evaluate("document.getElementById('search-status').textContent")))
        status = tab.evaluate("document.getElementById('search-status').textContent")
        titles = tab.evaluate("[...document.querySelectorAll('#results a')].map(a => a.textContent)")
        assert tab.console == [], tab.console
        return status, titles, list(tab.refused)


def test_search_finds_a_post_by_a_word_of_its_text_from_file(browser: Browser, planet: Path) -> None:
    # "rope" is in the text of "Ten bridges, one afternoon", not in its title
    status, titles, refused = found(browser, (planet / "search.html").as_uri() + "?q=rope")
    assert titles == ["Ten bridges, one afternoon"] and status == "Posts found: 1"
    assert refused == []


def test_a_word_typed_without_its_accent_and_a_missing_word(browser: Browser, planet: Path, tmp_path: Path) -> None:
    status, titles, _ = found(browser, (planet / "search.html").as_uri() + "?q=ROPE%20bridge")
    assert titles == ["Ten bridges, one afternoon"]  # both words, any case; "bridge" is a start of "bridges"
    status, titles, _ = found(browser, (planet / "search.html").as_uri() + "?q=zeppelin")
    assert titles == [] and status == "No post has these words."


def test_a_found_post_links_to_its_place_in_the_archive(browser: Browser, planet: Path) -> None:
    with opened(browser, (planet / "search.html").as_uri() + "?q=rope", 1280) as tab:
        browser.wait(lambda: bool(tab.evaluate("document.querySelectorAll('#results a').length")))
        href = tab.evaluate("document.querySelector('#results a').href")
    place, anchor = href.split("#")
    assert place.endswith("/archive/2026-10.html") and f'id="{anchor}"' in Path(place[7:]).read_text("utf-8")


@pytest.mark.parametrize(("width", "dark"), [(1280, False), (390, True), (390, False), (1280, True)])
def test_the_search_page_is_accessible_served_over_http(browser: Browser, planet: Path, width: int, dark: bool) -> None:
    with serve(browser, planet) as url, opened(browser, url + "search.html?q=rope", width, dark=dark) as tab:
        browser.wait(lambda: bool(tab.evaluate("document.querySelectorAll('#results a').length")))
        violations = tab.axe(axe_source())
        problems = [p for p in tab.check("structure") + tab.check("contrast") if "form elements" not in p]
        assert tab.console == [] and tab.refused == []
    assert [v["id"] for v in violations if v["impact"] in FAILING_IMPACTS] == []
    assert problems == []
