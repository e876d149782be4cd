"""Pictures for the primer (vectors and matrices): arrows, a matrix times a vector, a readback,
a matrix product. Data in, go.Figure out; boards are drawn as in `core.figures.board`
(rows = key dimension, columns = value dimension) on fixed colour ranges.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.board import vectors
from core.figures.board_panels import diverging_axis, key_labels, matrix_trace, panels_figure
from core.figures.style import COLORS, base_layout
from core.i18n import N_, _

ARROW_COLORS = (COLORS["attention"], COLORS["moe"])  # first arrow blue, second orange
NO_UNIT = N_("(no unit)")


def arrows_figure(
    arrows: Sequence[tuple[str, np.ndarray]],
    *,
    title: str,
    x_title: str,
    y_title: str,
    lo: float,
    hi: float,
    coordinates: bool = True,
    height: int = 380,
) -> go.Figure:
    """Arrows from the origin on a square, fixed grid (lo … hi on both axes, one unit as long
    across as up), each labelled at its tip with its name (and its two numbers if `coordinates`).
    Its words say where each arrow points and, for two arrows, the angle between them and their
    dot product (computed here by `core.board.vectors`)."""
    fig = go.Figure()
    for (name, vec), colour in zip(arrows, ARROW_COLORS, strict=False):
        x, y = (float(c) for c in vec)
        label = f"{name} ({x:.2f}, {y:.2f})" if coordinates else name
        fig.add_scatter(
            x=[0.0, x],
            y=[0.0, y],
            mode="lines+markers+text",
            name=name,
            line={"color": colour, "width": 4},
            marker={"symbol": ["circle", "arrow"], "size": [6, 16], "angleref": "previous", "color": colour},
            text=["", label],
            textposition=_label_position(x, y, lo, hi, len(label)),
            textfont={"color": colour, "size": 13},
            hovertemplate=_(
                "{name}<br>first number %{{x:.2f}}<br>second number %{{y:.2f}}<extra></extra>"
            ).format(name=name),
            showlegend=False,
        )
    base_layout(fig, title=title, x_title=x_title, y_title=y_title, height=height)
    pad = 0.05 * (hi - lo)
    # one unit as long across as up: the plot shrinks to a square ("domain") instead of stretching a range
    square = {
        "range": [lo - pad, hi + pad],
        "constrain": "domain",
        "zeroline": True,
        "zerolinecolor": "#adb5bd",
    }
    fig.update_xaxes(**square, dtick=_tick(hi - lo))
    fig.update_yaxes(
        **square,
        dtick=_tick(hi - lo),
        scaleanchor="x",
        scaleratio=1,
    )
    fig.update_layout(meta={"words": _arrow_words(arrows)})
    return fig


def _label_position(x: float, y: float, lo: float, hi: float, chars: int) -> str:
    """Where an arrow's label sits at its tip: beyond the tip, in the arrow's own direction, unless
    that side lacks room for `chars` characters before the grid's edge, which would cut it; then
    on the inner side. A label level with the tip goes above it (or below, near the top)."""
    span = hi - lo
    wide, tall = (0.025 * chars + 0.04) * span, 0.08 * span  # ~7 px a character on a ~280 px grid
    size = math.hypot(x, y) or 1.0
    ux, uy = x / size, y / size
    across = "right" if ux > 0.38 else "left" if ux < -0.38 else "center"
    up = "top" if uy > 0.38 else "bottom" if uy < -0.38 else "middle"
    if across == "right" and x + wide > hi:
        across = "left"
    elif across == "left" and x - wide < lo:
        across = "right"
    if up == "top" and y + tall > hi:
        up = "bottom"
    elif up == "bottom" and y - tall < lo:
        up = "top"
    if up == "middle":
        up = "top" if y + tall <= hi else "bottom"
    return f"{up} {across}"


def _tick(span: float) -> float:
    return 0.25 if span <= 1.5 else 0.5 if span <= 3 else 1.0


def _arrow_words(arrows: Sequence[tuple[str, np.ndarray]]) -> str:
    parts = [
        _("{name} points to ({x:.2f}, {y:.2f}), length {length:.2f}").format(
            name=name, x=vec[0], y=vec[1], length=vectors.length(vec)
        )
        for name, vec in arrows
    ]
    words = _("{parts}.").format(parts=_("; ").join(parts))
    if len(arrows) == 2 and all(vectors.length(vec) > 0 for _name, vec in arrows):
        (_first, a), (_second, b) = arrows
        words += _(" The angle between them is {angle:.0f}° and their dot product is {dot:.2f}.").format(
            angle=vectors.angle_between(a, b), dot=vectors.dot(a, b)
        )
    return words


def matrix_vector_figure(
    matrix: np.ndarray,
    result: np.ndarray,
    row_names: Sequence[str],
    *,
    highlight: int,
    title: str,
    height: int = 300,
) -> go.Figure:
    """A matrix (one key per row, numbers printed) beside the column it gives when it multiplies a
    vector: one dot product per row. Row `highlight` is outlined in both panels."""
    rows, n = matrix.shape
    names = list(row_names)
    cells = {"texttemplate": "%{z:.2f}", "textfont": {"size": 11}}
    traces = [
        matrix_trace(matrix, key_labels(n), names, "%{y}, %{x}: %{z:.3f}<extra></extra>", **cells),
        matrix_trace(
            np.asarray(result).reshape(rows, 1),
            [_("result")],
            names,
            "%{y} · q = %{z:.3f}<extra></extra>",
            **cells,
        ),
    ]
    category = {"type": "category"}
    fig = panels_figure(
        traces,
        [_("M: one key per row"), "M q"],
        [
            {**category, "title": {"text": _("number in the key (channel)")}},
            {**category, "title": {"text": ""}},
        ],
        [
            {**category, "title": {"text": _("row")}},
            {**category, "title": {"text": ""}, "showticklabels": False},
        ],
        widths=(0.74, 0.16),
        gap=0.1,
        coloraxis=diverging_axis(1.0, None),
        title=title,
        height=height,
    )
    for i, width in enumerate((n, 1)):
        suffix = "" if i == 0 else str(i + 1)
        fig.add_shape(
            type="rect",
            x0=-0.48,
            x1=width - 0.52,
            y0=highlight - 0.48,
            y1=highlight + 0.48,
            xref=f"x{suffix}",
            yref=f"y{suffix}",
            line={"color": "black", "width": 3},
        )
    return fig


def readback_figure(
    readback: np.ndarray, value_names: Sequence[str], *, title: str, height: int = 300
) -> go.Figure:
    """What a read returns: one bar per board column (value), on a fixed range −1 … 1."""
    values = np.asarray(readback, np.float64)
    fig = go.Figure(
        go.Bar(
            x=list(value_names),
            y=values,
            text=[f"{v:.2f}" for v in values],
            textposition="outside",
            marker={"color": COLORS["attention"]},
            name=_("read back"),
            hovertemplate=_("column %{x}: %{y:.3f}<extra></extra>"),
        )
    )
    base_layout(
        fig,
        title=title,
        x_title=_("value (board column)"),
        y_title=_("amount read back {no_unit}").format(no_unit=_(NO_UNIT)),
        height=height,
    )
    fig.update_yaxes(range=[-1.25, 1.35], zeroline=True, zerolinecolor="#adb5bd")
    fig.update_xaxes(type="category")
    return fig


def matrix_product_figure(
    queries: np.ndarray,
    board: np.ndarray,
    product: np.ndarray,
    query_names: Sequence[str],
    value_names: Sequence[str],
    *,
    title: str,
    height: int = 320,
) -> go.Figure:
    """A matrix product as three panels on one colour range (−1 … 1): the queries Q (one per row),
    the board S, and Q S, whose row i is query i read from the board."""
    n, d = queries.shape
    names, keys, cols = list(query_names), key_labels(d), list(value_names)
    traces = [
        matrix_trace(queries, keys, names, _("query %{y}<br>%{x}: %{z:.3f}<extra></extra>")),
        matrix_trace(board, cols, keys, _("board row %{y}<br>column %{x}: %{z:.3f}<extra></extra>")),
        matrix_trace(product, cols, names, _("read %{y}<br>column %{x}: %{z:.3f}<extra></extra>")),
    ]
    upright = {"type": "category", "tickangle": -90, "tickfont": {"size": 10}}
    return panels_figure(
        traces,
        ["Q", "× S", "= Q S"],
        [
            {**upright, "title": {"text": _("channel")}},
            {**upright, "title": {"text": _("value")}},
            {**upright, "title": {"text": _("value")}},
        ],
        [
            {"type": "category", "title": {"text": _("query")}},
            # S's rows are the channels Q's columns name, in the same order: unlabelled, they leave room
            {"type": "category", "title": {"text": ""}, "showticklabels": False},
            {"type": "category", "title": {"text": ""}, "showticklabels": False},
        ],
        gap=0.08,
        coloraxis=diverging_axis(1.0),
        title=title,
        height=height,
    )
