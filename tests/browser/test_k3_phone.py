"""The Kimi K3 and Experts pages on a phone (390 px): K3's layer map keeps a readable number in
every layer's cell, the per-layer memory bars keep their byte labels, the expert numbers under the
router charts stand apart, and the even-share line is named in the legend, not over the bars."""

from __future__ import annotations

import pytest

from core.specs import SPECS
from tests.browser.conftest import link, wait_for_app
from ui.course import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

K3 = SPECS["kimi_k3"]


def _open_engineer(page, server_url, slug: str) -> None:
    """The lesson at Engineer depth (`?depth=engineer`): the per-layer memory bars and the router charts are
    the engineers' pictures; Story draws neither."""
    page.goto(f"{server_url}{link(lesson(slug))}?depth=engineer")
    wait_for_app(page)
    page.wait_for_selector("h1", timeout=60_000)


def _chart(page, key: str):
    """The plotly chart drawn with `key` (Streamlit marks its container with the class st-key-KEY)."""
    chart = page.locator(f".st-key-{key} .js-plotly-plot").first
    chart.scroll_into_view_if_needed()
    chart.wait_for(state="visible")
    return chart


def _texts(chart, selector: str) -> list[dict]:
    """Visible texts in the chart that match `selector`, each with its box on the screen."""
    return chart.evaluate(
        """(plot, selector) => [...plot.querySelectorAll(selector)]
            .map(t => ({text: t.textContent, r: t.getBoundingClientRect().toJSON(),
                        shown: getComputedStyle(t).display !== 'none' && getComputedStyle(t).opacity !== '0'}))
            .filter(t => t.text && t.shown && t.r.width > 0)""",
        selector,
    )


def _clashes(texts: list[dict], pad: float = 1.0) -> list[str]:
    clash = []
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            ra, rb = a["r"], b["r"]
            apart = (
                ra["right"] + pad < rb["left"]
                or rb["right"] + pad < ra["left"]
                or ra["bottom"] <= rb["top"]
                or rb["bottom"] <= ra["top"]
            )
            if not apart:
                clash.append(f"{a['text']} | {b['text']}")
    return clash


def test_k3_layer_map_and_memory_bars_keep_their_labels_on_a_phone(phone, server_url):
    page = phone
    _open_engineer(page, server_url, "kimi_k3")
    cells = _texts(_chart(page, "k3_map"), "text.bartext")
    assert sorted(int(c["text"]) for c in cells) == list(range(1, K3.num_layers + 1)), (
        "a layer lost its number"
    )
    assert not _clashes(cells), "layer numbers run together"
    bars = _texts(_chart(page, "k3_layer_memory"), "text.bartext")
    bar_paths = _chart(page, "k3_layer_memory").evaluate("p => p.querySelectorAll('g.point').length")
    assert bar_paths and len(bars) == bar_paths, f"{len(bars)} byte labels for {bar_paths} bars"
    assert all("B" in b["text"] for b in bars) and not _clashes(bars)


def test_expert_charts_keep_numbers_apart_and_the_even_share_off_the_bars(phone, server_url):
    page = phone
    _open_engineer(page, server_url, "experts")
    for key in ("ex_router", "ex_load"):
        ticks = _texts(_chart(page, key), ".xtick text")
        assert [t["text"] for t in ticks] == [str(e) for e in range(16)], f"{key}: expert numbers missing"
        assert not _clashes(ticks, pad=0.5), f"{key}: expert numbers crowd"
    load = _chart(page, "ex_load")
    assert not _texts(load, ".annotation-text"), "a note is printed over the bars"
    legend = [t for t in _texts(load, ".legendtext") if t["text"].startswith("even share")]
    plot_area = load.evaluate("p => p.querySelector('.nsewdrag').getBoundingClientRect().toJSON()")
    assert legend and legend[0]["r"]["top"] >= plot_area["bottom"], "the even-share entry sits over the bars"
