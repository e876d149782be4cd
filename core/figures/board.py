"""Pictures of the board playground (core/board/) for the board lessons (Linear attention to Forgetting): boards, update parts, readbacks.

Data in, go.Figure out: no Streamlit, no torch. Boards are drawn rows = key dimension,
columns = value dimension, with a colour range the caller fixes for a whole stream, so
an overwrite or a fade is visible as a change of colour rather than a change of scale.
Line and bar charts are in `board_charts`, the panel machinery in `board_panels`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.figures.board_panels import (
    KEY_AXIS,
    VALUE_AXIS,
    color_limit,
    diverging_axis,
    key_labels,
    matrix_trace,
    panels_figure,
    value_labels,
)
from core.i18n import N_, _

__all__ = [
    "board_figure",
    "color_limit",
    "compare_readbacks_figure",
    "matrix_figure",
    "regrouping_figures",
    "update_parts_figure",
]

ENTRY_HOVER = N_("key %{y}<br>value %{x}<br>entry %{z:.3f}<extra></extra>")  # shown through _()

# --------------------------------------------------------------------------- one board


def board_figure(
    board: np.ndarray,
    zmax: float,
    *,
    value_names: Sequence[str] = (),
    title: str = "",
    key_vector: np.ndarray | None = None,
    height: int = 360,
) -> go.Figure:
    """The board as a heatmap (key dimension × value dimension) with a fixed colour range.

    key_vector: optional (d,) key just written, drawn as a narrow column on the left on the
    same colour scale — the rows it lights up are the rows the write lands in.
    """
    d, V = board.shape
    xl, yl = value_labels(value_names, V), key_labels(d)
    board_trace = matrix_trace(board, xl, yl, _(ENTRY_HOVER))
    board_x = {"title": {"text": _(VALUE_AXIS)}, "type": "category"}
    if key_vector is None:
        traces, titles, x_axes, y_axes, widths = (
            [board_trace],
            [""],
            [board_x],
            [{"title": {"text": _(KEY_AXIS)}}],
            None,
        )
    else:
        key_trace = matrix_trace(
            np.asarray(key_vector).reshape(d, 1),
            [_("key")],
            yl,
            _("this token's key<br>%{y}: %{z:.3f}<extra></extra>"),
        )
        traces, titles, widths = [key_trace, board_trace], [_("this key"), _("the board")], (0.07, 0.89)
        x_axes = [{"title": {"text": ""}}, board_x]
        y_axes = [{"title": {"text": _(KEY_AXIS)}}, {"title": {"text": ""}, "showticklabels": False}]
    return panels_figure(
        traces,
        titles,
        x_axes,
        y_axes,
        widths=widths,
        gap=0.04,
        coloraxis=diverging_axis(zmax),
        title=title,
        height=height,
    )


def update_parts_figure(
    parts: dict[str, np.ndarray],
    zmax: float,
    *,
    value_names: Sequence[str] = (),
    title: str = "",
    height: int = 340,
) -> go.Figure:
    """Boards side by side on one fixed colour axis — e.g. one token's update as panels that
    add up (old board + erase + write = new board), or several rules' boards at one step.

    parts: ordered {panel title: (d, V) array}.
    """
    names = list(parts)
    d, V = next(iter(parts.values())).shape
    xl, yl = value_labels(value_names, V), key_labels(d)
    traces = [matrix_trace(parts[name], xl, yl, f"{name}<br>{_(ENTRY_HOVER)}") for name in names]
    # narrow panels: up to 8 columns keep a short label each (the value's name, else its number),
    # turned upright so none overlap; wider boards label every few columns by number
    if V <= 8:
        ticks, text = (
            xl,
            [value_names[i] if i < len(value_names) else _("spare {i}").format(i=i) for i in range(V)],
        )
    else:
        every = -(-V // 8)
        ticks, text = xl[::every], [str(i) for i in range(0, V, every)]
    x_axis = {
        "title": {"text": _("value dim.")},
        "type": "category",  # labels like "9" would otherwise turn the axis numeric
        "tickvals": ticks,
        "ticktext": text,
        "tickangle": -90 if max(len(t) for t in text) > 2 else 0,
        "tickfont": {"size": 10},
    }
    y_axes = [
        {"title": {"text": _(KEY_AXIS) if i == 0 else ""}, "showticklabels": i == 0}
        for i in range(len(names))
    ]
    # axis title and column names under the first panel only when there are many (narrow) panels:
    # repeated, they run into each other on a phone; the panels share their columns
    many = len(names) >= 3
    x_axes = [
        {**x_axis, "title": {"text": _("value dim.") if i == 0 else ""}, "showticklabels": i == 0 or not many}
        for i in range(len(names))
    ]
    if many and len(ticks) > 4:
        # every other column's name only: upright names in a narrow panel otherwise overlap on a phone
        x_axes[0] = {**x_axes[0], "tickvals": ticks[::2], "ticktext": text[::2]}
    return panels_figure(
        traces,
        names,
        x_axes,
        y_axes,
        gap=0.035,
        title=title,
        height=height,
        coloraxis=diverging_axis(zmax),
    )


# --------------------------------------------------------------------------- small matrices (Linear attention)


def matrix_figure(
    title: str, m: np.ndarray, x_title: str, y_title: str, zmax: float, height: int = 300
) -> go.Figure:
    """One small matrix with its numbers printed, on a fixed colour range (no colour bar: the numbers
    are printed). One figure per matrix, so a page can set them side by side on a wide screen and one
    under the other on a phone, where eight columns of numbers side by side ran into each other."""
    trace = matrix_trace(
        m,
        range(m.shape[1]),
        range(m.shape[0]),
        _("row %{y}, column %{x}: %{z:.3f}<extra></extra>"),
        texttemplate="%{z:.2f}",
        textfont={"size": 11},
    )
    return panels_figure(
        [trace],
        [""],
        [{"title": {"text": x_title}, "dtick": 1}],
        [{"title": {"text": y_title}, "dtick": 1}],
        title=title,
        height=height,
        coloraxis=diverging_axis(zmax, None),
    )


def regrouping_figures(
    scores: np.ndarray, left: np.ndarray, board: np.ndarray, right: np.ndarray
) -> tuple[go.Figure, go.Figure, go.Figure, go.Figure]:
    """(QKᵀ)V and Q(KᵀV), each matrix its own figure on one colour range:
    (scores QKᵀ, left route (QKᵀ)V, board KᵀV, right route Q(KᵀV))."""
    zmax = color_limit(scores, left, board, right)
    d_k, d_v = board.shape
    query, value = _("token (query)"), _("value dimension")
    return (
        matrix_figure(_("Q Kᵀ  (T × T scores)"), scores, _("token (key)"), query, zmax),
        matrix_figure("(Q Kᵀ) V", left, value, query, zmax),
        matrix_figure(
            _("Kᵀ V  ({d_k} × {d_v}: the board)").format(d_k=d_k, d_v=d_v),
            board,
            value,
            _("key dimension"),
            zmax,
        ),
        matrix_figure("Q (Kᵀ V)", right, value, query, zmax),
    )


# --------------------------------------------------------------------------- readbacks


def compare_readbacks_figure(
    panels: dict[str, np.ndarray],
    names: Sequence[str],
    *,
    value_names: Sequence[str] = (),
    zmax: float | None = None,
    height: int | None = None,
    targets: Sequence[int] | None = None,
) -> go.Figure:
    """Readbacks of the same keys from several memories, one panel each, one colour axis.

    panels: {panel title: readback (n, V)}. zmax: default the largest |entry|, at least 1
    (a value vector's full length). targets: per key, the value that should come back; where
    that value owns a column, its cell is outlined in every panel, so right and wrong read at a glance.
    """
    V = next(iter(panels.values())).shape[1]
    zmax = max(1.0, color_limit(*panels.values())) if zmax is None else zmax
    xl = value_labels(value_names, V)
    traces = [
        matrix_trace(rb, xl, names, _("read %{y}<br>value %{x}<br>%{z:.3f}<extra></extra>"))
        for rb in panels.values()
    ]
    n = len(panels)
    fig = panels_figure(
        traces,
        list(panels),
        # "value dimension": the long VALUE_AXIS would run into the next panel's title in a narrow window
        [
            # the axis title once, under the first panel: side by side on a phone they would overlap
            {
                "title": {"text": _("value dimension") if i == 0 else ""},
                "type": "category",
                "showticklabels": V <= 12,
            }
            for i in range(n)
        ],
        # categories: row j of the heatmap is at y = j, where the outlines below are drawn
        [
            {
                "title": {"text": _("key read back") if i == 0 else ""},
                "showticklabels": i == 0,
                "type": "category",
            }
            for i in range(n)
        ],
        gap=0.05,
        height=height or max(280, 80 + 22 * len(names)),
        coloraxis=diverging_axis(zmax, N_("readback")),
    )
    if targets is not None:
        # (column, row) index of each outlined cell: the outline is a rectangle in data units, so it
        # fits its cell at any width (a fixed 15 px marker spilled over the cells on a phone)
        if len(targets) != len(names):
            raise ValueError(f"one target per key: {len(targets)} targets for {len(names)} keys")
        cells = [(int(t), j) for j, t in enumerate(targets) if int(t) < V]
        for i in range(n):
            suffix = "" if i == 0 else str(i + 1)
            for col, row in cells:
                fig.add_shape(
                    type="rect",
                    x0=col - 0.45,
                    x1=col + 0.45,
                    y0=row - 0.45,
                    y1=row + 0.45,
                    xref=f"x{suffix}",
                    yref=f"y{suffix}",
                    line={"color": "black", "width": 2},
                )
            fig.add_scatter(  # invisible marks under the outlines: their hover and the chart's words
                x=[xl[col] for col, _ in cells],
                y=[names[row] for _, row in cells],
                mode="markers",
                marker={"symbol": "square", "size": 12, "opacity": 0},
                name=_("the right value"),
                showlegend=False,  # the pages' captions say what the outline means
                hovertemplate=_("%{y}: the right value is %{x}<extra></extra>"),
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
            )
    return fig
