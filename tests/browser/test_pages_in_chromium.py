"""Every lesson in a real Chromium: it renders with no Streamlit exception, Steps, passes axe as loaded
and after Steps (one visit a lesson: loading a lesson is the costly part), and is screenshotted."""

from __future__ import annotations

import re

import pytest

from tests.browser.axe import assert_accessible
from tests.browser.conftest import (
    SCREENSHOTS,
    click_when_ready,
    open_lesson,
    save_whole_page,
    step_position,
    wait_for_app,
)
from ui.course import available, lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _assert_no_exception(page, where: str) -> None:
    boxes = page.locator("[data-testid='stException']")
    if boxes.count():
        pytest.fail(f"Streamlit exception on {where}: {boxes.first.inner_text()[:2000]}")


@pytest.mark.parametrize("item", available(), ids=lambda item: item.slug)
def test_lesson_renders_steps_and_passes_axe(page, server_url, item):
    """One visit a lesson: its own link renders with no exception and passes axe (WCAG 2.1 A/AA);
    three Steps advance it three steps, and it passes again; a whole-page screenshot is kept."""
    open_lesson(page, server_url, item)
    _assert_no_exception(page, item.slug)
    assert item.title in page.locator("h1").first.inner_text()
    assert_accessible(page, f"{item.slug}-default")
    step = page.locator("[data-testid='stButton'] button", has_text="Step")
    if step.count():
        start = step_position(page)
        for _ in range(3):
            click_when_ready(page, step.first)
        _assert_no_exception(page, f"{item.slug} after Step")
        assert step_position(page) == start + 3, "Step did not advance three steps"
        assert_accessible(page, f"{item.slug}-stepped")
    save_whole_page(page, SCREENSHOTS / f"{item.number:02d}_{item.slug}.png")


def test_sidebar_lists_every_lesson(page, server_url):
    page.goto(server_url)
    wait_for_app(page)
    nav = page.locator("[data-testid='stSidebarNav']")
    for item in available():
        assert item.label in nav.inner_text()


def test_play_advances_on_its_own_and_pauses(page, server_url):
    """Play is a timed fragment (AppTest cannot run timers), so it is checked here."""
    page.goto(f"{server_url}/{lesson('deltanet').url_path}")
    wait_for_app(page)
    main = page.locator("[data-testid='stMain']")

    def position() -> int:
        found = re.search(r"token (\d+) of \d+", main.inner_text())
        assert found, "no step counter on the page"
        return int(found.group(1))

    click_when_ready(page, page.locator("[data-testid='stButton'] button", has_text="Play").first)
    page.wait_for_function(
        "() => /token [3-9] of/.test(document.querySelector('[data-testid=stMain]').innerText)",
        timeout=60_000,
    )
    click_when_ready(page, page.locator("[data-testid='stButton'] button", has_text="Pause").first)
    paused_at = position()
    page.wait_for_timeout(2500)
    assert position() == paused_at, "Pause did not stop the player"
