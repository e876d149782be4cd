"""The Japanese catalogs against their term table (locale/ja/terms.toml, issue 41): one word per concept
in every msgstr of every .po in locale/ja/LC_MESSAGES, a word with two senses only in its own, ratios
as 倍, full-width punctuation beside Japanese, large counts in 京 past 10,000兆."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from core.i18n import LOCALE_DIR

TABLE = LOCALE_DIR / "ja" / "terms.toml"
TERMS = tomllib.loads(TABLE.read_text(encoding="utf-8"))


def translations() -> list[tuple[str, str, str]]:
    """(catalog, msgid, msgstr) for every translated string of every Japanese catalog (plural forms each)."""
    out = []
    for po in sorted((LOCALE_DIR / "ja" / "LC_MESSAGES").glob("*.po")):
        with po.open("rb") as f:
            catalog = read_po(f, locale="ja")
        for message in catalog:
            if not message.id:
                continue
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strs = message.string if isinstance(message.string, tuple) else (message.string,)
            out += [(po.name, ids[0], s) for s in strs if s]
    return out


TEXTS = translations()


def _uses(term: dict, text: str) -> list[str]:
    """The variants of `term` in `text` (after its introductions are taken out)."""
    for phrase in term.get("introductions", ()):
        text = text.replace(phrase, " ")
    found = [v for v in term.get("variants", ()) if v in text]
    return found + [p for p in term.get("variant_patterns", ()) if re.search(p, text)]


def test_the_table_is_well_formed():
    seen: dict[str, str] = {}
    for term in TERMS["term"]:
        assert {"concept", "preferred", "why"} <= term.keys(), term
        assert term.get("variants") or term.get("variant_patterns"), term
        for word in term.get("variants", ()):
            assert word != term["preferred"], term
            assert word not in seen, f"{word!r} is a variant of two concepts: {seen[word]!r}"
            seen[word] = term["concept"]
    for pattern in TERMS["pattern"]:
        re.compile(pattern["regex"])
        assert pattern["instead"], pattern


@pytest.mark.parametrize("term", TERMS["term"], ids=lambda t: t["concept"].split(" (")[0])
def test_one_word_per_concept(term):
    wrong = [
        f"{po}: {msgid[:60]!r} → {found}: {text[:120]!r}"
        for po, msgid, text in TEXTS
        if (found := _uses(term, text))
    ]
    assert not wrong, f"{term['concept']}: write {term['preferred']!r}\n" + "\n".join(wrong[:30])


@pytest.mark.parametrize(
    "term", [t for t in TERMS["term"] if t.get("introductions")], ids=lambda t: t["concept"].split(" (")[0]
)
def test_each_introduction_is_still_used(term):
    texts = [text for _, _, text in TEXTS]
    for phrase in term["introductions"]:
        assert any(phrase in text for text in texts), f"{phrase!r} is allowed but no msgstr uses it"


@pytest.mark.parametrize("pattern", TERMS["pattern"], ids=lambda p: p["name"])
def test_typography_and_numbers(pattern):
    regex = re.compile(pattern["regex"])
    wrong = [
        f"{po}: {msgid[:60]!r}: …{text[max(0, m.start() - 30) : m.end() + 20]!r}…"
        for po, msgid, text in TEXTS
        for m in [regex.search(text)]
        if m
    ]
    assert not wrong, f"{pattern['name']}: write {pattern['instead']}\n" + "\n".join(wrong[:30])


@pytest.mark.parametrize(
    ("text", "term", "caught"),
    [
        ("黒板に書き込みます。", "黒板", False),
        ("固定の状態は大きくなりません。", "黒板", True),
        ("黒板 / 固定の状態", "黒板", False),  # the glossary's introduction
        ("短い畳み込みの窓", "畳み込み", False),
        ("キーとバリューを黒板に畳み込みます。", "畳み込み", True),
        ("1つの会話で", "系列", True),
    ],
)
def test_the_check_catches_a_variant(text, term, caught):
    (row,) = [t for t in TERMS["term"] if t["preferred"] == term]
    assert bool(_uses(row, text)) is caught


@pytest.mark.parametrize(
    ("text", "name", "caught"),
    [
        ("密なモデルの0.73×の速さ", "ratio", True),
        ("密なモデルの{times}倍の速さ", "ratio", False),
        ("{w}×{w} の黒板", "ratio", False),
        ("2 × クロック × バス幅", "ratio", False),
        ("重み: BF16", "half-width comma or colon after Japanese", True),
        ("重み：BF16", "half-width comma or colon after Japanese", False),
        ("144,397兆", "large count in 兆 past 10,000", True),
        ("14京4,397兆", "large count in 兆 past 10,000", False),
    ],
)
def test_the_check_catches_a_pattern(text, name, caught):
    (row,) = [p for p in TERMS["pattern"] if p["name"] == name]
    assert bool(re.search(row["regex"], text)) is caught


def test_the_table_sits_beside_the_catalog():
    assert TABLE.parent == Path(LOCALE_DIR / "ja") and (TABLE.parent / "LC_MESSAGES" / "messages.po").exists()
