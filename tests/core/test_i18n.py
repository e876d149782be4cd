"""core.i18n: one language per run (a context variable, never process-wide), catalogs compiled from
the .po files, and numbers and dates in the reader's locale."""

from __future__ import annotations

import threading
from datetime import date

from core import i18n
from core.i18n import _, day, language, ngettext, number, percent, set_language, use_language


def test_english_is_the_source_and_the_default():
    assert language() == "en"
    assert _("Step") == "Step"
    assert ngettext("{n} token", "{n} tokens", 2) == "{n} tokens"


def test_japanese_comes_from_the_catalog():
    with use_language("ja"):
        assert _("Step") == "次へ"
        assert _("a sentence no catalog has") == "a sentence no catalog has"  # untranslated: the English
    assert _("Step") == "Step"  # restored afterwards


def test_an_unknown_language_falls_back_to_english():
    with use_language("xx"):
        assert language() == "en"


def test_each_thread_keeps_its_own_language():
    """Two readers' script runs in two threads: one in Japanese does not change the other's words."""
    seen: dict[str, str] = {}
    ready = threading.Barrier(2)

    def reader(lang: str) -> None:
        set_language(lang)
        ready.wait()  # both have set their language before either reads
        seen[lang] = _("Step")

    threads = [threading.Thread(target=reader, args=(lang,)) for lang in ("en", "ja")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"en": "Step", "ja": "次へ"}
    assert language() == "en"


def test_catalogs_compile_to_mo_beside_their_po(tmp_path, monkeypatch):
    folder = tmp_path / "ja" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "messages.po").write_text(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "Hello"\nmsgstr "こんにちは"\n\n'
        '#, fuzzy\nmsgid "Unsure"\nmsgstr "たぶん"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    i18n.translations.cache_clear()
    try:
        with use_language("ja"):
            assert _("Hello") == "こんにちは"
            assert _("Unsure") == "Unsure"  # a fuzzy entry is never shown
        assert (folder / "messages.mo").exists()
    finally:
        i18n.translations.cache_clear()


def test_numbers_and_dates_follow_the_locale():
    assert number(12345.678, 1) == "12,345.7"
    assert percent(0.712) == "71%"
    assert day(date(2026, 11, 30)) == "November 30, 2026"
    with use_language("ja"):
        assert number(12345.678, 1) == "12,345.7"
        assert day("2026-11-30T21:37:00") == "2026年11月30日"


def test_a_download_thread_speaks_the_language_of_the_reader_who_started_it():
    from core.models import downloads

    said: dict[str, str] = {}

    def fetcher(key, report):
        said["error"] = _("Step")
        return None

    with use_language("ja"):
        job, started = downloads.start("i18n-test", fetcher)
    assert started and job.wait(10)
    assert said["error"] == "次へ"


def test_a_run_that_set_no_language_asks_the_registered_fallback(monkeypatch):
    """A Streamlit fragment reruns in a fresh thread: the language comes from the reader's session
    (ui/i18n.py registers that look-up), and English where there is none."""
    monkeypatch.setattr(i18n, "_fallback", lambda: "ja")
    seen = {}
    thread = threading.Thread(target=lambda: seen.setdefault("word", _("Step")))
    thread.start()
    thread.join()
    assert seen["word"] == "次へ"
    monkeypatch.setattr(i18n, "_fallback", lambda: None)
    thread = threading.Thread(target=lambda: seen.__setitem__("word", _("Step")))
    thread.start()
    thread.join()
    assert seen["word"] == "Step"


def test_a_read_only_catalog_folder_is_compiled_in_memory(tmp_path, monkeypatch):
    folder = tmp_path / "ja" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "messages.po").write_text(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "Hello"\nmsgstr "こんにちは"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)

    def read_only(po):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(i18n, "compile_catalog", read_only)
    i18n.translations.cache_clear()
    try:
        with use_language("ja"):
            assert _("Hello") == "こんにちは"
        assert not (folder / "messages.mo").exists()
    finally:
        i18n.translations.cache_clear()
