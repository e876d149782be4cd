"""A plotly chart that a Step patches in place in the reader's browser (issue 29).

Streamlit 1.67's `st.plotly_chart` makes a chart's element id from its figure, so every changed
figure is unmounted and drawn from scratch (`Plotly.newPlot`), 0.2–1 s of the browser's CPU per
Step. This component keeps one element per `key`: on a rerun the page calls its script again with
the new figure and the SAME chart is updated by `Plotly.react` (plotly redraws only what changed).

- The drawing code is `static/live_chart.js`; plotly.js is the cartesian bundle vendored in
  `static/plotly/` (MIT, its LICENSE beside it; the course draws only heatmap, scatter and bar).
  Both are served by `server.enableStaticServing` and loaded once per page.
- The chart fills its column (a ResizeObserver redraws it when the column's width changes) and
  keeps the figure's own height; no mode bar; hover as plotly draws it.
- A chart off screen is drawn when it comes within 200 px of the visible pane (an
  IntersectionObserver): a Step that changes five charts draws the one or two in view, and the
  others when the reader scrolls to them; its place keeps the figure's height meanwhile. Printing
  draws every chart (`beforeprint`), and its node says `data-course-state` = waiting / drawing /
  drawn (tests/browser/test_live_chart.py).
- The figure travels as its plotly JSON (the encoder `st.plotly_chart` uses) in the element's
  bytes: `figure_of` reads it back, for tests.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import plotly.io.json as plotly_json
import streamlit as st

DRAWER_FILE = Path(__file__).resolve().parents[1] / "static" / "live_chart.js"


def static_address(path: Path) -> str:
    """The address of a file under static/, relative to the app's root URL, carrying a hash of its
    bytes: Streamlit serves static files with no Cache-Control, so a browser may keep an old copy
    for days, and a changed file must be a new address."""
    return f"app/static/{path.name}?v={hashlib.sha256(path.read_bytes()).hexdigest()[:12]}"


DRAWER = static_address(DRAWER_FILE)  # the drawing code
COMPONENT = "course_plotly_chart"

# The script each chart element carries, sent with every chart on every rerun, so only a stub:
# the drawing code (static/live_chart.js) is one module, imported once per page.
SCRIPT = (
    f"const drawer = new URL({json.dumps(DRAWER)}, document.baseURI).href;\n"
    "export default async function (chart) { return (await import(drawer)).draw(chart); }"
)

_mount = st.components.v2.component(COMPONENT, js=SCRIPT, isolate_styles=False)


def plotly_figure(spec: dict, key: str) -> None:
    """Draw the plotly figure dict `spec` (drawn exactly as given: no Streamlit theme) under `key`;
    a later run with the same key updates that chart in place."""
    _mount(key=key, data=plotly_json.to_json_plotly(spec).encode(), width="stretch", height="content")


def figure_of(proto) -> dict:
    """The figure dict a chart element carries (its BidiComponent proto): what tests read."""
    return json.loads(proto.bytes)
