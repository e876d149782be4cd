"""Every lesson in a real Chromium, in English at Story depth, 1400 px wide, loaded once by its own link (a new
session's first page): it is the lesson, with no "Page not found" dialog over it and the address kept
(tests/browser/test_deep_links.py: the same on a fresh server); it renders with no Streamlit exception,
Steps, passes axe (WCAG 2.1 A/AA) as loaded and after Steps, and is screenshotted. Loading a lesson is the
costly part, so what other checks need of a lesson at this depth and width runs on the same load: the
sidebar lists every lesson (map); what a reader opens (answers, formulas, code, every chart's words)
passes axe (issue 14); charts as readers with a colour-vision deficiency see them are screenshotted;
Play advances on its own and Pause stops it (deltanet)."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest

from tests.browser.axe import assert_accessible
from tests.browser.checks import Findings, assert_no_exception
from tests.browser.conftest import (
    ROOT,
    SCREENSHOTS,
    click_when_ready,
    link,
    open_lesson,
    save_whole_page,
    settle_layout,
    step_position,
)
from ui.course import available

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize("item", available(), ids=lambda item: item.slug)
def test_lesson_renders_steps_and_passes_axe(page, server_url, item):
    """One visit a lesson: its own link shows the lesson (no dialog, the address kept), renders with no
    exception and passes axe; three Steps advance it three steps, and it passes again; a whole-page
    screenshot is kept; then the lesson's own extra checks (PAGE_CHECKS) run on the same page."""
    open_lesson(page, server_url, item)
    with Findings(f"{item.slug} (English, Story, 1400 px)") as findings:
        with findings.check("no exception"):
            assert_no_exception(page, item.slug)
        with findings.check("title"):
            assert item.title in page.locator("h1").first.inner_text()
        with findings.check("its own link"):
            dialogs = page.locator("[role='dialog']")
            shown = [dialogs.nth(i).inner_text() for i in range(dialogs.count())]
            assert not shown, f"{item.slug}: a dialog covers the lesson opened by its link: {shown}"
            path = urlparse(page.url).path
            assert path == link(item), f"{item.slug}: the address moved from {link(item)} to {path}"
        with findings.check("axe as loaded"):
            assert_accessible(page, f"{item.slug}-default")
        step = page.locator("[data-testid='stButton'] button", has_text="Step")
        if step.count():
            start = step_position(page)
            for _ in range(3):
                click_when_ready(page, step.first)
            with findings.check("no exception after Steps"):
                assert_no_exception(page, f"{item.slug} after Step")
            with findings.check("Steps"):
                assert step_position(page) == start + 3, "Step did not advance three steps"
            with findings.check("axe after Steps"):
                assert_accessible(page, f"{item.slug}-stepped")
        save_whole_page(page, SCREENSHOTS / f"{item.number:02d}_{item.slug}.png")
        for extra in PAGE_CHECKS.get(item.slug, ()):
            extra(page, item.slug, findings)


def _sidebar_lists_every_lesson(page, slug, findings) -> None:
    nav = page.locator("[data-testid='stSidebarNav']").inner_text()
    with findings.check("sidebar"):
        missing = [item.label for item in available() if item.label not in nav]
        assert not missing, f"lessons missing from the sidebar: {missing}"


def _play_advances_on_its_own_and_pauses(page, slug, findings) -> None:
    """Play is a timed fragment (AppTest cannot run timers), so it is checked here, from the start
    (Reset undoes the Steps above)."""
    main = page.locator("[data-testid='stMain']")
    buttons = page.locator("[data-testid='stButton'] button")

    def position() -> int:
        found = re.search(r"token (\d+) of \d+", main.inner_text())
        assert found, "no step counter on the page"
        return int(found.group(1))

    click_when_ready(page, buttons.filter(has_text="Reset").first)
    # not click_when_ready: while it plays the page reruns every tick, so it is never idle for long
    buttons.filter(has_text="Play").first.click(timeout=20_000)
    page.wait_for_function(
        "() => /token [3-9] of/.test(document.querySelector('[data-testid=stMain]').innerText)",
        timeout=60_000,
    )
    click_when_ready(page, buttons.filter(has_text="Pause").first)
    with findings.check("Play and Pause"):
        paused_at = position()
        page.wait_for_timeout(2500)
        assert position() == paused_at, "Pause did not stop the player"


def _revealed_answers_formulas_and_chart_words_pass_axe(page, slug, findings) -> None:
    """What a reader opens (answers, formulas, code, every chart's words) must pass too."""
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
    with findings.check("chart words"):
        assert opened.count() >= 1, "no chart description could be opened"
        words = opened.first.inner_text()
        # core.figures.describe opens with the figure's kind: a chart of some kind, or a diagram with its own words
        assert re.match(r"(Diagram|Chart|Bar chart|Heatmap|Line chart|Scatter chart)\b", words), words[:80]
        assert len(words.split()) >= 8, f"an opened description is nearly empty: {words!r}"
    with findings.check("axe with everything opened"):
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
        settle_layout(page)  # the opened ones laid out, and what they hold
        if not opened:
            return


CVD_CHARTS = {"kimi_k3": 2, "collisions": 3}  # lesson → how many of its charts to keep

CVD_FILTER = """(values) => {
    document.getElementById('cvd-filter')?.remove();
    document.documentElement.style.filter = values ? 'url(#cvd)' : '';
    if (!values) return;
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.id = 'cvd-filter'; svg.setAttribute('width', 0); svg.setAttribute('height', 0);
    svg.style.position = 'absolute';
    svg.innerHTML = `<filter id="cvd" color-interpolation-filters="linearRGB">
        <feColorMatrix type="matrix" values="${values}"/></filter>`;
    document.body.appendChild(svg);
}"""


def _screenshots_under_simulated_colour_vision_deficiency(page, slug, findings) -> None:
    """Charts as a protanope, deuteranope and tritanope see them (Machado et al. 2009 matrices as an
    SVG feColorMatrix over the page; SVG filters work in linear RGB, as the model does). The pictures
    are for people to look at: artifacts/screenshots/cvd/. The page is left unfiltered."""
    from tests.core.figures.test_style import MACHADO

    out = ROOT / "artifacts" / "screenshots" / "cvd"
    out.mkdir(parents=True, exist_ok=True)
    charts = page.locator(".js-plotly-plot")
    with findings.check("charts to screenshot as a colour-blind reader sees them"):
        assert charts.count() >= 1, "no chart on the page"
    for vision, matrix in {"normal": None, **MACHADO}.items():
        values = (
            "" if matrix is None else " ".join(f"{v} " for row in matrix for v in [*row, 0, 0]) + "0 0 0 1 0"
        )
        page.evaluate(CVD_FILTER, values)
        for i in range(min(CVD_CHARTS[slug], charts.count())):
            charts.nth(i).scroll_into_view_if_needed()
            settle_layout(page)  # a chart that came near is drawn at its width
            charts.nth(i).screenshot(path=str(out / f"{slug}-chart{i + 1}-{vision}.png"))
    page.evaluate(CVD_FILTER, "")


PAGE_CHECKS = {  # lesson → what else its load is checked for, in this order
    "map": (_sidebar_lists_every_lesson,),
    "primer": (_revealed_answers_formulas_and_chart_words_pass_axe,),
    "collisions": (_screenshots_under_simulated_colour_vision_deficiency,),
    "deltanet": (_play_advances_on_its_own_and_pauses, _revealed_answers_formulas_and_chart_words_pass_axe),
    "kimi_k3": (
        _screenshots_under_simulated_colour_vision_deficiency,
        _revealed_answers_formulas_and_chart_words_pass_axe,
    ),
}


def test_every_extra_check_names_a_lesson_of_the_outline():
    """A renamed lesson must not silently drop the checks listed under its old name."""
    slugs = {item.slug for item in available()}
    assert set(PAGE_CHECKS) <= slugs, f"checks for lessons not in the outline: {set(PAGE_CHECKS) - slugs}"
    assert set(CVD_CHARTS) <= set(PAGE_CHECKS)
