"""Progress in the reader's own browser (issue 45), in a real Chromium: pass a lesson's check and the
sidebar marks it, localStorage keeps it, a reload brings it back, the map shows it, another reader's
browser on the same server sees none of it, and the map's button clears it — also after another reload. Screenshots of the check answered wrong and right, the sidebar and
the map with a done lesson go to artifacts/screenshots/checks/; axe checks the answered check.
"""

from __future__ import annotations

import json

import pytest

from core.checks import CHECKED, STORAGE_KEY, Choice, questions
from tests.browser.axe import assert_accessible
from tests.browser.conftest import (
    SCREENSHOTS,
    click_when_ready,
    new_context,
    open_lesson,
    rerun_of,
    wait_for_app,
)
from ui.checks import CONTAINER, answer_key
from ui.course import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SLUG = "chunks"  # a light page: its check has a number and two choices
FOLDER = SCREENSHOTS / "checks"
NAV = "[data-testid='stSidebarNav'] a"


def _stored(page) -> list[str] | None:
    raw = page.evaluate(f"() => window.localStorage.getItem({json.dumps(STORAGE_KEY)})")
    return None if raw is None else json.loads(raw)["done"]


def _nav_label(page, slug: str) -> str:
    return page.locator(NAV, has_text=lesson(slug).label).first.inner_text()


def _answer(page, right: bool) -> None:
    """Answer every question of the check as a reader does: click an option, or type a number and Enter."""
    for question in questions(SLUG):
        widget = page.locator(f".st-key-{answer_key(SLUG, question)}")
        if isinstance(question, Choice):
            pick = question.answer if right else (question.answer + 1) % len(question.options)
            click_when_ready(page, widget.locator("label").filter(has_text=question.options[pick]).first)
        else:
            value = question.answer if right else question.answer + 1
            field = widget.locator("input")
            field.fill(f"{value:g}")
            with rerun_of(page):
                field.press("Enter")


def _shoot_check(page, name: str) -> None:
    box = page.locator(f".st-key-{CONTAINER}")
    box.scroll_into_view_if_needed()
    FOLDER.mkdir(parents=True, exist_ok=True)
    box.screenshot(path=str(FOLDER / name))


def test_progress_survives_a_reload_and_the_map_clears_it(page, browser, server_url):
    open_lesson(page, server_url, lesson(SLUG))
    page.evaluate(f"() => window.localStorage.removeItem({json.dumps(STORAGE_KEY)})")  # a fresh reader

    _answer(page, right=False)
    assert page.locator(f".st-key-{CONTAINER} [data-testid='stAlertContentWarning']").count() == len(
        questions(SLUG)
    )
    _shoot_check(page, "check_wrong.png")
    assert "✓" not in _nav_label(page, SLUG)
    assert not _stored(page)

    _answer(page, right=True)
    wait_for_app(page)
    page.locator(NAV, has_text=f"{lesson(SLUG).label} ✓").first.wait_for(timeout=30_000)
    _shoot_check(page, "check_right.png")
    assert_accessible(page, f"check-{SLUG}-answered")
    assert _stored(page) == [SLUG]

    page.reload()
    wait_for_app(page)
    page.locator(NAV, has_text=f"{lesson(SLUG).label} ✓").first.wait_for(timeout=30_000)
    assert "✓" not in _nav_label(page, "deltanet")

    click_when_ready(page, page.locator(NAV, has_text=lesson("map").label).first)
    panel = page.locator(".st-key-course_progress")
    panel.wait_for(timeout=60_000)
    assert f"1 of {len(CHECKED)} lessons checked" in panel.inner_text()
    page.locator("[data-testid='stSidebar']").screenshot(path=str(FOLDER / "sidebar_done.png"))
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=str(FOLDER / "map_done.png"))

    other = new_context(browser, viewport={"width": 1400, "height": 1000})  # another reader, same server
    try:
        elsewhere = other.new_page()
        elsewhere.goto(server_url)
        wait_for_app(elsewhere)
        elsewhere.locator(".st-key-course_progress", has_text="none yet").wait_for(timeout=60_000)
        assert "✓" not in _nav_label(elsewhere, SLUG)
    finally:
        other.close()

    click_when_ready(page, panel.get_by_role("button", name="Clear my progress"))
    page.locator(".st-key-course_progress", has_text="none yet").wait_for(timeout=30_000)
    assert "✓" not in _nav_label(page, SLUG)
    assert _stored(page) == []

    page.reload()
    wait_for_app(page)
    page.locator(".st-key-course_progress", has_text="none yet").wait_for(timeout=60_000)
    assert "✓" not in _nav_label(page, SLUG)
