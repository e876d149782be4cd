"""The GPT-2 and KV cache pages (GPT-2 plain, KV cache) in Japanese, driven through their widgets: Steps, the sampling
settings, the layer and head pickers, the calculator, the answers, formulas and code all render with no
exception and no English sentence left at Engineer depth, which shows everything Story shows (tests/app/japanese.py); the charts' titles and axes, and the
words that describe every chart (core/figures/describe.py), are Japanese."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from core.figures.describe import describe
from core.figures.style import base_layout
from core.i18n import use_language
from core.units import counted, format_count
from tests.app.driver import chart_spec
from tests.app.japanese import japanese_words, no_english, open_toggles
from tests.app.story import rendered


def _axis_title(spec: dict, axis: str) -> str:
    title = spec["layout"].get(axis, {}).get("title", {})
    return title.get("text", "") if isinstance(title, dict) else str(title)


@pytest.mark.slow
def test_gpt2_reads_in_japanese_through_its_widgets():
    with use_language("ja"):
        at = rendered("gpt2", "engineer", "ja", timeout=300)  # Engineer: everything Story shows, and more
        no_english(at, "first run")
        for _step in range(3):
            at.button(key="gpt2_t_step").click().run()
        no_english(at, "after three steps")
        grid = chart_spec(at, "gpt2_grid")
        assert japanese_words(grid["layout"]["title"]["text"]) or japanese_words(
            str(grid["layout"].get("meta", {}).get("title", ""))
        )
        assert japanese_words(_axis_title(grid, "xaxis")) and japanese_words(_axis_title(grid, "yaxis"))
        assert japanese_words(_axis_title(chart_spec(at, "gpt2_ms"), "xaxis"))
        at.slider(key="gpt2_temp").set_value(0.8).run()
        at.slider(key="gpt2_n").set_value(30).run()
        at.button(key="gpt2_t_step").click().run()
        no_english(at, "sampling at temperature 0.8, a shorter run")
        open_toggles(at, "gpt2_notice_total_reveal", "gpt2_notice_same_reveal", "gpt2_formula", "gpt2_code")
        no_english(at, "answers, formula and code open")


@pytest.mark.slow
def test_kv_cache_reads_in_japanese_through_its_widgets():
    with use_language("ja"):
        at = rendered("kv_cache", "engineer", "ja", timeout=300)
        no_english(at, "first run")
        for _step in range(3):
            at.button(key="kv_t_step").click().run()
        no_english(at, "after three steps")
        heatmaps = chart_spec(at, "kv_heatmaps")
        assert japanese_words(_axis_title(heatmaps, "yaxis"))
        assert all(japanese_words(a["text"]) for a in heatmaps["layout"]["annotations"])
        assert japanese_words(_axis_title(chart_spec(at, "kv_bytes"), "yaxis"))
        at.selectbox(key="kv_layer").set_value(1).run()
        at.selectbox(key="kv_head").set_value(1).run()
        no_english(at, "another layer and head")
        at.selectbox(key="kv_precision").set_value("16-bit weights (bf16)").run()
        at.select_slider(key="kv_context").set_value(1048576).run()
        no_english(at, "16-bit weights at 1M tokens (past the model's training length, spilling)")
        at.selectbox(key="kv_spec").set_value(list(at.selectbox(key="kv_spec").options)[-1]).run()
        no_english(at, "the last model of the list")
        open_toggles(at, "kv_notice_speed_reveal", "kv_notice_same_reveal", "kv_formula", "kv_code")
        no_english(at, "answers, formula and code open")


def test_the_chart_words_are_japanese_and_the_english_stays_as_it_was():
    fig = go.Figure(go.Scatter(x=list(range(1, 13)), y=[48 * i for i in range(1, 13)], name="cache rows"))
    base_layout(fig, title="Cache size", x_title="bytes read", y_title="cache (KiB)")
    english = describe(fig)
    assert english.startswith("Line chart: Cache size (across: bytes read; up: cache (KiB)).")
    with use_language("ja"):
        words = describe(fig)
    assert words.startswith("折れ線グラフ：Cache size（横軸：bytes read、縦軸：cache (KiB)）。")
    assert "12 点、48 KiB（1）から 576 KiB（12）まで" in words and "48 ずつ一定に増加" in words
    assert words.endswith("。") and not re.search(r"\b(rises|points|from|across)\b", words)
    heat = go.Figure(go.Heatmap(z=[[1.0, None], [None, None]], zmin=-1, zmax=1))
    with use_language("ja"):
        assert "2 行 × 2 列のマス目" in describe(heat) and describe(heat).startswith("ヒートマップ")


def test_counts_read_in_japanese_counters():
    with use_language("ja"):
        assert counted(3, "token") == "3 トークン"
        assert counted(12, "layer") == "12 層"
        assert format_count(124e6) == "1.2億" and format_count(2.62e12) == "2.6兆"
    assert counted(3, "token") == "3 tokens" and format_count(2.62e12) == "2.6 trillion"
