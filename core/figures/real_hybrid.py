"""Pictures of a released hybrid (Qwen3.5) run token by token: data in, figures out.

Each stepped picture has a `*_figure` (built and validated once per run, at the run's last token)
and a `*_step` that patches its plain dict to token t (core.figures.figure_dict.patched), so a Step click
swaps arrays instead of building a chart. Sizes never change with t: the board is K × V at every
token, the α / β and cache pictures are as wide or tall as the whole run, filled up to t.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.figure_dict import patched
from core.figures.layer_map import KindLook, layer_map
from core.figures.style import (
    COLORS,
    DIVERGING,
    SEQUENTIAL,
    bar_pattern,
    base_layout,
    heatmap,
    legend_below,
)
from core.i18n import _
from core.models.qwen35_trace import BOARD, LayerMap

BOARD_COLOR = COLORS["gated_delta"]
CACHE_COLOR = COLORS["attention"]


# -- the released layer map ---------------------------------------------------------------------


def layer_map_figure(layers: LayerMap, title: str) -> go.Figure:
    """The release's layers as the course draws every layer map (core/figures/layer_map.py): each cell
    coloured and hatched by what the layer keeps, a fixed board or a growing cache; 12 layers to a row."""
    looks = {
        BOARD: KindLook(_("Gated DeltaNet: a fixed board"), BOARD_COLOR, bar_pattern("gated_delta")),
        "full_attention": KindLook(_("gated attention: a growing cache"), CACHE_COLOR, {}),
    }
    return layer_map(list(layers.kinds), looks, row_size=12, title=title)


# -- one head's board ---------------------------------------------------------------------------


def board_figure(board: np.ndarray, limit: float, title: str) -> go.Figure:
    """One head's board (K × V) as a heatmap on a fixed colour scale ±limit."""
    k, v = board.shape
    fig = go.Figure(
        heatmap(
            board,
            -limit,
            limit,
            colorscale=DIVERGING,
            colorbar_title=_("entry"),
            hover=_("key channel %{y}<br>value channel %{x}<br>entry %{z:.3f}") + "<extra></extra>",
        )
    )
    base_layout(fig, title, _("value channel (column of the board)"), _("key channel (row)"), height=380)
    fig.update_yaxes(autorange="reversed", range=None)
    fig.update_xaxes(range=[-0.5, v - 0.5])
    return fig


def board_step(base: dict, board: np.ndarray, title: str) -> dict:
    return patched(base, {0: {"z": np.asarray(board, dtype=np.float32)}}, {"title": {"text": title}})


# -- α and β per head per token -----------------------------------------------------------------


def _filled(values: np.ndarray, shown: int) -> np.ndarray:
    """(T, H) → (H, T) with the tokens after `shown` left blank (NaN): the width never changes."""
    z = np.asarray(values, dtype=np.float32).T.copy()  # (H, T)
    z[:, shown:] = np.nan
    return z


def fade_write_figure(alpha: np.ndarray, beta: np.ndarray, shown: int, title: str) -> go.Figure:
    """Two heatmaps over the run (columns = tokens, rows = heads): the fade α and the write strength β,
    both on the fixed scale 0 … 1. alpha, beta: (T, H) for one layer."""
    steps, heads = alpha.shape
    x = list(range(1, steps + 1))
    y = [_("head {n}").format(n=h + 1) for h in range(heads)]
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.16,
        subplot_titles=(_("fade α (1 = keep all)"), _("write strength β")),  # short: a phone cuts a long one
    )
    for row, (values, name, bar_y) in enumerate(((alpha, "α", 0.79), (beta, "β", 0.21)), start=1):
        trace = heatmap(
            _filled(values, shown),
            0.0,
            1.0,
            x_labels=x,
            y_labels=y,
            colorscale=SEQUENTIAL,
            colorbar_title=name,
            hover=_("token %{x}<br>%{y}<br>") + name + " %{z:.3f}<extra></extra>",
        )
        trace.colorbar.update(len=0.42, y=bar_y)
        trace.name = name
        fig.add_trace(trace, row=row, col=1)
    base_layout(fig, title, "", "", height=120 + 44 * heads)
    fig.update_xaxes(title_text=_("token (1 = first of your text)"), row=2, col=1, range=[0.5, steps + 0.5])
    fig.update_xaxes(range=[0.5, steps + 0.5], row=1, col=1)
    fig.update_yaxes(title_text=_("head"), autorange="reversed")
    return fig


def fade_write_step(base: dict, alpha: np.ndarray, beta: np.ndarray, shown: int, title: str) -> dict:
    return patched(
        base, {0: {"z": _filled(alpha, shown)}, 1: {"z": _filled(beta, shown)}}, {"title": {"text": title}}
    )


# -- an attention layer's cache -----------------------------------------------------------------


def cache_figure(keys: np.ndarray, shown: int, limit: float, title: str) -> go.Figure:
    """The cached keys of one attention layer's KV head: one row per token read (rows 1 … shown),
    on a fixed colour scale; the y axis spans the whole run, so the stack visibly grows."""
    steps, width = keys.shape
    fig = go.Figure(
        heatmap(
            keys[:shown],
            -limit,
            limit,
            y_labels=list(range(1, shown + 1)),
            colorscale=DIVERGING,
            colorbar_title=_("key entry"),
            hover=_("token %{y}<br>channel %{x}<br>%{z:.3f}") + "<extra></extra>",
        )
    )
    base_layout(fig, title, _("key channel"), _("cached row (one per token)"), height=360)
    fig.update_yaxes(range=[steps + 0.5, 0.5])
    fig.update_xaxes(range=[-0.5, width - 0.5])
    return fig


def cache_step(base: dict, keys: np.ndarray, shown: int, title: str) -> dict:
    rows = {"z": np.asarray(keys[:shown], dtype=np.float32), "y": list(range(1, shown + 1))}
    return patched(base, {0: rows}, {"title": {"text": title}})


# -- bytes held, boards against caches ----------------------------------------------------------


def memory_figure(
    state_bytes: np.ndarray, cache_bytes: np.ndarray, full_bytes: np.ndarray, shown: int, title: str
) -> go.Figure:
    """Bytes held after each token: the boards (flat), the attention caches (growing) and what a
    model of the same width with attention in every layer would hold (growing faster)."""
    steps = len(state_bytes)
    fig = go.Figure()
    for values, name, color, dash in (
        (state_bytes, _("Gated DeltaNet boards (all board layers)"), BOARD_COLOR, "dash"),
        (cache_bytes, _("attention caches (all attention layers)"), CACHE_COLOR, "solid"),
        (full_bytes, _("cache if every layer were attention"), COLORS["predicted"], "dot"),
    ):
        fig.add_scatter(
            x=list(range(1, shown + 1)),
            y=np.asarray(values[:shown], dtype=np.float64),
            name=name,
            mode="lines+markers",
            line=dict(color=color, dash=dash),
            hovertemplate=_("token %{x}<br>%{y:,.0f} bytes") + "<extra>" + name + "</extra>",
        )
    top = float(max(np.max(state_bytes), np.max(full_bytes), 1))
    base_layout(fig, title, _("tokens read"), _("memory held (bytes)"), height=360)
    fig.update_xaxes(range=[0.5, steps + 0.5])
    fig.update_yaxes(range=[0, top * 1.08], tickformat="~s")
    return legend_below(fig, y=-0.2, bottom=110)


def memory_step(
    base: dict,
    state_bytes: np.ndarray,
    cache_bytes: np.ndarray,
    full_bytes: np.ndarray,
    shown: int,
    title: str,
) -> dict:
    x = list(range(1, shown + 1))
    traces = {
        i: {"x": x, "y": np.asarray(values[:shown], dtype=np.float64)}
        for i, values in enumerate((state_bytes, cache_bytes, full_bytes))
    }
    return patched(base, traces, {"title": {"text": title}})
