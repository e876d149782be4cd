"""`ui.charts.show_figure` sends a figure's dict made once (`ready_chart`): the same JSON as
Streamlit's own path, less only the template's defaults for trace types the figure does not draw,
and a chart's title goes above it as text."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.figure_dict import as_dict, slim
from core.figures.style import base_layout
from ui.charts import ready_chart


def test_show_figure_sends_streamlits_json_without_unused_template_parts():
    fig = go.Figure(go.Heatmap(z=np.arange(6, dtype=np.float32).reshape(2, 3), zmin=0, zmax=5))
    fig.add_scatter(x=[0, 1], y=[1, 0])
    chart = ready_chart(fig)
    spec, title = chart.spec, chart.title
    full = fig.to_dict()
    assert title == ""
    assert spec["data"] == full["data"]
    kept = {**full["layout"]["template"], "data": spec["layout"]["template"]["data"]}
    assert spec["layout"] == {**full["layout"], "template": kept}
    assert set(spec["layout"]["template"]["data"]) == {"heatmap", "scatter"} & set(
        full["layout"]["template"]["data"]
    )
    assert ready_chart(chart) is chart and ready_chart(as_dict(fig)) == chart  # a chart, or the plain dict
    assert not hasattr(fig, "_course_chart")  # nothing kept on the figure: a cache keeps the ReadyChart
    assert slim({"data": [], "layout": {}}) == {"data": [], "layout": {}}


def test_a_chart_title_goes_above_the_chart_as_text_and_its_margin_to_the_plot():
    """A plotly title is cut at the chart's edge on a phone; text above the chart wraps."""
    fig = base_layout(
        go.Figure(go.Scatter(x=[0, 1], y=[1, 0], name="s")), title="Llama <b>8B</b> &amp; more<br>on 1 GPU"
    )
    spec, title, words = (chart := ready_chart(fig)).spec, chart.title, chart.words
    assert title == "Llama 8B & more on 1 GPU"
    assert spec["layout"]["title"]["text"] == "" and spec["layout"]["margin"]["t"] == 20
    assert spec["layout"]["meta"]["title"] == fig.layout.title.text  # where the words find it
    assert fig.layout.title.text.startswith("Llama")  # the figure itself is untouched
    assert words.startswith("Llama 8B") or "Llama 8B" in words  # the words still name it
    untitled_fig = base_layout(go.Figure(go.Scatter(x=[0], y=[0])))
    assert (
        ready_chart(untitled_fig).title == ""
        and ready_chart(untitled_fig).spec["layout"]["margin"]["t"] == 20
    )
