"""Charts on the page: a figure made ready once (its dict sent, its title, its words) and drawn.

Every chart a page shows goes through `show_figure`: drawn exactly as built (no theme, so fixed colour
ranges stay fixed) by `ui.live_chart`, its title above it as text, its words under it
(docs/architecture.md, Data flow). A chart shown on every rerun is cached as a `ReadyChart`
(`ready_chart` inside the cached builder, or `ui.stepped`), so a rerun costs one look-up.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from core.figures.describe import chart_title, describe
from core.figures.figure_dict import as_dict, encoded, slim, untitled
from core.i18n import _
from ui import live_chart
from ui.text import plain


@dataclass(frozen=True)
class ReadyChart:
    """A chart ready to draw: the dict sent to the browser (arrays encoded, template slimmed, title
    moved out), its title and its words (markdown-safe), all worked out from one figure dict."""

    spec: dict
    title: str
    words: str


def ready_chart(fig: ReadyChart | dict | go.Figure) -> ReadyChart:
    """The chart as drawn, its words read from the dict before its arrays are encoded. A figure is
    taken as its plain dict (`core.figures.figure_dict.as_dict`: a built figure, or a step patched
    from one); a ReadyChart is already made."""
    if isinstance(fig, ReadyChart):
        return fig
    shown = untitled(as_dict(fig))
    return ReadyChart(encoded(slim(shown)), chart_title(shown), _escape_markdown(describe(shown)))


def show_figure(fig: ReadyChart | dict | go.Figure, key: str) -> None:
    """Draw a plotly figure exactly as built (no theme: fixed colour ranges stay fixed), with its text
    alternative under it: the chart in words, computed from its own data (`core.figures.describe`),
    behind a "Describe this chart" expander that a screen reader and a keyboard can open.

    `fig` is a `ReadyChart` made once and shared through a cache (`ui.stepped`, or a page's cached
    builder), which costs a rerun only its JSON encoding; or a figure made ready here, on every run.

    The chart's title is shown as text above it, not drawn by plotly: text wraps, and a plotly
    title is cut at the chart's edge (on a phone the planner's "… on 1 × RTX 4090 24GB — does not
    fit" lost its verdict)."""
    chart = ready_chart(fig)
    if chart.title:
        st.markdown(f"**{plain(chart.title)}**")
    live_chart.plotly_figure(chart.spec, key)  # patched in place on the next Step (ui/live_chart.py)
    with st.expander(_("Describe this chart"), icon=":material/description:"):
        st.markdown(chart.words)


def charts_side_by_side(*panels: tuple[str, ReadyChart | dict | go.Figure, str]) -> None:
    """Charts in equal columns, each (heading in markdown, or "" for none; figure; key)."""
    for column, (heading, fig, key) in zip(st.columns(len(panels)), panels, strict=True):
        with column:
            if heading:
                st.markdown(heading)
            show_figure(fig, key=key)


def data_table(rows: list[dict] | dict[str, list], key: str | None = None, pin: int = 1, **options) -> None:
    """A sortable table whose first `pin` columns stay put while the rest scrolls sideways: on a
    phone a wide table scrolls inside its frame (WCAG 1.4.10 exempts data tables), and the pinned
    columns keep each row's name in view. `options` go to `st.dataframe` (width, height)."""
    columns = list(rows if isinstance(rows, dict) else (rows[0] if rows else {}))
    pinned = {name: st.column_config.Column(pinned=True) for name in columns[:pin]}
    st.dataframe(rows, hide_index=True, key=key, column_config=pinned or None, **options)


def _escape_markdown(words: str) -> str:
    """Plain words shown as markdown: no emphasis, links, HTML or LaTeX from chart titles (which can
    quote reader text, such as a pasted config's name): `ui.text.plain`."""
    return plain(words)
