"""One look for every chart: fonts, colours per mechanism, heatmap defaults.

Pages pass figures to `ui.lesson.show_figure`, which draws them with `theme=None`
so these choices — above all the fixed colour ranges — survive untouched.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from core.mechanisms import RULES
from core.units import format_si

FONT = dict(family="Inter, system-ui, -apple-system, Segoe UI, sans-serif", size=13, color="#1f2933")

# One colour per mechanism, used everywhere the mechanism appears; the fixed-board rules'
# colours and names come from the registry (core/mechanisms.py).
COLORS = {
    "attention": "#3b5bdb",  # softmax attention / KV cache
    "mla": "#5f3dc4",  # multi-head latent attention
    **{key: m.color for key, m in RULES.items()},
    "hybrid": "#862e9c",  # KDA layers + attention layers
    "moe": "#f08c00",
    "dense": "#495057",
    "measured": "#1971c2",
    "predicted": "#868e96",
    "warning": "#e03131",
}
LABELS = {
    "attention": "Softmax attention",
    "mla": "MLA (latent attention)",
    **{key: m.label for key, m in RULES.items()},
    "hybrid": "Hybrid (KDA + attention)",
}


def color_of(key: str) -> str:
    """A mechanism's colour, looked up live so a rule registered later gets its own."""
    return RULES[key].color if key in RULES else COLORS.get(key, COLORS["dense"])


def label_of(key: str) -> str:
    """A mechanism's reader-facing name (the key itself when it is not a known mechanism)."""
    return RULES[key].label if key in RULES else LABELS.get(key, key)


DIVERGING = "RdBu_r"  # signed values (board entries, keys, values): blue < 0 < red
SEQUENTIAL = "Blues"  # non-negative values (weights, counts)

TITLE_MARGIN = 60  # top margin of a titled chart: the title above, a horizontal legend under it


def base_layout(
    fig: go.Figure,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    height: int = 360,
) -> go.Figure:
    """Apply the shared layout: white background, readable font, titled axes."""
    fig.update_layout(
        # the title sits at the very top, so a legend above the plot (y = 1.02) never runs into it
        title=dict(
            text=title,
            x=0.0,
            xanchor="left",
            y=1.0,
            yref="container",
            yanchor="top",
            pad=dict(t=8),
            font=dict(size=15),
        ),
        font=FONT,
        height=height,
        margin=dict(l=60, r=20, t=TITLE_MARGIN if title else 20, b=50),
        plot_bgcolor="white",
        paper_bgcolor="white",
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1.0),
        hoverlabel=dict(font_size=12),
    )
    # automargin: long or rotated tick labels push the margin out and the axis title with them,
    # instead of running into each other (standoff = gap between tick labels and axis title)
    axis = dict(showgrid=True, gridcolor="#eceff1", zeroline=False, linecolor="#adb5bd", automargin=True)
    fig.update_xaxes(title=dict(text=x_title, standoff=8), **axis)
    fig.update_yaxes(title=dict(text=y_title, standoff=8), **axis)
    return fig


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Clean ticks for a log axis covering lo..hi: 1-2-5 steps over up to two decades, else powers of ten.

    Plotly's own log ticks label every minor step ("2, 3, …, 9, 10k"); these stay readable.
    """
    if not (lo > 0 and hi > 0):
        raise ValueError("a log axis needs positive bounds")
    lo, hi = min(lo, hi), max(lo, hi)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1, 2, 5) if last - first <= 2 else (1,)
    values = [m * 10.0**e for e in range(first, last + 1) for m in steps]
    inside = [v for v in values if lo / 1.001 <= v <= hi * 1.001]
    if len(inside) < 2:  # less than a step wide: take the nearest steps on either side too
        below = [v for v in values if v < lo]
        above = [v for v in values if v > hi]
        inside = below[-1:] + inside + above[:1]
    return inside, [format_si(v) for v in inside]


def wrap_text(text: str, width: int = 11) -> str:
    """Break a label into lines of about `width` characters (at spaces, else after hyphens) with
    <br>, so labels stay short where plotly cannot wrap: 'Qwen3-Next-80B-A3B' → 'Qwen3-Next-<br>80B-A3B'."""
    pieces: list[str] = []
    for word in text.split(" "):
        if len(word) <= width or "-" not in word:
            pieces.append(word)
            continue
        parts = word.split("-")
        pieces.extend([p + "-" for p in parts[:-1]] + [parts[-1]])
    lines: list[str] = []
    for piece in pieces:
        glue = "" if lines and lines[-1].endswith("-") else " "
        if lines and len(lines[-1]) + len(glue) + len(piece) <= width:
            lines[-1] += glue + piece
        else:
            lines.append(piece)
    return "<br>".join(lines)


def heatmap(
    z: np.ndarray,
    zmin: float,
    zmax: float,
    x_labels=None,
    y_labels=None,
    colorscale: str = DIVERGING,
    colorbar_title: str = "",
    hover: str = "row %{y}<br>column %{x}<br>value %{z:.3f}<extra></extra>",
) -> go.Heatmap:
    """A heatmap trace with a fixed colour range, so the same value looks the same at every step."""
    return go.Heatmap(
        z=np.asarray(z, dtype=np.float32),
        x=x_labels,
        y=y_labels,
        zmin=zmin,
        zmax=zmax,
        colorscale=colorscale,
        colorbar=dict(title=dict(text=colorbar_title, side="right"), thickness=12),
        hovertemplate=hover,
    )


def patched_figure(
    base: dict, traces: dict[int, dict] | None = None, layout: dict | None = None
) -> go.Figure:
    """A copy of a validated figure dict (`fig.to_dict()`) with some trace and layout properties replaced.

    Building and validating a plotly figure costs tens of milliseconds; a step of a precomputed run
    changes only a few arrays and labels. So the full figure is built (and validated) once per run,
    and each step swaps in its own values and wraps the result without validating it again. Layout
    values that are dicts are merged one level deep (e.g. `{"yaxis": {"tickvals": …}}`).
    """
    traces, layout = traces or {}, layout or {}
    data = [{**trace, **traces.get(i, {})} for i, trace in enumerate(base["data"])]
    merged = dict(base["layout"])
    for name, value in layout.items():
        old = merged.get(name)
        merged[name] = {**old, **value} if isinstance(value, dict) and isinstance(old, dict) else value
    return go.Figure({"data": data, "layout": merged}, _validate=False)
