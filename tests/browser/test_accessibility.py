"""WCAG 2.1 A/AA in a real Chromium (issue 14), beyond the lessons as loaded and after Steps
(checked in the visit that renders each lesson, test_pages_in_chromium.py): what a reader opens —
answers, formulas, code, every chart's words — and the charts as readers with a colour-vision
deficiency see them. The rules and the framework's exemptions are in tests/browser/axe.py.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.axe import FRAMEWORK_ONLY, assert_accessible
from tests.browser.conftest import ROOT, click_when_ready, open_lesson
from ui.course import available

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize("slug", ["primer", "deltanet", "kimi_k3"])
def test_revealed_answers_formulas_and_chart_words_pass_axe(page, server_url, slug):
    """What a reader opens (answers, formulas, code, every chart's words) must pass too."""
    item = next(i for i in available() if i.slug == slug)
    open_lesson(page, server_url, item)
    main = page.locator("[data-testid='stMain']")
    _open_every_expander(page, main)
    for label in ("Show the answer", "Show the formula", "Show the code"):
        toggles = main.locator("[data-testid='stCheckbox'], [data-testid='stToggle']").filter(has_text=label)
        for i in range(toggles.count()):
            if toggles.nth(i).evaluate("e => !e.closest('[inert]')"):  # not inside a closed expander
                click_when_ready(page, toggles.nth(i).locator("label").first)
    _open_every_expander(page, main)
    opened = main.locator(
        "details[open]:has(> summary:has-text('Describe this chart')) [data-testid='stExpanderDetails']"
    )
    assert opened.count() >= 1, "no chart description could be opened"
    words = opened.first.inner_text()
    # core.figures.describe opens with the figure's kind: a chart of some kind, or a diagram with its own words
    assert re.match(r"(Diagram|Chart|Bar chart|Heatmap|Line chart|Scatter chart)\b", words), words[:80]
    assert len(words.split()) >= 8, f"an opened description is nearly empty: {words!r}"
    assert_accessible(page, f"{slug}-revealed")


def _open_every_expander(page, main) -> None:
    """Open every collapsed expander (chart words, settings, go-deeper boxes) of the main pane."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(3):  # an expander inside a closed one can open on the next round
        shut = main.locator("[data-testid='stExpander'] details:not([open]) > summary").element_handles()
        opened = 0
        for summary in shut:
            try:
                summary.click(timeout=2_000)  # one inside a closed expander is inert: left for later
                opened += 1
            except PlaywrightTimeout:
                continue
        page.wait_for_timeout(300)
        if not opened:
            return


def test_framework_exemptions_name_a_rule_a_place_and_a_reason():
    for item in FRAMEWORK_ONLY:
        assert item.rule and "[data-testid=" in item.inside and len(item.why) > 40


CVD_PAGES = {"kimi_k3": 2, "collisions": 3}  # lesson → how many of its charts to keep


@pytest.mark.parametrize("slug", sorted(CVD_PAGES))
def test_screenshots_under_simulated_colour_vision_deficiency(page, server_url, slug):
    """Charts as a protanope, deuteranope and tritanope see them (Machado et al. 2009 matrices as an
    SVG feColorMatrix over the page; SVG filters work in linear RGB, as the model does). The pictures
    are for people to look at: artifacts/screenshots/cvd/."""
    from tests.core.figures.test_style import MACHADO

    item = next(i for i in available() if i.slug == slug)
    open_lesson(page, server_url, item)
    out = ROOT / "artifacts" / "screenshots" / "cvd"
    out.mkdir(parents=True, exist_ok=True)
    charts = page.locator(".js-plotly-plot")
    assert charts.count() >= 1
    for vision, matrix in {"normal": None, **MACHADO}.items():
        values = (
            "" if matrix is None else " ".join(f"{v} " for row in matrix for v in [*row, 0, 0]) + "0 0 0 1 0"
        )
        page.evaluate(
            """(values) => {
                document.getElementById('cvd-filter')?.remove();
                document.documentElement.style.filter = values ? 'url(#cvd)' : '';
                if (!values) return;
                const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
                svg.id = 'cvd-filter'; svg.setAttribute('width', 0); svg.setAttribute('height', 0);
                svg.style.position = 'absolute';
                svg.innerHTML = `<filter id="cvd" color-interpolation-filters="linearRGB">
                    <feColorMatrix type="matrix" values="${values}"/></filter>`;
                document.body.appendChild(svg);
            }""",
            values,
        )
        for i in range(min(CVD_PAGES[slug], charts.count())):
            charts.nth(i).scroll_into_view_if_needed()
            page.wait_for_timeout(300)
            charts.nth(i).screenshot(path=str(out / f"{slug}-chart{i + 1}-{vision}.png"))
