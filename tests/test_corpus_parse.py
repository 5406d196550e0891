"""Every feed of the real-world corpus through the parser (shared/corpus, see its README).

No corpus feed may crash the parser. Each one parses to as many entries as
its MANIFEST.tsv ``items=N`` note says, except the files listed, with the
reason, in tests/data/corpus_expected.tsv. Skipped when the corpus is absent.
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pytest

from syndicator.errors import FeedError
from syndicator.parse.feed import parse_feed

from .conftest import NOW

CORPUS = Path(os.environ.get("SYNDICATOR_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
EXPECTED = Path(__file__).parent / "data" / "corpus_expected.tsv"


def _rows() -> list[dict[str, str]]:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    with manifest.open(encoding="utf-8", newline="") as file:
        return [row for row in csv.DictReader(file, delimiter="\t") if row["file"].startswith("feeds/")]


def _expected() -> dict[str, str]:
    lines = [line for line in EXPECTED.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    return {fields[0]: fields[1] for fields in (line.split("\t") for line in lines)}


ROWS = _rows()
pytestmark = pytest.mark.skipif(not ROWS, reason=f"corpus not found at {CORPUS} (set SYNDICATOR_CORPUS)")


@pytest.mark.parametrize("row", ROWS, ids=[row["file"].removeprefix("feeds/") for row in ROWS])
def test_corpus_feed_parses_to_the_right_entries(row: dict[str, str]) -> None:
    body = (CORPUS / row["file"]).read_bytes()
    expected = _expected().get(row["file"])
    try:
        parsed = parse_feed(body, "https://corpus.example/" + row["file"], {}, NOW)
    except FeedError as error:
        assert expected == error.kind, f"{row['file']}: {error.kind}: {error.message}"
        return
    count = re.search(r"\bitems=(\d+)", row["notes"])
    if expected is not None:
        assert str(len(parsed.entries)) == expected
    elif count:
        assert len(parsed.entries) == int(count.group(1))
    assert len({entry.id for entry in parsed.entries}) == len(parsed.entries)
    for entry in parsed.entries:
        assert entry.date is None or entry.date.tzinfo is not None
        assert entry.link is None or entry.link.startswith(("http://", "https://"))


def test_expectations_name_corpus_files() -> None:
    files = {row["file"] for row in ROWS}
    assert set(_expected()) <= files
