"""On a phone (390 × 844, touch): the lesson comes first (sidebar closed), charts fit the width,
Step is reachable by a tap; every page is screenshotted to artifacts/screenshots/phone/."""

from __future__ import annotations

import pytest

from tests.browser.conftest import DRAW_EVERY_CHART, SCREENSHOTS, open_lesson, save_whole_page, wait_for_app
from ui.course import available

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = {"width": 390, "height": 844}


@pytest.fixture()
def phone(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1)
    page = context.new_page()
    yield page
    context.close()


def _sidebar_is_closed(page) -> bool:
    """The sidebar is closed when it is missing, marked collapsed, or lies off the screen."""
    bar = page.locator("[data-testid='stSidebar']")
    if not bar.count():
        return True
    if bar.first.get_attribute("aria-expanded") == "false":
        return True
    box = bar.first.bounding_box()
    return box is None or box["x"] + box["width"] <= 1


def _too_wide(page) -> list[str]:
    """Plotly charts and tables wider than the screen (a chart must fit without sideways scrolling)."""
    return page.evaluate(
        """(limit) => [...document.querySelectorAll('[data-testid=stBidiComponentRegular], .js-plotly-plot')]
            .map(e => e.getBoundingClientRect())
            .filter(r => r.width > 0 && r.right > limit + 2)
            .map(r => `${Math.round(r.left)}–${Math.round(r.right)} px`)""",
        PHONE["width"],
    )


def _cut_chart_text(page) -> list[str]:
    """Chart titles, axis titles, legend entries and notes that run past their chart's edge (plotly
    cuts them there): each as 'kind: "text"'."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
            const box = plot.getBoundingClientRect();
            return [...plot.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text, .legendtext, .annotation-text')]
                .filter(t => { const r = t.getBoundingClientRect();
                               return r.width > 0 && (r.right > box.right + 1 || r.left < box.left - 1); })
                .map(t => `${t.getAttribute('class')}: "${t.textContent}"`);
        })"""
    )


def _clashing_chart_texts(page, selector: str, pad_x: float, pad_y: float) -> list[str]:
    """Texts matching `selector` in one chart whose boxes come closer than `pad_x` / `pad_y` px
    (negative: may overlap that much), each clash as 'first | second'."""
    return page.evaluate(
        """([selector, padX, padY]) => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
            const texts = [...plot.querySelectorAll(selector)]
                .map(t => ({text: t.textContent, r: t.getBoundingClientRect()}))
                .filter(t => t.text && t.r.width > 0);
            const clash = [];
            texts.forEach((a, i) => texts.slice(i + 1).forEach(b => {
                const apart = a.r.right + padX < b.r.left || b.r.right + padX < a.r.left
                    || a.r.bottom + padY < b.r.top || b.r.bottom + padY < a.r.top;
                if (!apart) clash.push(`${a.text} | ${b.text}`);
            }));
            return clash;
        })""",
        [selector, pad_x, pad_y],
    )


def _touching_chart_numbers(page) -> list[str]:
    """Numbers printed on bars or heatmap cells that run into a neighbour's (grouped bars read
    "0.680.680.68"; eight heatmap columns side by side ran together). Bar numbers left out because
    they would be too small (uniformtext) are not drawn."""
    return _clashing_chart_texts(page, "text.bartext, g.heatmap-label text", 1, 0)


def _overlapping_chart_labels(page) -> list[str]:
    """Chart titles, panel titles, axis titles, legend entries and notes that run into each other
    (two panels' titles read "what went inback: 50% right", two x titles "pairs to rememberpairs to
    remember"); a pixel of overlap is allowed."""
    selector = '.gtitle, g[class$="title"] text, .annotation-text, .legendtext'
    return _clashing_chart_texts(page, selector, -2, -2)


def _cut_link_labels(page) -> list[str]:
    """Page links whose label is cut (Streamlit keeps it on one line behind an ellipsis)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=stPageLink-NavLink]')]
            .filter(a => [...a.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1))
            .map(a => a.innerText.replace(/\\s+/g, ' ').trim())"""
    )


@pytest.mark.parametrize("item", available(), ids=lambda item: item.slug)
def test_phone_reader_gets_the_lesson_first(phone, server_url, item):
    page = phone
    open_lesson(page, server_url, item)
    assert not page.locator("[data-testid='stException']").count(), f"exception on {item.slug}"
    assert _sidebar_is_closed(page), f"{item.slug}: the sidebar covers the lesson on a phone"
    assert item.title in page.locator("h1").first.inner_text()
    step = page.locator("[data-testid='stButton'] button", has_text="Step")
    if step.count():
        step.first.scroll_into_view_if_needed()
        box = step.first.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], "Step is off screen"
        step.first.tap()
        wait_for_app(page)
        assert not page.locator("[data-testid='stException']").count(), f"exception after Step on {item.slug}"
    wide = _too_wide(page)
    cut = _cut_link_labels(page)
    cut_text = _cut_chart_text(page)
    touching = _touching_chart_numbers(page)
    overlapping = _overlapping_chart_labels(page)
    save_whole_page(page, SCREENSHOTS / "phone" / f"{item.number:02d}_{item.slug}.png", width=PHONE["width"])
    assert not wide, f"{item.slug}: charts wider than a {PHONE['width']} px screen: {wide}"
    assert not cut, f"{item.slug}: link labels cut on a phone: {cut}"
    assert not cut_text, f"{item.slug}: chart text cut at the chart's edge on a phone: {cut_text}"
    assert not touching, f"{item.slug}: numbers on a chart run together on a phone: {touching}"
    assert not overlapping, f"{item.slug}: chart labels run into each other on a phone: {overlapping}"


def test_the_largest_regrouping_keeps_its_numbers_apart_on_a_phone(phone, server_url):
    """Lesson 3 at its largest T (8): the 8 × 8 scores print 64 numbers; side by side with the next
    matrix on a phone they ran together, so each matrix is its own chart, one under the other."""
    from ui.course import lesson

    page = phone
    page.goto(f"{server_url}/{lesson('linear_attention').url_path}")
    wait_for_app(page)
    slider = page.get_by_role("slider", name="tokens T")
    slider.focus()
    page.keyboard.press("End")
    # T = 8: 8 × 8 scores, 8 × 3 left route, 3 × 3 board, 8 × 3 right route — 121 printed numbers
    numbers = "() => document.querySelectorAll('g.heatmap-label text').length"
    # charts off screen draw when near the screen, or (as here) when the page is about to print
    page.wait_for_function(f"() => {{ ({DRAW_EVERY_CHART})(); return ({numbers})() === 121; }}")
    wait_for_app(page)
    assert page.evaluate(numbers) == 121
    assert not _touching_chart_numbers(page)
