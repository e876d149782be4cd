"""What a phone's 390 px screen must hold, read from the page: the sidebar closed, charts within the width,
no chart text cut or running together, no link label cut (test_phone.py reads them on every lesson)."""

from __future__ import annotations

from tests.browser.conftest import PHONE


def sidebar_is_closed(page) -> bool:
    """The sidebar is closed when it is missing, marked collapsed, or lies off the screen."""
    bar = page.locator("[data-testid='stSidebar']")
    if not bar.count():
        return True
    if bar.first.get_attribute("aria-expanded") == "false":
        return True
    box = bar.first.bounding_box()
    return box is None or box["x"] + box["width"] <= 1


def too_wide(page) -> list[str]:
    """Plotly charts and tables wider than the screen (a chart must fit without sideways scrolling)."""
    return page.evaluate(
        """(limit) => [...document.querySelectorAll('[data-testid=stBidiComponentRegular], .js-plotly-plot')]
            .map(e => e.getBoundingClientRect())
            .filter(r => r.width > 0 && r.right > limit + 2)
            .map(r => `${Math.round(r.left)}–${Math.round(r.right)} px`)""",
        PHONE["width"],
    )


def cut_chart_text(page) -> list[str]:
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


def clashing_chart_texts(page, selector: str, pad_x: float, pad_y: float) -> list[str]:
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


def touching_chart_numbers(page) -> list[str]:
    """Numbers printed on bars or heatmap cells that run into a neighbour's (grouped bars read
    "0.680.680.68"; eight heatmap columns side by side ran together). Bar numbers left out because
    they would be too small (uniformtext) are not drawn."""
    return clashing_chart_texts(page, "text.bartext, g.heatmap-label text", 1, 0)


def overlapping_chart_labels(page) -> list[str]:
    """Chart titles, panel titles, axis titles, legend entries and notes that run into each other
    (two panels' titles read "what went inback: 50% right", two x titles "pairs to rememberpairs to
    remember"); a pixel of overlap is allowed."""
    selector = '.gtitle, g[class$="title"] text, .annotation-text, .legendtext'
    return clashing_chart_texts(page, selector, -2, -2)


def cut_link_labels(page) -> list[str]:
    """Page links whose label is cut (Streamlit keeps it on one line behind an ellipsis)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=stPageLink-NavLink]')]
            .filter(a => [...a.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1))
            .map(a => a.innerText.replace(/\\s+/g, ' ').trim())"""
    )
