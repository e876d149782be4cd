"""The byte tokenizer takes any Python string and gives it back unchanged."""

from __future__ import annotations

import random

import pytest

from core.tokenizer import VOCAB_SIZE, decode, encode, prepare_prompt, token_label

AWKWARD = [
    "",
    "hello",
    "こんにちは、世界",
    "🐱🚀❤️👩‍👩‍👧",  # emoji incl. a variation selector and a zero-width-joiner family
    "\x00\x01\t\r\n\x1b[0m\x7f",  # control characters
    "\ud800",  # lone high surrogate
    "a\udfffb\ud83d",  # lone low surrogate, and half of an emoji's surrogate pair
    "\u0301é\ufeff",  # combining mark, precomposed, BOM
    "\U0010ffff",  # the last code point
]


@pytest.mark.parametrize("text", AWKWARD)
def test_round_trip(text):
    ids = encode(text)
    assert all(0 <= i < VOCAB_SIZE for i in ids)
    assert decode(ids) == text


def test_round_trip_random_code_points():
    rng = random.Random(0)
    for _ in range(200):
        text = "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randrange(20)))
        assert decode(encode(text)) == text


def test_multibyte_lengths():
    assert len(encode("a")) == 1
    assert len(encode("キ")) == 3
    assert len(encode("🚀")) == 4


def test_partial_character_decodes_without_failing():
    cut = encode("🚀")[:2]
    assert decode(cut) == "\ufffd"


def test_encode_rejects_non_strings():
    with pytest.raises(TypeError):
        encode(b"bytes")  # type: ignore[arg-type]


def test_prompt_is_cut_to_the_window_with_a_note():
    prompt = prepare_prompt("x" * 300 + "END", 256)
    assert len(prompt.ids) == 256 and prompt.was_cut
    assert decode(prompt.ids).endswith("END")  # the newest bytes are kept
    assert "303 bytes" in prompt.note() and "256" in prompt.note()
    short = prepare_prompt("hi", 256)
    assert not short.was_cut and short.note() == ""


def test_empty_prompt_becomes_a_newline():
    assert prepare_prompt("", 10).ids == encode("\n")


def test_token_labels():
    assert token_label(ord("a")) == "a"
    assert token_label(ord(" ")) == "␣"
    assert token_label(0xE3) == "xE3"
    with pytest.raises(ValueError):
        token_label(256)


def test_byte_labels_name_every_byte_with_a_printable_character():
    from core.tokenizer import byte_labels

    labels = byte_labels(encode("a 猫🐱\n"))
    assert labels == ["a", "␣", "猫 1/3", "猫 2/3", "猫 3/3", "🐱 1/4", "🐱 2/4", "🐱 3/4", "🐱 4/4", "⏎"]
    assert byte_labels([0xE7, 0x41]) == ["xE7", "A"]  # a broken sequence falls back to hex
    assert len(byte_labels(list(range(256)))) == 256


def test_the_byte_models_tokens_say_which_are_pieces_of_a_character():
    """ByteTokenizer.token_bytes is the byte itself, so the page finds a character's pieces from
    bytes, as for GPT-2's tokens, not from how their labels look."""
    from core.models.hf_tokenizer import ByteTokenizer
    from ui.models.gpt2 import _is_piece

    tok = ByteTokenizer()
    live = type("Live", (), {"tokenizer": tok})()
    assert [tok.token_bytes(i) for i in tok.encode("é")] == [b"\xc3", b"\xa9"]
    assert [_is_piece(live, i) for i in tok.encode("aé\t")] == [False, True, True, False]
    with pytest.raises(ValueError):
        tok.token_bytes(256)
