"""Pictures of the board playground (core/board.py) for lessons 3–7.

Data in, go.Figure out: no Streamlit, no torch. Boards are drawn rows = key dimension,
columns = value dimension, with a colour range the caller fixes for a whole stream, so
an overwrite or a fade is visible as a change of colour rather than a change of scale.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.figures.style import (
    COLORS,
    DIVERGING,
    LABELS,
    SEQUENTIAL,
    base_layout,
    format_bytes,
    heatmap,
    wrap_text,
)

KEY_AXIS = "key dimension (board row)"
VALUE_AXIS = "value dimension (board column)"


def color_limit(*arrays: np.ndarray, floor: float = 1e-6) -> float:
    """One symmetric colour limit for every frame of a stream: the largest |entry| seen."""
    m = max((float(np.abs(a).max()) for a in arrays if a is not None and a.size), default=0.0)
    return max(m, floor)


@functools.cache
def _style() -> dict:
    """The shared look of style.base_layout as a plain layout dict (computed once)."""
    fig = go.Figure()
    base_layout(fig, "title", "x", "y")
    layout = fig.layout.to_plotly_json()
    layout.pop("template", None)
    return layout


def _layout(title: str, x_title: str, y_title: str, height: int) -> dict:
    """base_layout's settings as a dict, so a figure is validated once when it is built.

    Step clicks redraw these figures; plotly's update_* calls cost ~10× more than one build.
    """
    layout = copy.deepcopy(_style())
    layout["title"]["text"] = title
    layout["margin"]["t"] = 56 if title else 20
    layout["height"] = height
    for axis, text in (("xaxis", x_title), ("yaxis", y_title)):
        layout[axis].update(title={"text": text}, showgrid=False)
    layout["yaxis"]["autorange"] = "reversed"
    return layout


def _matrix_axes(fig: go.Figure) -> None:
    fig.update_yaxes(autorange="reversed", showgrid=False)
    fig.update_xaxes(showgrid=False)


def panels_figure(
    traces: Sequence[dict],
    titles: Sequence[str],
    x_axes: Sequence[dict],
    y_axes: Sequence[dict],
    *,
    gap: float = 0.04,
    widths: Sequence[float] | None = None,
    coloraxis: dict | None = None,
    title: str = "",
    height: int = 340,
) -> go.Figure:
    """One row of matrix panels sharing one colour axis, built from plain dicts.

    The same picture as plotly's make_subplots, several times faster to build (no grid
    bookkeeping, one validation pass), which keeps Step clicks quick.
    traces[i] goes into panel i; x_axes[i] / y_axes[i] are that panel's axis settings.
    """
    n = len(traces)
    widths = list(widths) if widths is not None else [(1.0 - gap * (n - 1)) / n] * n
    layout = _layout(title, "", "", height)
    # side-by-side panels are narrow: long panel titles go on two lines instead of into each other
    titles = [_wrap_title(text, max(12, 56 // n)) if n > 1 else text for text in titles]
    lines = max((text.count("<br>") + 1 for text in titles), default=1)
    layout["margin"]["t"] += 17 * (lines - 1)
    layout["annotations"] = []
    data = []
    x0 = 0.0
    for i, (trace, text, xa, ya, width) in enumerate(
        zip(traces, titles, x_axes, y_axes, widths, strict=True)
    ):
        suffix = "" if i == 0 else str(i + 1)
        base_x, base_y = layout["xaxis"], layout["yaxis"]
        layout[f"xaxis{suffix}"] = {**base_x, "domain": [x0, x0 + width], "anchor": f"y{suffix}", **xa}
        layout[f"yaxis{suffix}"] = {**base_y, "anchor": f"x{suffix}", **ya}
        layout["annotations"].append(
            {
                "text": text,
                "x": x0 + width / 2,
                "y": 1.0,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 13},
            }
        )
        data.append({**trace, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}"})
        x0 += width + gap
    if coloraxis is not None:
        layout["coloraxis"] = coloraxis
    return go.Figure({"data": data, "layout": layout})


def _wrap_title(text: str, width: int) -> str:
    """A panel title in lines of about `width` characters, breaking after a colon first
    ('DeltaNet (β = 1.00):<br>67% recalled'), so a score is never split from its words."""
    if len(text) <= width:
        return text
    head, colon, tail = text.partition(": ")
    if colon:
        return wrap_text(head + ":", width) + "<br>" + wrap_text(tail, width)
    return wrap_text(text, width)


def value_labels(value_names: Sequence[str], V: int) -> list[str]:
    """Column labels: the value that owns a column (one-hot values), else the column number."""
    return [f"{i}: {value_names[i]}" if i < len(value_names) else f"{i}" for i in range(V)]


def key_labels(d: int) -> list[str]:
    return [f"ch {i}" for i in range(d)]


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
    board_trace = {
        "type": "heatmap",
        "z": np.asarray(board, np.float32),
        "x": xl,
        "y": yl,
        "coloraxis": "coloraxis",
        "hovertemplate": "key %{y}<br>value %{x}<br>entry %{z:.3f}<extra></extra>",
    }
    coloraxis = {
        "colorscale": DIVERGING,
        "cmin": -zmax,
        "cmax": zmax,
        "colorbar": {"title": {"text": "entry"}, "thickness": 12},
    }
    if key_vector is None:
        return panels_figure(
            [board_trace],
            [""],
            [{"title": {"text": VALUE_AXIS}, "type": "category"}],
            [{"title": {"text": KEY_AXIS}}],
            coloraxis=coloraxis,
            title=title,
            height=height,
        )
    key_trace = {
        "type": "heatmap",
        "z": np.asarray(key_vector, np.float32).reshape(d, 1),
        "x": ["key"],
        "y": yl,
        "coloraxis": "coloraxis",
        "hovertemplate": "this token's key<br>%{y}: %{z:.3f}<extra></extra>",
    }
    return panels_figure(
        [key_trace, board_trace],
        ["this key", "the board"],
        [{"title": {"text": ""}}, {"title": {"text": VALUE_AXIS}, "type": "category"}],
        [{"title": {"text": KEY_AXIS}}, {"title": {"text": ""}, "showticklabels": False}],
        widths=(0.07, 0.89),
        gap=0.04,
        coloraxis=coloraxis,
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
    traces = [
        {
            "type": "heatmap",
            "z": np.asarray(parts[name], np.float32),
            "x": xl,
            "y": yl,
            "coloraxis": "coloraxis",
            "hovertemplate": f"{name}<br>key %{{y}}<br>value %{{x}}<br>entry %{{z:.3f}}<extra></extra>",
        }
        for name in names
    ]
    # narrow panels: up to 8 columns keep a short label each (the value's name, else its number),
    # turned upright so none overlap; wider boards label every few columns by number
    if V <= 8:
        ticks, text = xl, [value_names[i] if i < len(value_names) else str(i) for i in range(V)]
    else:
        every = -(-V // 8)
        ticks, text = xl[::every], [str(i) for i in range(0, V, every)]
    x_axes = [
        {
            "title": {"text": "value dim."},
            "type": "category",  # labels like "9" would otherwise turn the axis numeric
            "tickvals": ticks,
            "ticktext": text,
            "tickangle": -90 if max(len(t) for t in text) > 2 else 0,
            "tickfont": {"size": 10},
        }
        for _ in names
    ]
    y_axes = [
        {"title": {"text": KEY_AXIS if i == 0 else ""}, "showticklabels": i == 0} for i in range(len(names))
    ]
    return panels_figure(
        traces,
        names,
        x_axes,
        y_axes,
        gap=0.035,
        title=title,
        height=height,
        coloraxis={
            "colorscale": DIVERGING,
            "cmin": -zmax,
            "cmax": zmax,
            "colorbar": {"title": {"text": "entry"}, "thickness": 12},
        },
    )


# --------------------------------------------------------------------------- small matrices (lesson 3)


def matrices_figure(
    panels: Sequence[tuple[str, np.ndarray, str, str]], zmax: float, height: int = 300
) -> go.Figure:
    """Small matrices side by side with their numbers printed: (title, matrix, x title, y title)."""
    traces = [
        {
            "type": "heatmap",
            "z": np.asarray(m, np.float32),
            "x": list(range(m.shape[1])),
            "y": list(range(m.shape[0])),
            "coloraxis": "coloraxis",
            "texttemplate": "%{z:.2f}",
            "textfont": {"size": 11},
            "hovertemplate": "row %{y}, column %{x}: %{z:.3f}<extra></extra>",
        }
        for _, m, _, _ in panels
    ]
    fig = panels_figure(
        traces,
        [p[0] for p in panels],
        [{"title": {"text": p[2]}, "dtick": 1} for p in panels],
        [{"title": {"text": p[3]}, "dtick": 1} for p in panels],
        gap=0.08,
        height=height,
        coloraxis={"colorscale": DIVERGING, "cmin": -zmax, "cmax": zmax, "showscale": False},
    )
    fig.update_layout(margin=dict(t=40))
    return fig


def memory_figure(
    T: np.ndarray, cache_bytes: np.ndarray, board_bytes: np.ndarray, title: str = ""
) -> go.Figure:
    """Bytes held after T tokens: a cache grows a row per token, the board stays the same."""
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=T,
            y=cache_bytes,
            name="KV cache (softmax attention)",
            line=dict(color=COLORS["attention"], width=3),
            customdata=[format_bytes(b) for b in cache_bytes],
            hovertemplate="%{x} tokens: %{customdata}<extra>cache</extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=T,
            y=board_bytes,
            name="board (linear attention)",
            line=dict(color=COLORS["linear"], width=3),
            customdata=[format_bytes(b) for b in board_bytes],
            hovertemplate="%{x} tokens: %{customdata}<extra>board</extra>",
        )
    )
    base_layout(fig, title, "tokens written (T)", "memory held (bytes, fp32)", height=320)
    return fig


# --------------------------------------------------------------------------- readback and recall


def readback_figure(
    readback: np.ndarray,
    names: Sequence[str],
    correct: np.ndarray,
    *,
    value_names: Sequence[str] = (),
    zmax: float = 1.0,
    title: str = "",
    height: int | None = None,
) -> go.Figure:
    """What comes back for each key (rows) across the value dimensions (columns).

    A ✓ or ✗ after each key says whether the nearest value is the right one.
    """
    n, V = readback.shape
    rows = [f"{name} {'✓' if ok else '✗'}" for name, ok in zip(names, correct, strict=True)]
    fig = go.Figure(
        heatmap(
            readback,
            -zmax,
            zmax,
            x_labels=value_labels(value_names, V),
            y_labels=rows,
            colorbar_title="readback",
            hover="read %{y}<br>value %{x}<br>%{z:.3f}<extra></extra>",
        )
    )
    base_layout(
        fig,
        title,
        VALUE_AXIS,
        "key read back (✓ = nearest value is right)",
        height=height or max(260, 60 + 22 * n),
    )
    _matrix_axes(fig)
    fig.update_xaxes(type="category")
    return fig


def compare_readbacks_figure(
    panels: dict[str, np.ndarray],
    names: Sequence[str],
    *,
    value_names: Sequence[str] = (),
    zmax: float = 1.0,
    height: int | None = None,
) -> go.Figure:
    """Readbacks of the same keys from several memories, one panel each, one colour axis.

    panels: {panel title: readback (n, V)}.
    """
    V = next(iter(panels.values())).shape[1]
    xl = value_labels(value_names, V)
    traces = [
        {
            "type": "heatmap",
            "z": np.asarray(rb, np.float32),
            "x": xl,
            "y": list(names),
            "coloraxis": "coloraxis",
            "hovertemplate": "read %{y}<br>value %{x}<br>%{z:.3f}<extra></extra>",
        }
        for rb in panels.values()
    ]
    n = len(panels)
    return panels_figure(
        traces,
        list(panels),
        # "value dimension": the long VALUE_AXIS would run into the next panel's title in a narrow window
        [
            {"title": {"text": "value dimension"}, "type": "category", "showticklabels": V <= 12}
            for _ in range(n)
        ],
        [{"title": {"text": "key read back" if i == 0 else ""}, "showticklabels": i == 0} for i in range(n)],
        gap=0.05,
        height=height or max(280, 80 + 22 * len(names)),
        coloraxis={
            "colorscale": DIVERGING,
            "cmin": -zmax,
            "cmax": zmax,
            "colorbar": {"title": {"text": "readback"}, "thickness": 12},
        },
    )


def recall_curves_figure(
    ns: Sequence[int], curves: dict[str, tuple[np.ndarray, str, str]], d: int, title: str = ""
) -> go.Figure:
    """Recall vs pairs written, one line per memory; a dashed line marks n = d.

    curves: {legend label: (accuracy per n, mechanism for the colour, line dash)}.
    """
    fig = go.Figure()
    for label, (acc, rule, dash) in curves.items():
        fig.add_trace(
            go.Scatter(
                x=list(ns),
                y=np.asarray(acc, float),
                name=label,
                mode="lines+markers",
                line=dict(color=COLORS.get(rule, COLORS["predicted"]), width=3, dash=dash),
                hovertemplate="%{x} pairs: %{y:.0%} recalled<extra>" + label + "</extra>",
            )
        )
    fig.add_vline(
        x=d,
        line_dash="dash",
        line_color=COLORS["predicted"],
        annotation_text=f"n = d = {d}",
        annotation_position="bottom right",  # the curves start high: the bottom corner is free
        annotation_bgcolor="rgba(255,255,255,0.85)",
    )
    base_layout(fig, title, "pairs written (n)", "keys recalled (fraction)", height=360)
    fig.update_yaxes(range=[-0.03, 1.05], tickformat=".0%")
    return fig


def accuracy_bars_figure(
    scores: dict[str, float], title: str = "", y_title: str = "keys recalled"
) -> go.Figure:
    """One bar per memory: the fraction of keys whose nearest value is right."""
    fig = go.Figure(
        go.Bar(
            x=[LABELS.get(k, k) for k in scores],
            y=list(scores.values()),
            marker_color=[COLORS.get(k, COLORS["predicted"]) for k in scores],
            text=[f"{v:.0%}" for v in scores.values()],
            textposition="outside",
            hovertemplate="%{x}: %{y:.0%}<extra></extra>",
        )
    )
    base_layout(fig, title, "memory", y_title, height=300)
    fig.update_yaxes(range=[0, 1.15], tickformat=".0%")
    return fig


# --------------------------------------------------------------------------- forgetting (lesson 7)


def channel_rates_figure(rates: dict[str, np.ndarray], keep_channels: int, title: str = "") -> go.Figure:
    """The fade rate α of every key channel, one bar group per rule (1 = keep everything)."""
    fig = go.Figure()
    for rule, alpha in rates.items():
        fig.add_trace(
            go.Bar(
                x=key_labels(len(alpha)),
                y=np.asarray(alpha, float),
                name=LABELS.get(rule, rule),
                marker_color=COLORS.get(rule, COLORS["predicted"]),
                hovertemplate="%{x}: α = %{y:.2f}<extra>" + LABELS.get(rule, rule) + "</extra>",
            )
        )
    fig.add_vrect(
        x0=-0.5,
        x1=keep_channels - 0.5,
        fillcolor="#fff3bf",
        opacity=0.5,
        line_width=0,
        annotation_text="fact channels",
        annotation_position="top left",
    )
    base_layout(fig, title, "key channel", "fade rate α at the switch<br>(1 = keep everything)", height=320)
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0, 1.1])
    return fig


def channel_fill_figure(fill: np.ndarray, zmax: float, switch: int, title: str = "") -> go.Figure:
    """How much each key channel holds after each token (rows = channels, columns = token #)."""
    T1, d = fill.shape
    fig = go.Figure(
        heatmap(
            fill.T,
            0.0,
            zmax,
            x_labels=list(range(T1)),
            y_labels=key_labels(d),
            colorscale=SEQUENTIAL,
            colorbar_title="held",
            hover="after token %{x}<br>%{y}<br>holds %{z:.2f}<extra></extra>",
        )
    )
    fig.add_vline(
        x=switch + 0.5,
        line_dash="dash",
        line_color=COLORS["warning"],
        annotation_text="topic switch",
        annotation_position="top right",
        # on a white label: the cells under it can be the darkest blue
        annotation_bgcolor="rgba(255,255,255,0.9)",
        annotation_bordercolor=COLORS["warning"],
        annotation_font_color=COLORS["warning"],
    )
    base_layout(fig, title, "tokens written (token #)", "key channel", height=300)
    _matrix_axes(fig)
    return fig


def strength_figure(
    groups: Sequence[str], strengths: dict[str, Sequence[float]], title: str = ""
) -> go.Figure:
    """How much of the right value each group of keys still returns, one bar per rule."""
    fig = go.Figure()
    for rule, values in strengths.items():
        fig.add_trace(
            go.Bar(
                x=list(groups),
                y=list(values),
                name=LABELS.get(rule, rule),
                marker_color=COLORS.get(rule, COLORS["predicted"]),
                text=[f"{v:.2f}" for v in values],
                textposition="outside",
                hovertemplate="%{x}: %{y:.2f}<extra>" + LABELS.get(rule, rule) + "</extra>",
            )
        )
    fig.add_hline(y=1.0, line_dash="dot", line_color=COLORS["predicted"])
    base_layout(fig, title, "keys", "value strength<br>(1 = as written, 0 = gone)", height=340)
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[min(-0.1, min(min(v) for v in strengths.values()) - 0.1), 1.25])
    return fig
