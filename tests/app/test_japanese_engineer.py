"""Every page in Japanese at Engineer depth (`?lang=ja&depth=engineer`, issue 41): the tables, source
lines, benchmark notes and charts only engineers see read in Japanese too. No English sentence in the
text, no English word in a table, data frame or chart (tests/app/japanese.py), and the term table's
typography and number rules hold on the page (ratios as 倍, full-width punctuation, 京 past 10,000兆).
Story depth is read by tests/app/test_japanese_pages.py with the same scan."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.driver import assert_clean, page_path
from tests.app.japanese import english_left, typography_left
from ui.course import LESSONS

pytestmark = pytest.mark.slow


def engineer_in_japanese(slug: str) -> AppTest:
    at = AppTest.from_file(page_path(slug), default_timeout=300)
    at.query_params["lang"] = "ja"
    at.query_params["depth"] = "engineer"
    at.run()
    assert_clean(at, f"{slug} in Japanese at Engineer depth")
    return at


@pytest.mark.parametrize("slug", [item.slug for item in LESSONS])
def test_engineer_depth_reads_in_japanese(slug):
    at = engineer_in_japanese(slug)
    left = english_left(at)
    assert not left, f"{slug}: English left at Engineer depth: {left[:12]}"
    wrong = typography_left(at)
    assert not wrong, f"{slug}: typography at Engineer depth: {wrong[:12]}"


def test_the_data_scan_catches_a_word_the_sentence_scan_misses():
    """'180 W / 150 W cap' has no three English words in a row; in a table it is English all the same."""
    from tests.app.japanese import english_in, english_words_in

    for cell in ("180 W / 150 W cap", "9.06 vs 64.82 tokens/s", "batch 64", "paper (arXiv)"):
        assert english_in(cell) == []
        assert english_words_in(cell), cell
    for cell in (
        "電力上限 180 W / 150 W",
        "9.06 対 64.82 トークン/秒",
        "`config.json` の num_ctx",
        "q8_0 の KVキャッシュ",
    ):
        assert english_words_in(cell) == [], cell
