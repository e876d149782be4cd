"""Which language a reader gets (ui/i18n.py): the link's ?lang=, then their own choice, then their
browser's language on a first visit; the sidebar's switch changes it and keeps it in the link; two
readers in two languages do not mix."""

from __future__ import annotations

import pytest

from tests.app.driver import assert_clean, whole_app
from ui import i18n


@pytest.mark.parametrize(
    ("locale", "lang"),
    [
        ("ja", "ja"),
        ("ja-JP", "ja"),
        ("JA-jp", "ja"),
        ("en-US", "en"),
        ("fr-FR", "en"),
        (None, "en"),
        ("", "en"),
    ],
)
def test_browser_locale_picks_the_language(locale, lang):
    assert i18n.language_for_locale(locale) == lang


def test_english_by_default_and_japanese_from_the_link():
    assert whole_app().title[0].value.endswith("Map")
    at = whole_app(lang="ja")
    assert at.title[0].value.endswith("地図")
    assert at.query_params["lang"] == ["ja"] or at.query_params["lang"] == "ja"
    assert at.button_group(key="language_switch").value == "ja"


def test_a_japanese_browser_opens_in_japanese(monkeypatch):
    monkeypatch.setattr(i18n, "browser_locale", lambda: "ja-JP")
    at = whole_app()
    assert at.title[0].value.endswith("地図")
    monkeypatch.setattr(i18n, "browser_locale", lambda: "en-GB")
    assert whole_app().title[0].value.endswith("Map")


def test_the_switch_changes_the_language_and_writes_the_link():
    at = whole_app()
    at.button_group(key="language_switch").set_value("ja").run()
    assert_clean(at, "switch to Japanese")
    assert at.title[0].value.endswith("地図")
    assert "ja" in str(at.query_params.get("lang"))
    at.button_group(key="language_switch").set_value("en").run()
    assert at.title[0].value.endswith("Map")
    assert "en" in str(at.query_params.get("lang"))


def test_an_unknown_language_in_the_link_is_english():
    at = whole_app(lang="xx")
    assert at.title[0].value.endswith("Map")


def test_readers_in_two_languages_do_not_share_cached_words():
    """The same page, Japanese then English then Japanese in one process: each run shows its own
    language (a cache keyed without the language would hand one reader the other's words)."""
    for lang, title in (("ja", "地図"), ("en", "Map"), ("ja", "地図")):
        at = whole_app(lang=lang)
        assert at.title[0].value.endswith(title)
