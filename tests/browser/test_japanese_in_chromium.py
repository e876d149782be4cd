"""Every page in Japanese in a real Chromium, as a shared `?lang=ja` link opens it, loaded once: no exception,
the page's language is Japanese (`<html lang="ja">`), its title and Step button are in Japanese, no English
sentence is left in what Chromium draws (tests/app/japanese.py's rule), it passes the same axe checks
as in English, its lines break as a Japanese reader expects at 1400 px and, narrowed, at a phone's 390 px
(tests/browser/japanese_lines.py), and it is screenshotted at both widths (artifacts/screenshots/ja/)."""

from __future__ import annotations

import pytest

from core.i18n import use_language
from tests.app.japanese import english_in
from tests.browser.axe import assert_accessible
from tests.browser.checks import Findings, assert_no_exception
from tests.browser.conftest import SCREENSHOTS, click_when_ready, link, save_whole_page, wait_for_app
from tests.browser.japanese_lines import check_line_breaking
from ui.course import available, lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE_WIDTH = 390

# What a reader reads on the page: the main area and the sidebar, without code (blocks and inline
# `code`), formulas and the reader's own text in input boxes (code or data, not the page's words).
SHOWN_TEXT = """() => [...document.querySelectorAll('[data-testid=stMain], [data-testid=stSidebar]')].map(root => {
    const copy = root.cloneNode(true);
    copy.querySelectorAll('[data-testid=stCode], code, .katex, input, textarea, script, style')
        .forEach(e => e.remove());
    return copy.innerText;
}).join('\\n')"""


def _japanese(slug: str):
    with use_language("ja"):
        return lesson(slug)


@pytest.mark.parametrize("item", available(), ids=lambda item: item.slug)
def test_page_reads_in_japanese(page, server_url, item):
    shown = _japanese(item.slug)
    page.goto(f"{server_url}{link(item)}?lang=ja")
    wait_for_app(page)
    page.wait_for_selector("h1", timeout=60_000)
    with Findings(f"{item.slug} in Japanese") as findings:
        with findings.check("no exception"):
            assert_no_exception(page, item.slug)
        with findings.check("language"):
            assert page.evaluate("() => document.documentElement.lang") == "ja"
        with findings.check("title"):
            assert shown.title in page.locator("h1").first.inner_text()
        step = page.locator("[data-testid='stButton'] button", has_text="次へ")
        if step.count():
            click_when_ready(page, step.first)
            with findings.check("no exception after 次へ"):
                assert_no_exception(page, f"{item.slug} after 次へ")
        with findings.check("link"):
            assert "lang=ja" in page.url, "the link no longer says which language it opens in"
        with findings.check("English left"):
            english = english_in(page.evaluate(SHOWN_TEXT))
            assert not english, f"{item.slug}: English left on the Japanese page: {english[:10]}"
        with findings.check("axe"):
            assert_accessible(page, f"ja-{item.slug}")
        check_line_breaking(page, findings, f"{item.slug} at 1400 px (story)")
        save_whole_page(page, SCREENSHOTS / "ja" / f"{item.number:02d}_{item.slug}.png")
        save_whole_page(
            page, SCREENSHOTS / "ja" / "phone" / f"{item.number:02d}_{item.slug}.png", width=PHONE_WIDTH
        )
        check_line_breaking(page, findings, f"{item.slug} at {PHONE_WIDTH} px (story)")


def test_switching_language_in_the_sidebar_keeps_it_in_the_link(page, server_url):
    """English by default (Chromium here reports en-US); the sidebar's 日本語 switches the page and
    writes ?lang=ja into the link; the next lesson opened from the sidebar stays Japanese."""
    page.goto(server_url)
    wait_for_app(page)
    assert page.evaluate("() => document.documentElement.lang") == "en"
    click_when_ready(page, page.locator("[data-testid='stSidebar'] button", has_text="日本語"))
    page.wait_for_function("() => document.documentElement.lang === 'ja'", timeout=30_000)
    assert "lang=ja" in page.url
    kv = _japanese("kv_cache")
    click_when_ready(page, page.locator("[data-testid='stSidebarNav'] a", has_text=kv.title).first)
    page.wait_for_selector("h1", timeout=60_000)
    assert kv.title in page.locator("h1").first.inner_text()
    assert "lang=ja" in page.url
