"""Both depths in a real Chromium (issue 40). Story, the default, is what every other browser test opens;
here each page opens at Engineer depth from its link, once in English and once in Japanese: no exception, the
switch shows Engineer, a screenshot at 1400 px (artifacts/screenshots/engineer/); in English the same axe
checks and a screenshot at a phone's 390 px; in Japanese the page's language and its line breaking
(tests/browser/japanese_lines.py) at 1400 px and, narrowed, at 390 px. And the depth survives a page change in
the sidebar and a reload."""

from __future__ import annotations

import pytest

from core.i18n import use_language
from tests.browser.axe import assert_accessible
from tests.browser.checks import Findings, assert_no_exception
from tests.browser.conftest import (
    SCREENSHOTS,
    click_when_ready,
    link,
    save_whole_page,
    settle_layout,
    wait_for_app,
)
from tests.browser.japanese_lines import check_line_breaking
from ui.course import available, lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE_WIDTH = 390
SWITCH = "[data-testid='stSidebar'] .st-key-depth_switch"


def _title(slug: str, lang: str) -> str:
    with use_language(lang):
        return lesson(slug).title


def _chosen(page) -> str:
    """The depth switch's pressed option, as drawn."""
    return page.locator(
        f"{SWITCH} button[aria-pressed='true'], {SWITCH} button[aria-checked='true']"
    ).first.inner_text()


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("item", available(), ids=lambda item: item.slug)
def test_engineer_depth_renders_from_its_link(page, server_url, item, lang):
    page.goto(f"{server_url}{link(item)}?depth=engineer&lang={lang}")
    wait_for_app(page)
    page.wait_for_selector("h1", timeout=60_000)
    with Findings(f"{item.slug} at Engineer depth ({lang})") as findings:
        with findings.check("no exception"):
            assert_no_exception(page, f"{item.slug} at Engineer depth ({lang})")
        with findings.check("title"):
            assert _title(item.slug, lang) in page.locator("h1").first.inner_text()
        with findings.check("link"):
            assert "depth=engineer" in page.url, "the link no longer says which depth it opens at"
        with findings.check("depth switch"):
            assert _chosen(page) == ("エンジニア" if lang == "ja" else "Engineer")
        folder = SCREENSHOTS / "engineer" / lang
        if lang == "ja":
            with findings.check("language"):
                assert page.evaluate("() => document.documentElement.lang") == "ja"
            check_line_breaking(page, findings, f"{item.slug} at 1400 px (engineer)")
        save_whole_page(page, folder / f"{item.number:02d}_{item.slug}.png")
        if lang != "en":
            # axe and the phone screenshot once a page: Engineer's layout is the same in both languages
            page.set_viewport_size({"width": PHONE_WIDTH, "height": 1000})
            settle_layout(page)
            check_line_breaking(page, findings, f"{item.slug} at {PHONE_WIDTH} px (engineer)")
            return
        with findings.check("axe"):
            assert_accessible(page, f"engineer-{item.slug}")
        save_whole_page(page, folder / f"{item.number:02d}_{item.slug}_phone.png", width=PHONE_WIDTH)


def test_the_depth_survives_a_page_change_and_a_reload(page, server_url):
    page.goto(server_url)
    wait_for_app(page)
    assert _chosen(page) == "Story"
    click_when_ready(page, page.locator(f"{SWITCH} button", has_text="Engineer").first)
    wait_for_app(page)
    page.wait_for_url("**depth=engineer**", timeout=30_000)
    target = lesson("chunks")
    click_when_ready(page, page.locator("[data-testid='stSidebarNav'] a", has_text=target.title).first)
    wait_for_app(page)
    page.wait_for_url(f"**/{target.url_path}?*depth=engineer*", timeout=30_000)
    assert _chosen(page) == "Engineer"
    assert page.locator("[data-testid='stMain'] h4", has_text="Go deeper").count(), "no Engineer section"
    page.reload()
    wait_for_app(page)
    assert _chosen(page) == "Engineer"
    assert_no_exception(page, "Chunks after a reload at Engineer depth")
    click_when_ready(page, page.locator(f"{SWITCH} button", has_text="Story").first)
    wait_for_app(page)
    assert "depth=" not in page.url
    assert not page.locator("[data-testid='stMain'] h4", has_text="Go deeper").count()
