"""One look for every chart: fonts, colours per mechanism, heatmap defaults.

Pages pass figures to `ui.lesson.show_figure`, which draws them with `theme=None`
so these choices — above all the fixed colour ranges — survive untouched.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

FONT = dict(family="Inter, system-ui, -apple-system, Segoe UI, sans-serif", size=13, color="#1f2933")

# One colour per mechanism, used everywhere the mechanism appears.
COLORS = {
    "attention": "#3b5bdb",  # softmax attention / KV cache
    "mla": "#5f3dc4",  # multi-head latent attention
    "linear": "#e8590c",  # linear attention: add
    "delta": "#2b8a3e",  # DeltaNet: rewrite
    "gated_delta": "#0b7285",  # Gated DeltaNet: forget
    "kda": "#c2255c",  # Kimi Delta Attention: forget per channel
    "moe": "#f08c00",
    "dense": "#495057",
    "measured": "#1971c2",
    "predicted": "#868e96",
    "warning": "#e03131",
}
LABELS = {
    "attention": "Softmax attention",
    "mla": "MLA (latent attention)",
    "linear": "Linear attention",
    "delta": "DeltaNet",
    "gated_delta": "Gated DeltaNet",
    "kda": "Kimi Delta Attention",
}

DIVERGING = "RdBu_r"  # signed values (board entries, keys, values): blue < 0 < red
SEQUENTIAL = "Blues"  # non-negative values (weights, counts)


def base_layout(
    fig: go.Figure,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    height: int = 360,
) -> go.Figure:
    """Apply the shared layout: white background, readable font, titled axes."""
    fig.update_layout(
        title=dict(text=title, x=0.0, xanchor="left", font=dict(size=15)),
        font=FONT,
        height=height,
        margin=dict(l=60, r=20, t=50 if title else 20, b=50),
        plot_bgcolor="white",
        paper_bgcolor="white",
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1.0),
        hoverlabel=dict(font_size=12),
    )
    fig.update_xaxes(title_text=x_title, showgrid=True, gridcolor="#eceff1", zeroline=False, linecolor="#adb5bd")
    fig.update_yaxes(title_text=y_title, showgrid=True, gridcolor="#eceff1", zeroline=False, linecolor="#adb5bd")
    return fig


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


def format_bytes(n: float) -> str:
    """Human-readable binary size: 36864 → '36.0 KiB'."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
