"""The map on a phone (390 px): the wide model table says it scrolls sideways, and its toolbar
(search, download, full screen) no longer sits over the context slider's end."""

from __future__ import annotations

import pytest

from tests.browser.conftest import open_lesson
from tests.browser.test_phone import PHONE, _too_wide, phone  # noqa: F401 - phone is a fixture
from ui.course import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_map_table_hints_its_columns_and_its_toolbar_leaves_the_slider_alone(phone, server_url):  # noqa: F811
    page = phone
    open_lesson(page, server_url, lesson("map"))
    table = page.locator("[data-testid='stDataFrame']").first
    table.scroll_into_view_if_needed()
    table.tap()  # a touch shows the table's toolbar
    page.wait_for_timeout(500)
    hint = page.get_by_text("Scroll sideways for all", exact=False).first
    assert hint.is_visible()
    # the words themselves, not their full-width paragraph: the toolbar may stand beside them
    hint_box = hint.evaluate(
        """e => { const r = document.createRange(); r.selectNodeContents(e);
                  const b = r.getBoundingClientRect();
                  return {x: b.left, y: b.top, width: b.width, height: b.height}; }"""
    )
    table_box = table.bounding_box()
    assert hint_box["y"] + hint_box["height"] <= table_box["y"] + 1, "the hint stands above the table"
    assert hint_box["x"] + hint_box["width"] <= PHONE["width"], "the hint fits the screen"
    slider = page.locator("[data-testid='stSlider']").first.bounding_box()
    toolbars = page.locator("[data-testid='stElementToolbar']")
    boxes = [toolbars.nth(i).bounding_box() for i in range(toolbars.count())]
    boxes = [b for b in boxes if b and b["width"] > 0]
    assert boxes, "the table's toolbar was not found (Streamlit renamed it?)"
    assert not [b for b in boxes if _overlap(b, slider)], "a toolbar covers the context slider"
    assert not [b for b in boxes if _overlap(b, hint_box)], "a toolbar covers the scroll hint"
    assert not _too_wide(page)
