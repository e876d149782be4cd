"""The reader's language: gettext catalogs, one language per script run, and locale-aware formatting.

Every sentence a reader sees goes through `_` (or `ngettext` for counts) with named placeholders, so
a translation may reorder them: `_("{n} tokens cached").format(n=n)`. Text defined at import time
(outline titles, glossary entries) is marked with `N_` and translated where it is shown, `_(item.title)`.

The catalogs are `locale/<lang>/LC_MESSAGES/*.po` (written by hand, extracted with Babel:
`python -m scripts.catalogs`), compiled to `.mo` beside them on first use. The current language is a
context variable, set at the start of every Streamlit script run (`ui/i18n.py`): each reader's run
has its own, nothing process-wide changes. `core` never imports Streamlit; CLIs stay in English.
"""

from __future__ import annotations

import contextlib
import functools
import gettext
import io
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from datetime import date
from pathlib import Path

from babel.dates import format_date
from babel.numbers import format_decimal, format_percent

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
LANGUAGES = {"en": "English", "ja": "日本語"}  # code → the language's own name (the switch shows these)
DEFAULT = "en"  # the language the source strings are written in

_language: ContextVar[str | None] = ContextVar("course_language", default=None)
# Where the language comes from when this thread's run has not set it: Streamlit runs a fragment
# (a Step click, a timer) in a fresh thread without the full run's context, so ui/i18n.py registers
# a look-up of the reader's session here. core never imports Streamlit itself.
_fallback: Callable[[], str | None] = lambda: None  # noqa: E731


def language() -> str:
    """The language of the run in progress ("en" or "ja")."""
    lang = _language.get()
    if lang is None:
        lang = _fallback() or DEFAULT
    return lang


def use_fallback(find: Callable[[], str | None]) -> None:
    """Register where `language()` looks when no run has set it (ui/i18n.py: the reader's session)."""
    global _fallback
    _fallback = find


def set_language(lang: str) -> None:
    """Make `lang` the language of the current run (an unknown code falls back to English)."""
    _language.set(lang if lang in LANGUAGES else DEFAULT)


@contextlib.contextmanager
def use_language(lang: str) -> Iterator[None]:
    """Run a block in `lang` and restore the previous language afterwards (tests, one-off texts)."""
    token = _language.set(lang if lang in LANGUAGES else DEFAULT)
    try:
        yield
    finally:
        _language.reset(token)


def catalog_files(lang: str) -> list[Path]:
    """The `.po` catalogs of `lang`, in a fixed order (messages.po first, then the rest by name)."""
    folder = LOCALE_DIR / lang / "LC_MESSAGES"
    files = sorted(folder.glob("*.po"), key=lambda p: (p.stem != "messages", p.name))
    return files


def compile_catalog(po: Path) -> Path:
    """Build `po`'s `.mo` beside it when missing or older; returns the `.mo` path (fuzzy entries left out)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    mo = po.with_suffix(".mo")
    if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
        with po.open("rb") as f:
            catalog = read_po(f, locale=po.parents[1].name)
        tmp = mo.with_suffix(".mo.tmp")
        with tmp.open("wb") as f:
            write_mo(f, catalog, use_fuzzy=False)
        tmp.replace(mo)  # atomic: a second process never reads half a file
    return mo


@functools.cache
def translations(lang: str) -> gettext.NullTranslations:
    """All of `lang`'s catalogs chained into one (English: the source strings themselves)."""
    if lang == DEFAULT:
        return gettext.NullTranslations()
    chain: gettext.NullTranslations | None = None
    for po in catalog_files(lang):
        part = _compiled(po)
        if chain is None:
            chain = part
        else:
            chain.add_fallback(part)
    return chain or gettext.NullTranslations()


def _compiled(po: Path) -> gettext.GNUTranslations:
    """One catalog, from its `.mo` (built if stale); compiled in memory where the folder is read-only."""
    try:
        with compile_catalog(po).open("rb") as f:
            return gettext.GNUTranslations(f)
    except OSError:
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        with po.open("rb") as f:
            catalog = read_po(f, locale=po.parents[1].name)
        buffer = io.BytesIO()
        write_mo(buffer, catalog, use_fuzzy=False)
        buffer.seek(0)
        return gettext.GNUTranslations(buffer)


def _(message: str) -> str:
    """`message` in the reader's language (the English itself when no translation exists)."""
    if not message:
        return message
    return translations(language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for `n`, in the reader's language (Japanese has one form)."""
    return translations(language()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """`message` translated in `context`, for one English word that needs two translations."""
    return translations(language()).pgettext(context, message)


def N_(message: str) -> str:
    """Mark `message` for extraction without translating it now (text defined at import time)."""
    return message


def NP_(context: str, message: str) -> str:
    """Mark `message` with `context` for extraction without translating it now (a short English word
    defined at import time that needs its own translation, e.g. a glossary name); show it with
    `pgettext(context, message)`."""
    return message


def is_japanese() -> bool:
    return language() == "ja"


def number(x: float, digits: int = 0) -> str:
    """`x` with `digits` decimals and the locale's grouping: 12,345.6 (both languages group the same)."""
    pattern = "#,##0" + ("." + "0" * digits if digits > 0 else "")
    return format_decimal(x, format=pattern, locale=_babel_locale())


def percent(fraction: float, digits: int = 0) -> str:
    """A fraction as a percentage: 0.71 → "71%"."""
    pattern = "#,##0" + ("." + "0" * digits if digits > 0 else "") + "%"
    return format_percent(fraction, format=pattern, locale=_babel_locale())


def day(value: date | str) -> str:
    """A calendar date in the reader's words: "November 30, 2026" / "2026年11月30日"."""
    if isinstance(value, str):
        value = date.fromisoformat(value[:10])
    return format_date(value, format="long", locale=_babel_locale())


def run_on(*sentences: str) -> str:
    """Sentences one after the other as the reader's language sets them: a space between them in
    English, none in Japanese (the catalog's "{first} {then}", context "sentences"). Empty ones drop."""
    joined = ""
    for sentence in sentences:
        if sentence:
            joined = (
                pgettext("sentences", "{first} {then}").format(first=joined, then=sentence)
                if joined
                else sentence
            )
    return joined


def full_stop(sentence: str) -> str:
    """`sentence` ended as the reader's language ends one ("." / "。"), unless it already ends."""
    if not sentence or sentence.endswith((".", "!", "?", "…", "。", "！", "？")):
        return sentence
    return pgettext("sentence end", "{sentence}.").format(sentence=sentence)


def with_percent(number_text: str) -> str:
    """A number with its percent sign as the reader's language sets it: "71 %" / "71%"."""
    return pgettext("percent", "{number} %").format(number=number_text)


def list_of(parts: Iterable[str]) -> str:
    """Parts of a list as the reader's language separates them: "a, b" / "a、b"."""
    return pgettext("list separator", ", ").join(parts)


def stated_date(value: date | str) -> str:
    """A date as sentences about a run state it: ISO in English ("2026-11-30", as recorded), the
    calendar form in Japanese ("2026年11月30日"); the pattern is the catalog's (Babel's date pattern)."""
    if isinstance(value, str):
        value = date.fromisoformat(value[:10])
    return format_date(value, format=pgettext("date pattern", "yyyy-MM-dd"), locale=_babel_locale())


def _babel_locale() -> str:
    return {"en": "en_US", "ja": "ja_JP"}[language()]
