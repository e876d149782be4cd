"""Every lesson renders in a real Chromium with no Streamlit exception; screenshots are kept."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import SCREENSHOTS, step_position, wait_for_app
from ui.course import COURSE, available, lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _assert_no_exception(page, where: str) -> None:
    boxes = page.locator("[data-testid='stException']")
    if boxes.count():
        pytest.fail(f"Streamlit exception on {where}: {boxes.first.inner_text()[:2000]}")


@pytest.mark.parametrize("item", available(), ids=lambda item: item.slug)
def test_lesson_renders(page, server_url, item):
    page.goto(f"{server_url}/{'' if item == COURSE.start else item.url_path}")
    wait_for_app(page)
    page.wait_for_selector("h1", timeout=60_000)
    _assert_no_exception(page, item.slug)
    assert item.title in page.locator("h1").first.inner_text()
    step = page.locator("[data-testid='stButton'] button", has_text="Step")
    if step.count():
        start = step_position(page)
        for _ in range(3):
            click_when_ready(page, step.first)
        _assert_no_exception(page, f"{item.slug} after Step")
        assert step_position(page) == start + 3, "Step did not advance three steps"
    save_whole_page(page, SCREENSHOTS / f"{item.number:02d}_{item.slug}.png")


def click_when_ready(page, locator, attempts: int = 3) -> None:
    """Click once the app accepts input: right after a (re)load Streamlit can hold the page inert
    for a moment, so a click that times out waits for the app and tries again."""
    for attempt in range(attempts):
        try:
            locator.click(timeout=20_000)
            break
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
            wait_for_app(page)
    wait_for_app(page)


def save_whole_page(page, path) -> None:
    """Screenshot the whole lesson: Streamlit scrolls inside its main pane, so grow the window to fit."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], section.main, "
        "[data-testid=stAppViewContainer]')].map(e => e.scrollHeight), 1000)"
    )
    page.set_viewport_size({"width": 1400, "height": min(int(height) + 40, 16000)})
    page.wait_for_timeout(800)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)


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
