"""ui/live_chart.py in Chromium: a Step patches a chart in place, a chart off screen waits until the
reader scrolls near it and then shows the newest figure, and printing draws every chart.

The KV cache page on the shipped byte model: its Step changes the top-5 bars, the cache pictures
and the recompute grid; the grid sits about two screens below the Step controls.
"""

from __future__ import annotations

import pytest

from bench.load.chromium import SHOWS_STEP
from bench.load.protocol import STEP_STATUS
from tests.browser.conftest import DRAW_EVERY_CHART, EVERY_CHART_DRAWN, link, wait_until_idle
from ui.course import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STATE = "(key) => document.querySelector(`.st-key-${key} .course-chart`)?.dataset.courseState ?? null"
# "drawn" is set only when the newest figure the chart was sent has been drawn
DRAWN = f"(key) => ({STATE})(key) === 'drawn'"
PICTURE = "(key) => document.querySelector(`.st-key-${key} .course-chart .cartesianlayer`).innerHTML"


def _settle(page) -> None:
    """The script finished and the page heard nothing more for a moment (without drawing the charts that
    wait, as wait_for_app would)."""
    wait_until_idle(page, timeout_ms=120_000)


def _press_step(page, t: int) -> None:
    """Scroll to the Step button, press it from the keyboard and wait for step `t`."""
    button = page.locator("[data-testid='stButton'] button", has_text="Step").first
    button.scroll_into_view_if_needed()
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(SHOWS_STEP, arg=[t, STEP_STATUS.pattern], timeout=60_000)
    _settle(page)


def test_charts_off_screen_wait_and_show_the_newest_figure_when_near(server_url, page):
    page.goto(server_url + link(lesson("kv_cache")) + "?depth=engineer")  # the top-5 bars are the engineers'
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=180_000)
    page.wait_for_selector("h1", timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.course-chart').length >= 6", timeout=180_000)
    _settle(page)
    # the lesson opens at its top: the recompute grid, screens below, is not drawn yet
    assert page.evaluate(STATE, "kv_grid") == "waiting"

    page.locator(".st-key-kv_grid").scroll_into_view_if_needed()
    page.wait_for_function(DRAWN, arg="kv_grid", timeout=30_000)
    page.locator(".st-key-kv_top5").scroll_into_view_if_needed()
    page.wait_for_function(DRAWN, arg="kv_top5", timeout=30_000)
    page.evaluate("() => { window.__topNode = document.querySelector('.st-key-kv_top5 .course-chart'); }")
    grid_before, top_before = page.evaluate(PICTURE, "kv_grid"), page.evaluate(PICTURE, "kv_top5")

    _press_step(page, 1)
    # the bars beside the Step controls are redrawn on the same node; the grid, screens below,
    # still shows the finished run until the reader comes near it
    page.wait_for_function(DRAWN, arg="kv_top5", timeout=30_000)
    assert page.evaluate("() => window.__topNode === document.querySelector('.st-key-kv_top5 .course-chart')")
    assert page.evaluate(PICTURE, "kv_top5") != top_before
    assert page.evaluate(STATE, "kv_grid") == "waiting"
    assert page.evaluate(PICTURE, "kv_grid") == grid_before
    page.locator(".st-key-kv_grid").scroll_into_view_if_needed()
    page.wait_for_function(DRAWN, arg="kv_grid", timeout=30_000)
    grid_step_1 = page.evaluate(PICTURE, "kv_grid")
    assert grid_step_1 != grid_before

    # printing (and tests/browser/conftest.wait_for_app) draws what waits, without a scroll
    _press_step(page, 2)
    assert page.evaluate(STATE, "kv_grid") == "waiting"
    page.evaluate(DRAW_EVERY_CHART)
    page.wait_for_function(EVERY_CHART_DRAWN, timeout=30_000)
    assert page.evaluate(PICTURE, "kv_grid") != grid_step_1
    errors = page.locator("[data-testid='stException'], [data-testid='stAlertContentError']")
    assert errors.count() == 0
