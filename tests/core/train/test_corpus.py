"""The training corpus is rebuilt byte for byte from its seed and covers multi-byte text."""

from __future__ import annotations

from core.train.corpus import CORPUS_PATH, DOCUMENT_SEPARATOR, build_corpus, load_corpus, split_train_heldout


def test_corpus_is_deterministic():
    assert build_corpus(seed=7, n_documents=300) == build_corpus(seed=7, n_documents=300)
    assert build_corpus(seed=7, n_documents=300) != build_corpus(seed=8, n_documents=300)


def test_shipped_corpus_matches_the_generator():
    assert CORPUS_PATH.exists(), "run `python -m core.train.corpus`"
    assert CORPUS_PATH.read_bytes() == build_corpus().encode("utf-8")


def test_corpus_size_and_multibyte_text():
    data = load_corpus()
    assert 300_000 <= len(data) <= 600_000
    text = data.decode("utf-8")
    assert "キャッシュ" in text  # Japanese: 3 bytes per character
    assert "🚀" in text  # emoji: 4 bytes
    assert sum(b >= 0x80 for b in data) > 5_000


def test_split_is_at_a_document_boundary():
    data = load_corpus()
    train, held = split_train_heldout(data, 0.05)
    assert train + held == data
    assert 0.03 < len(held) / len(data) < 0.07
    assert train.endswith(DOCUMENT_SEPARATOR.encode())
    held.decode("utf-8")  # a whole number of characters on each side
    train.decode("utf-8")
