"""Cheaper Step clicks (issue 11) change nothing a reader sees.

- lessons 1–2's charts are built once per run and patched per step: each patched step is the
  figure a fresh build at that step gives;
- `ui.lesson.show_figure` sends a figure's dict made once (`_prepared`): the same JSON as
  Streamlit's own path, less only the template's defaults for trace types the figure does not draw.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from core.figures import generation as fg
from core.figures.style import base_layout
from ui.lesson import _prepared, _ReadyFigure, slim_spec


def _spec(fig) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


def test_work_and_time_charts_patched_per_step_equal_a_fresh_build():
    steps = list(range(1, 31))
    counted = [s * (s + 1) // 2 for s in steps]
    formula = list(counted)
    cached = list(steps)
    rng = np.random.default_rng(0)
    plain_ms, cached_ms = list(rng.random(30) * 10), list(rng.random(30))
    for with_cache in (None, cached):
        base = fg.work_figure(steps, counted, formula, with_cache, shown=30).to_dict()
        for t in range(31):
            assert _spec(fg.work_step(base, steps, counted, with_cache, t)) == _spec(
                fg.work_figure(steps, counted, formula, with_cache, shown=t)
            )
    for other in (None, cached_ms):
        base = fg.ms_per_token_figure(steps, plain_ms, other, shown=30).to_dict()
        for t in range(31):
            assert _spec(fg.ms_per_token_step(base, steps, plain_ms, other, t)) == _spec(
                fg.ms_per_token_figure(steps, plain_ms, other, shown=t)
            )


def test_top_next_chart_patched_per_step_equals_a_fresh_build():
    base = fg.top_next_figure([(0, 0.0)] * 5).to_dict()
    for top in (
        [(97, 0.5), (98, 0.2), (99, 0.1), (100, 0.05), (101, 0.01)],
        [(65, 0.9), (10, 0.05)] * 2 + [(0, 0.0)],
    ):
        assert _spec(fg.top_next_step(base, top)) == _spec(fg.top_next_figure(top))


def test_show_figure_sends_streamlits_json_without_unused_template_parts():
    fig = go.Figure(go.Heatmap(z=np.arange(6, dtype=np.float32).reshape(2, 3), zmin=0, zmax=5))
    fig.add_scatter(x=[0, 1], y=[1, 0])
    spec, title, words = _prepared(fig)
    full = fig.to_dict()
    assert title == ""
    assert spec["data"] == full["data"]
    kept = {**full["layout"]["template"], "data": spec["layout"]["template"]["data"]}
    assert spec["layout"] == {**full["layout"], "template": kept}
    assert set(spec["layout"]["template"]["data"]) == {"heatmap", "scatter"} & set(
        full["layout"]["template"]["data"]
    )
    assert _prepared(fig) == (spec, title, words)  # made once, kept on the figure
    assert _ReadyFigure(spec).to_dict() is spec  # what st.plotly_chart is handed
    assert slim_spec({"data": [], "layout": {}}) == {"data": [], "layout": {}}


def test_a_chart_title_goes_above_the_chart_as_text_and_its_margin_to_the_plot():
    """A plotly title is cut at the chart's edge on a phone; text above the chart wraps."""
    fig = base_layout(
        go.Figure(go.Scatter(x=[0, 1], y=[1, 0], name="s")), title="Llama <b>8B</b> &amp; more<br>on 1 GPU"
    )
    spec, title, words = _prepared(fig)
    assert title == "Llama 8B & more on 1 GPU"
    assert spec["layout"]["title"]["text"] == "" and spec["layout"]["margin"]["t"] == 20
    assert spec["layout"]["meta"]["title"] == fig.layout.title.text  # where the words find it
    assert fig.layout.title.text.startswith("Llama")  # the figure itself is untouched
    assert words.startswith("Llama 8B") or "Llama 8B" in words  # the words still name it
    untitled_fig = base_layout(go.Figure(go.Scatter(x=[0], y=[0])))
    assert _prepared(untitled_fig)[1] == "" and _prepared(untitled_fig)[0]["layout"]["margin"]["t"] == 20
