"""The course glossary: the `Term` type and its lookups (`TERMS`, `BY_KEY`, `get`, `alphabetical`).

Every term a beginner meets, in one plain sentence, with the lesson that explains it in depth; the
records themselves (one per term) are the table in `core/glossary_terms.py`. Pages introduce a term
with `ui.glossary.new_words(...)` in the first lesson (in course order) whose prose uses it;
`tests/app/test_glossary.py` walks the lessons in order and fails when a term is used before that.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from core.glossary_terms import RECORDS
from core.i18n import _, language, pgettext


@dataclass(frozen=True)
class Term:
    key: str
    name: str  # how the glossary and the "new words" box print it (English, marked NP_ "glossary": `shown_name`)
    text: str  # one plain sentence, no maths assumed: the English source with {placeholders} (N_)
    lesson: str  # slug of the lesson that explains it in depth (ui/course.py)
    patterns: tuple[str, ...]  # regexes over prose strings (case-sensitive; use (?i) where needed)
    code: tuple[str, ...] = ()  # regexes over page source for text built at run time
    first: str = ""  # slug of the lesson whose "new words" box explains it first, when earlier than `lesson`
    values: tuple[tuple[str, object], ...] = ()  # numbers for the {placeholders} of `text`
    reading: str = ""  # the Japanese name read in hiragana (how the Japanese glossary sorts it); "" when
    # Japanese writes the name in Latin letters

    @property
    def first_lesson(self) -> str:
        """Where a reader first meets the term explained (its first "new words" box)."""
        return self.first or self.lesson

    @property
    def sentence(self) -> str:
        """The sentence in English, numbers filled in (what the patterns and tests read)."""
        return self.text.format(**dict(self.values))

    def shown_name(self) -> str:
        """The name in the reader's language; a translated name written without any Latin letters
        gets the English name after it, so a reader can match other sources ("トークン（token）")."""
        shown = pgettext("glossary", self.name)
        if shown != self.name and not re.search(r"[A-Za-z]", shown):
            return _("{name} ({english})").format(name=shown, english=self.name)
        return shown

    def shown_sentence(self) -> str:
        """The sentence in the reader's language, numbers filled in after translation."""
        return _(self.text).format(**dict(self.values))

    def used_in(self, prose: str, source: str = "") -> bool:
        """True if `prose` (the page's strings) or `source` (its code) uses the term."""
        if any(re.search(p, prose) for p in self.patterns):
            return True
        return any(re.search(p, source) for p in self.code)


TERMS: tuple[Term, ...] = tuple(Term(**record) for record in RECORDS)  # in course order

BY_KEY: dict[str, Term] = {t.key: t for t in TERMS}
if len(BY_KEY) != len(TERMS):  # pragma: no cover - a typo guard
    raise ValueError("two glossary terms share a key")


def get(key: str) -> Term:
    """The term `key` (ValueError for an unknown key)."""
    try:
        return BY_KEY[key]
    except KeyError:
        raise ValueError(f"no glossary term {key!r}") from None


def alphabetical() -> list[Term]:
    """Every term, sorted the way a reader of this run's language looks one up: A to Z in English; in
    Japanese the names written in Latin letters first (A to Z), then the rest by reading (あいうえお順)."""
    if language() == "ja":
        return sorted(TERMS, key=_japanese_order)
    return sorted(TERMS, key=_latin_order)


def search(query: str) -> list[Term]:
    """The terms a reader's query finds, in `alphabetical()` order: by the English name and sentence,
    by what the reader reads, and in Japanese by the name's reading too, so 「こくばん」 finds 黒板 and
    「とーくん」 トークン (case, width and katakana against hiragana do not matter)."""
    needle = _folded(query.strip())
    if not needle:
        return alphabetical()
    return [
        t
        for t in alphabetical()
        if needle in _folded(" ".join((t.name, t.sentence, t.shown_name(), t.shown_sentence(), t.reading)))
    ]


def _folded(text: str) -> str:
    """`text` as a search compares it: NFKC (full-width Latin as ASCII), lower case, katakana as hiragana."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in text)


def _latin_order(term: Term) -> str:
    return term.name.lower().lstrip("-")


def _japanese_order(term: Term) -> tuple:
    """Latin-lettered names first, A to Z; then by reading in the order of the kana table."""
    shown = term.shown_name().lstrip("-")
    if re.match(r"[A-Za-z0-9]", shown) or not term.reading:
        return (0, _latin_order(term), "")
    return (1, gojuon(term.reading), term.reading)


_SMALL = str.maketrans("ぁぃぅぇぉっゃゅょゎ", "あいうえおつやゆよわ")
_VOWEL = {**dict.fromkeys("あかさたなはまやらわがざだばぱ", "あ"), **dict.fromkeys("いきしちにひみりぎじぢびぴ", "い"),
          **dict.fromkeys("うくすつぬふむゆるぐずづぶぷ", "う"), **dict.fromkeys("えけせてねへめれげぜでべぺ", "え"),
          **dict.fromkeys("おこそとのほもよろをごぞどぼぽ", "お")}  # fmt: skip


def gojuon(reading: str) -> str:
    """A hiragana reading as a dictionary sorts it (五十音順): voiced marks dropped (が as か), small kana
    as large, and the long-vowel mark ー as the vowel it lengthens (とーくん as とおくん)."""
    plain = "".join(c for c in unicodedata.normalize("NFD", reading) if c not in "\u3099\u309a")
    plain = unicodedata.normalize("NFC", plain).translate(_SMALL)
    out = []
    for c in plain:
        out.append(_VOWEL.get(out[-1], c) if c == "ー" and out else c)
    return "".join(out)
