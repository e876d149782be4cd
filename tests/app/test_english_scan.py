"""tests/app/japanese.py's scan: what it calls English on a Japanese page, in running text and in tables."""

from __future__ import annotations

from tests.app.japanese import english_in, english_words_in


def test_the_data_scan_catches_a_word_the_sentence_scan_misses():
    """'180 W / 150 W cap' has no three English words in a row; in a table it is English all the same."""
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
