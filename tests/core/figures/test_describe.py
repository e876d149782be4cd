"""Charts in words (issue 14): the text alternative computed from a plotly figure's own data."""

from __future__ import annotations

import time

import numpy as np
import plotly.graph_objects as go

from core.figures.describe import describe, describe_what
from core.figures.figure_dict import patched
from core.figures.layer_map import k3_layer_map
from core.figures.style import base_layout, heatmap
from core.specs import KIMI_K3


def _cache_figure(rows_filled: int, rows: int = 48, width: int = 8) -> go.Figure:
    z = np.full((rows, width), np.nan, dtype=np.float32)
    z[:rows_filled] = np.linspace(-1, 1, rows_filled * width).reshape(rows_filled, width)
    fig = go.Figure(heatmap(z, -1, 1))
    return base_layout(fig, title=f"K cache after {rows_filled} bytes", x_title="channel", y_title="position")


def test_a_growing_line_is_read_with_its_ends_and_its_steady_step():
    fig = go.Figure(go.Scatter(x=list(range(1, 13)), y=[48 * i for i in range(1, 13)], name="cache rows"))
    base_layout(fig, title="Cache size", x_title="bytes read", y_title="cache (KiB)")
    words = describe(fig)
    assert words.startswith("Line chart: Cache size (across: bytes read; up: cache (KiB)).")
    assert "cache rows: 12 points, from 48 KiB at 1 to 576 KiB at 12" in words
    assert "rises by 48 per step, steadily" in words


def test_trends_are_named():
    def trend(y):
        return describe(go.Figure(go.Scatter(y=y, name="s")))

    assert "flat" in trend([3, 3, 3, 3])
    assert "falls all the way" in trend([9, 5, 2, 1.5])
    assert "2× per step" in trend([1, 2, 4, 8, 16])
    assert "rises overall, not steadily" in trend([1, 3, 2, 6])
    assert "ending about where it started" in trend([1, 5, 1])
    assert "highest 5 at 1" in trend([1, 5, 1])


def test_a_half_filled_heatmap_says_how_much_is_filled_and_where_it_is_strongest():
    words = describe(_cache_figure(12))
    assert words.startswith("Heatmap: K cache after 12 bytes (across: channel; up: position).")
    assert "a grid of 48 rows × 8 columns, 12 of 48 rows filled in" in words
    assert "values from -1 to 1 (colour scale fixed at -1 to 1)" in words
    assert "strongest -1 at row 0, column 0" in words


def test_few_bars_are_read_one_by_one_with_their_unit():
    fig = go.Figure(go.Bar(x=["GPT-2", "Llama-3-8B", "Kimi K3"], y=[36, 128, 27.0]))
    base_layout(fig, title="Cache per token", y_title="KiB per token (KiB)")
    assert "bars: GPT-2 36 KiB, Llama-3-8B 128 KiB, Kimi K3 27 KiB." in describe(fig)


def test_horizontal_bars_read_the_value_axis():
    fig = go.Figure(go.Bar(y=["a", "b"], x=[2.5, 7.25], orientation="h", name="speed"))
    assert "speed: a 2.5, b 7.25" in describe(fig)


def test_the_k3_layer_map_names_where_each_kind_sits_not_only_its_colour():
    words = describe(k3_layer_map(KIMI_K3))
    assert "93 layers = 69 KDA + 24 MLA" in words
    assert "69 cells, at layers 1–3, 5–7, 9–11" in words
    assert "24 cells, at layers 4, 8, 12, 16" in words and words.endswith("88, 92–93.")
    assert "8 rows, one per Attention Residuals block of 12 layers (layers 1–12, " in words


def test_a_patched_figure_with_base64_arrays_reads_the_same_as_the_original():
    fig = _cache_figure(20)
    step = patched(fig.to_dict())  # arrays are plotly base64 typed arrays now
    assert isinstance(step["data"][0]["z"], dict)
    assert describe(step) == describe(fig)
    assert describe(fig.to_dict()) == describe(fig)


def test_markup_in_titles_and_labels_becomes_plain_words():
    fig = go.Figure(go.Bar(x=["Qwen3-Next-<br>80B"], y=[3], name="<b>bold</b> &amp; more"))
    fig.update_layout(title="<i>A</i><br>title", annotations=[dict(text="note<br>here", x=0, y=0)])
    words = describe(fig)
    assert "<" not in words and "&amp;" not in words
    assert words.startswith("Bar chart: A title.")
    assert "bold & more: 3 at Qwen3-Next- 80B" in words
    assert "Notes on the chart: note here." in words


def test_empty_and_legend_only_traces_do_not_break_it():
    fig = go.Figure([go.Scatter(x=[None], y=[None], name="block edge"), go.Heatmap(z=[[None, None]])])
    words = describe(fig)
    assert "Legend key: block edge" in words
    assert "nothing filled in yet" in words
    assert describe(go.Figure()) == "Chart."
    assert describe_what(go.Figure(go.Scatter(y=[1, 2], mode="markers"))) == "Scatter chart."


def test_describing_a_chart_costs_well_under_a_millisecond_or_two():
    fig = patched(_cache_figure(40, rows=64, width=64).to_dict())
    describe(fig)
    start = time.perf_counter()
    for _ in range(50):
        describe(fig)
    assert (time.perf_counter() - start) / 50 < 0.005


def test_a_line_drawn_straight_up_is_read_as_a_marker_and_big_numbers_stay_readable():
    fig = go.Figure(go.Scatter(x=[67671, 67671], y=[0, 92.6], name="cache spills"))
    fig.add_bar(x=["dense", "MoE"], y=[5180.3, 2.39e15], name="bytes")
    words = describe(fig)
    assert "cache spills: a vertical line at 67,671" in words
    assert "dense 5,180, MoE 2,390T" in words


def test_nameless_panels_are_named_by_their_subplot_titles():
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("K: cached keys", "V: cached values"))
    fig.add_trace(heatmap(np.ones((3, 4)), -1, 1), row=1, col=1)
    fig.add_trace(heatmap(-np.ones((3, 4)), -1, 1), row=1, col=2)
    words = describe(fig)
    assert "K: cached keys: a grid of 3 rows × 4 columns" in words
    assert "V: cached values: a grid of 3 rows × 4 columns; every cell is -1" in words


def test_marks_on_category_axes_are_read_as_places_and_repeats_once():
    marks = dict(x=["red", "green"], y=["apple ✓", "grass"], mode="markers", name="the right value")
    fig = go.Figure([go.Scatter(**marks), go.Scatter(**marks, showlegend=False)])
    words = describe(fig)
    assert "the right value: 2 marked, apple ✓ at red, grass at green." in words
    assert words.count("the right value") == 1


def test_bars_that_print_their_numbers_are_read_as_printed():
    """The words say what a sighted reader reads on the bars ('0.0%', not '9.1e-05')."""
    fig = go.Figure(go.Bar(x=[0.99, 9.1e-05], y=["o", "a"], orientation="h", text=["99.0%", "0.0%"]))
    fig.update_layout(xaxis_title="probability")
    assert "o 99.0%, a 0.0%" in describe(fig)
    many = go.Figure(
        go.Bar(x=list(range(1, 10)), y=[2**i for i in range(9)], text=[f"{2**i} B" for i in range(9)])
    )
    assert "9 bars from 1 B (1) to 256 B (9); first 1 1 B, last 9 256 B" in describe(many)
    untexted = go.Figure(go.Bar(x=["a", "b"], y=[1.5, 2.5]))
    assert "a 1.5, b 2.5" in describe(untexted)  # no printed numbers: the data, as before


def test_marks_on_hidden_axes_are_counted_not_read_as_a_series():
    """Experts' expert grid: the dots' grid positions mean nothing, their numbers do."""
    from core.figures.expert_grid import expert_grid_figure

    words = describe(expert_grid_figure(16, 1, 2, [5, 14], "who is awake"))
    assert "asleep (14): 14 marked" in words and "shared, always on (1): 1 marked" in words
    assert "routed, picked for this token (2 of 16): 2 marked" in words
    assert "rises" not in words and " at " not in words


def test_an_empty_board_and_stacked_panels_are_said_plainly():
    from plotly.subplots import make_subplots

    empty = go.Figure(go.Heatmap(z=[[0.0, 0.0], [0.0, 0.0]], name="board"))
    assert "board: a grid of 2 rows × 2 columns; every cell is 0" in describe(empty)
    stacked = make_subplots(rows=2, cols=1, subplot_titles=("memory kept", "work per token"))
    stacked.add_bar(x=[1.0, 2.0], y=["a", "b"], orientation="h", row=1, col=1)
    stacked.add_bar(x=[3.0, 4.0], y=["a", "b"], orientation="h", row=2, col=1)
    words = describe(stacked)
    assert (
        "memory kept: a 1, b 2" in words and "work per token: a 3, b 4" in words
    )  # each panel its own title


def test_a_stacked_bar_with_no_visible_name_reads_its_parts_and_the_line_across_it():
    """The planner's memory bar: parts in GiB, no meaningless 'at needed', the usable line as a line."""
    import json
    from pathlib import Path

    from core.figures.plan import memory_figure
    from core.plan import PlanInputs, parse, plan

    config = json.loads((Path(__file__).resolve().parents[3] / "assets/configs/llama3_1_8b.json").read_text())
    p = plan(parse(config), PlanInputs())
    words = describe(memory_figure(p))
    assert f"weights: {p.weights / 1024**3:.3g} GiB." in words and "KV cache: 16 GiB." in words
    assert " at needed" not in words and f"a vertical line at {p.usable / 1024**3:.3g} GiB" in words


def test_a_diagram_says_what_it_shows_in_its_own_words():
    """Chunks' timeline: squares and hand-over marks are a diagram; its words come from the counts."""
    from core.figures.chunks import timeline_figure
    from core.ops.forms import waits_in_line

    words = describe(timeline_figure(30, 8, "30 tokens, chunks of 8"))
    step, chunked = waits_in_line(30, 8)
    assert words.startswith("Diagram: 30 tokens, chunks of 8 (across: token #).")
    assert (
        f"{step} waits in line" in words and f"{chunked} chunks" in words and f"— {chunked} waits." in words
    )
    assert "vertical lines" not in words and "flat" not in words


def test_a_bar_stacked_on_another_says_its_number_is_the_stacks_top():
    """Kimi K3's memory chart: the MLA cache sits on the KDA boards, and the number printed above it
    (3.8 GiB at 128K) is boards + cache; the words must not give it to the cache alone."""
    from core.figures.k3_memory import memory_at_context_figure
    from core.plan.attention_twin import memory_at_contexts
    from core.specs import KIMI_K3

    words = describe(memory_at_context_figure(KIMI_K3, memory_at_contexts(KIMI_K3, [131072, 1048576])))
    assert "K3: growing MLA cache (24 layers) (stacked on the bars below it; the stack's top):" in words
    assert "K3: fixed state, 69 KDA layers:" in words  # the bottom part is its own number


def test_the_chart_words_are_japanese_and_the_english_stays_as_it_was():
    """The sentence frame is translated; the chart's own titles are quoted as the chart shows them."""
    import re

    from core.i18n import use_language

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
