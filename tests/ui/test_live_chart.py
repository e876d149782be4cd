"""ui/live_chart.py: a chart keeps its element across reruns, so the browser patches it in place.

The browser side (the chart drawn, patched, not redrawn from scratch) is measured by
bench/browser.py ("charts redrawn") and looked at by tests/browser; here, what the server sends.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app import driver
from ui import live_chart

ROOT = Path(__file__).resolve().parents[2]


def _page():
    import plotly.graph_objects as go
    import streamlit as st

    from ui.charts import show_figure

    step = st.session_state.get("step", 0)
    show_figure(go.Figure(go.Bar(x=["a", "b"], y=[step, 2 * step])), key="probe_fig")
    st.session_state["step"] = step + 1


def test_the_figure_travels_whole_and_its_element_keeps_its_id_when_the_figure_changes():
    at = AppTest.from_function(_page).run()
    first = driver.charts(at)
    assert len(first) == 1 and first[0].proto.id.endswith("-probe_fig")
    assert driver.chart_spec(at, "probe_fig")["data"][0]["y"] == [0, 0]
    at.run()
    (second,) = driver.charts(at)
    assert driver.chart_spec(at, "probe_fig")["data"][0]["y"] == [1, 2]  # a new figure …
    assert second.proto.id == first[0].proto.id  # … for the same element: patched, not remounted


def test_each_chart_carries_only_a_stub_and_the_code_it_loads_is_in_the_repository():
    at = AppTest.from_function(_page).run()
    (chart,) = driver.charts(at)
    assert chart.proto.js_content == live_chart.SCRIPT and len(live_chart.SCRIPT) < 300  # sent per chart
    assert not chart.proto.isolate_styles  # plotly's styles live in the page's <head>
    drawer = ROOT / "static" / live_chart.DRAWER.removeprefix("app/static/").split("?")[0]
    assert drawer == live_chart.DRAWER_FILE
    bundle = re.search(r'"(plotly/[^"]+\.js)"', drawer.read_text()).group(1)
    assert (drawer.parent / bundle).stat().st_size > 1_000_000  # the vendored plotly.js
    assert "MIT License" in (drawer.parent / "plotly" / "LICENSE").read_text()


def test_the_drawing_code_gets_a_new_address_when_it_changes(tmp_path):
    """No Cache-Control on Streamlit's static files: a changed file must be a new address."""
    drawer = tmp_path / "live_chart.js"
    drawer.write_text("export function draw() {}")
    first = live_chart.static_address(drawer)
    assert first.startswith("app/static/live_chart.js?v=")
    assert live_chart.static_address(drawer) == first  # the same bytes, the same address
    drawer.write_text("export function draw() { return 1; }")
    assert live_chart.static_address(drawer) != first
    assert live_chart.DRAWER == live_chart.static_address(live_chart.DRAWER_FILE)
    assert live_chart.DRAWER in live_chart.SCRIPT


def test_the_server_serves_the_static_folder():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["enableStaticServing"] is True
