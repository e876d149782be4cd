"""On a phone (390 × 844, touch), each lesson loaded once, in English at Story depth: the lesson comes first
(sidebar closed), charts fit the width and keep their words and numbers apart, link labels are whole,
Step is reachable by a tap; every page is screenshotted to artifacts/screenshots/phone/. On the same load,
the map's wide model table says it scrolls sideways and its toolbar leaves the context slider alone, and
Linear attention at its largest T keeps its 121 printed numbers apart."""

from __future__ import annotations

import pytest

from tests.browser.checks import Findings, assert_no_exception
from tests.browser.conftest import (
    DRAW_EVERY_CHART,
    PHONE,
    SCREENSHOTS,
    open_lesson,
    rerun_of,
    save_whole_page,
    settle_frames,
    settle_layout,
    wait_for_app,
)
from tests.browser.phone_layout import (
    cut_chart_text,
    cut_link_labels,
    overlapping_chart_labels,
    sidebar_is_closed,
    too_wide,
    touching_chart_numbers,
)
from ui.course import available

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize("item", available(), ids=lambda item: item.slug)
def test_phone_reader_gets_the_lesson_first(phone, server_url, item):
    page = phone
    open_lesson(page, server_url, item)
    with Findings(f"{item.slug} on a {PHONE['width']} px phone") as findings:
        with findings.check("no exception"):
            assert_no_exception(page, item.slug)
        with findings.check("sidebar"):
            assert sidebar_is_closed(page), f"{item.slug}: the sidebar covers the lesson on a phone"
        with findings.check("title"):
            assert item.title in page.locator("h1").first.inner_text()
        step = page.locator("[data-testid='stButton'] button", has_text="Step")
        if step.count():
            step.first.scroll_into_view_if_needed()
            box = step.first.bounding_box()
            with findings.check("Step on screen"):
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (
                    "Step is off screen"
                )
            with rerun_of(page):
                step.first.tap()
            with findings.check("no exception after a Step"):
                assert_no_exception(page, f"{item.slug} after Step")
        wide = too_wide(page)
        cut = cut_link_labels(page)
        cut_text = cut_chart_text(page)
        touching = touching_chart_numbers(page)
        overlapping = overlapping_chart_labels(page)
        save_whole_page(
            page, SCREENSHOTS / "phone" / f"{item.number:02d}_{item.slug}.png", width=PHONE["width"]
        )
        with findings.check("charts fit"):
            assert not wide, f"{item.slug}: charts wider than a {PHONE['width']} px screen: {wide}"
        with findings.check("link labels"):
            assert not cut, f"{item.slug}: link labels cut on a phone: {cut}"
        with findings.check("chart text at the edge"):
            assert not cut_text, f"{item.slug}: chart text cut at the chart's edge on a phone: {cut_text}"
        with findings.check("chart numbers"):
            assert not touching, f"{item.slug}: numbers on a chart run together on a phone: {touching}"
        with findings.check("chart labels"):
            assert not overlapping, f"{item.slug}: chart labels run into each other on a phone: {overlapping}"
        if item.slug in PAGE_CHECKS:
            page.set_viewport_size(PHONE)  # back to the phone's screen after the whole-page screenshot
            settle_layout(page)
            PAGE_CHECKS[item.slug](page, findings)


def _overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def _map_table_hints_its_columns_and_its_toolbar_leaves_the_slider_alone(page, findings) -> None:
    """The map's wide model table says it scrolls sideways, and its toolbar (search, download, full
    screen) no longer sits over the context slider's end."""
    table = page.locator("[data-testid='stDataFrame']").first
    table.scroll_into_view_if_needed()
    table.tap()  # a touch shows the table's toolbar
    settle_frames(page)  # drawn, and done fading in
    hint = page.get_by_text("Scroll sideways for all", exact=False).first
    with findings.check("map: the table's hint"):
        assert hint.is_visible(), "no visible 'Scroll sideways for all' hint over the map's table"
        # the words themselves, not their full-width paragraph: the toolbar may stand beside them
        hint_box = hint.evaluate(
            """e => { const r = document.createRange(); r.selectNodeContents(e);
                      const b = r.getBoundingClientRect();
                      return {x: b.left, y: b.top, width: b.width, height: b.height}; }"""
        )
        table_box = table.bounding_box()
        assert hint_box["y"] + hint_box["height"] <= table_box["y"] + 1, "the hint stands above the table"
        assert hint_box["x"] + hint_box["width"] <= PHONE["width"], "the hint fits the screen"
    with findings.check("map: the table's toolbar"):
        slider = page.locator("[data-testid='stSlider']").first.bounding_box()
        toolbars = page.locator("[data-testid='stElementToolbar']")
        boxes = [toolbars.nth(i).bounding_box() for i in range(toolbars.count())]
        boxes = [b for b in boxes if b and b["width"] > 0]
        assert boxes, "the table's toolbar was not found (Streamlit renamed it?)"
        assert not [b for b in boxes if _overlap(b, slider)], "a toolbar covers the context slider"
        assert not [b for b in boxes if _overlap(b, hint_box)], "a toolbar covers the scroll hint"
    with findings.check("map: charts fit with the toolbar shown"):
        wide = too_wide(page)
        assert not wide, f"map: charts wider than a {PHONE['width']} px screen: {wide}"


def _the_largest_regrouping_keeps_its_numbers_apart(page, findings) -> None:
    """Linear attention at its largest T (8): the 8 × 8 scores print 64 numbers; side by side with the next
    matrix on a phone they ran together, so each matrix is its own chart, one under the other."""
    slider = page.get_by_role("slider", name="tokens T")
    slider.focus()
    page.keyboard.press("End")
    # T = 8: 8 × 8 scores, 8 × 3 left route, 3 × 3 board, 8 × 3 right route — 121 printed numbers
    numbers = "() => document.querySelectorAll('g.heatmap-label text').length"
    # charts off screen draw when near the screen, or (as here) when the page is about to print
    page.wait_for_function(f"() => {{ ({DRAW_EVERY_CHART})(); return ({numbers})() === 121; }}")
    wait_for_app(page)
    with findings.check("linear_attention at T = 8"):
        assert page.evaluate(numbers) == 121, "not the 121 numbers of T = 8's four matrices"
        touching = touching_chart_numbers(page)
        assert not touching, f"numbers run together at T = 8 on a phone: {touching}"


PAGE_CHECKS = {  # lesson → what else its phone load is checked for
    "map": _map_table_hints_its_columns_and_its_toolbar_leaves_the_slider_alone,
    "linear_attention": _the_largest_regrouping_keeps_its_numbers_apart,
}


def test_every_extra_check_names_a_lesson_of_the_outline():
    """A renamed lesson must not silently drop the checks listed under its old name."""
    slugs = {item.slug for item in available()}
    assert set(PAGE_CHECKS) <= slugs, f"checks for lessons not in the outline: {set(PAGE_CHECKS) - slugs}"
