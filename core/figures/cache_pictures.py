"""What the KV cache holds and what the newest token read from it (the KV cache page): one head's cached keys
and values as two heatmaps, and one step's attention weights over the cached positions.

Sizes and colour ranges are fixed by the whole run, so stepping fills a frame instead of rescaling
it: each figure is built once per run and moved to a step as a plain dict (the `*_step`
functions, core/figures/figure_dict.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.figures.figure_dict import patched
from core.figures.generation import Label
from core.figures.style import COLORS, DIVERGING, SEQUENTIAL, base_layout, heatmap
from core.i18n import _, pgettext
from core.tokenizer import token_label


@dataclass(frozen=True)
class HeadCache:
    """One head's cached keys and values over a whole run, and the tokens they belong to: what the cache
    heatmaps draw, `rows` of them at a step. keys/values: a layer's final cache (H, T, Dh)."""

    keys: np.ndarray
    values: np.ndarray
    head: int
    token_ids: list[int]
    label: Label = token_label


def _cache_rows(cache: HeadCache, rows: int) -> tuple[tuple[np.ndarray, np.ndarray], dict, list[dict]]:
    """The step-dependent part of the cache heatmaps: K and V of the head, the first `rows` rows
    (each (max(rows, 1), Dh) float32), the y ticks labelling the rows held so far, and an outline
    around the newest row in both panels (what a step adds)."""
    keys, label, token_ids = cache.keys, cache.label, cache.token_ids
    max_rows = keys.shape[1]
    every = max(1, max_rows // 16)  # tick spacing fixed by the axis, not by the rows shown
    ticks = dict(
        tickmode="array",
        tickvals=list(range(0, rows, every)),
        ticktext=[f"{i}: {label(token_ids[i])}" for i in range(0, rows, every)],
    )
    zs = []
    for data in (keys[cache.head], cache.values[cache.head]):
        # only the rows held so far travel (the y axis keeps its full, fixed range): early steps send
        # a few rows, not the whole run's; one blank row stands in for an empty cache
        z = np.full((max(rows, 1), data.shape[1]), np.nan, dtype=np.float32)
        z[:rows] = data[:rows]
        zs.append(z)
    width = keys.shape[2]
    newest = [
        dict(
            type="rect",
            xref=f"x{axis}",
            yref=f"y{axis}",
            x0=-0.5,
            x1=width - 0.5,
            y0=max(rows, 1) - 1.5,
            y1=max(rows, 1) - 0.5,
            line=dict(color=COLORS["dense"], width=2),
            fillcolor="rgba(0,0,0,0)",
            visible=rows > 0,  # an empty cache outlines nothing (the shapes stay, so a patch can move them)
        )
        for axis in ("", "2")
    ]
    return (zs[0], zs[1]), ticks, newest


def cache_heatmaps_step(base: dict, cache: HeadCache, rows: int) -> dict:
    """`cache_heatmaps_figure` for another number of rows, from that figure's dict (same `cache`)."""
    (zk, zv), ticks, newest = _cache_rows(cache, rows)
    return patched(base, {0: {"z": zk}, 1: {"z": zv}}, {"yaxis": ticks, "yaxis2": ticks, "shapes": newest})


def channel_ticks(width: int) -> list[int]:
    """Channel numbers to label under one panel: 0 and the middle only. A tick at the panel's right
    edge would sit beside the next panel's 0 (on a phone the two read as one label, "30 0")."""
    return [0, width // 2] if width > 1 else [0]


def cache_heatmaps_figure(cache: HeadCache, rows: int, unit: str = "byte") -> go.Figure:
    """One head's cached keys and values side by side: rows = positions held (one per byte
    read), columns = channels of the head.

    The first `rows` rows of the head are shown. The y axis spans all T rows and the colour range
    the whole layer, so both stay fixed while stepping: the cache visibly grows and an old row never
    changes colour.
    """
    keys = cache.keys
    zmax = float(max(np.abs(keys).max(), np.abs(cache.values).max(), 1e-6))
    max_rows = keys.shape[1]
    zs, ticks, newest = _cache_rows(cache, rows)
    hover = _("position %{y}<br>channel %{x}<br>%{z:.3f}") + "<extra></extra>"
    traces = []
    for z, axis in ((zs[0], ""), (zs[1], "2")):
        hm = heatmap(
            z,
            -zmax,
            zmax,
            colorscale=DIVERGING,
            colorbar_title=pgettext("colour bar: a cached number", "value"),
            hover=hover,
        )
        hm.update(xaxis=f"x{axis}", yaxis=f"y{axis}", showscale=axis == "2")
        traces.append(hm)
    fig = go.Figure(traces)
    # short titles on two lines, one short x title per panel: on a phone each panel is under 100 px wide
    base_layout(fig, "", _("channel"), "", height=420)
    fig.update_layout(margin=dict(t=56))  # room for the two-line panel titles
    y_common = dict(autorange=False, range=[max_rows - 0.5, -0.5], showgrid=False, **ticks)
    x_ticks = dict(tickmode="array", tickvals=channel_ticks(keys.shape[2]), tickangle=0)
    fig.update_layout(
        xaxis=dict(domain=[0.0, 0.46], showgrid=False, **x_ticks),
        # a second axis pair gets plotly's defaults, not base_layout's: no zero line through column 0
        xaxis2=dict(
            domain=[0.54, 1.0],
            showgrid=False,
            zeroline=False,
            title_text=_("channel"),
            anchor="y2",
            **x_ticks,
        ),
        # short: on a phone the plot is under 300 px tall, and a longer title was cut at both ends
        yaxis=dict(
            title_text=_("cached row (one per {unit})").format(unit=_(unit)), automargin=True, **y_common
        ),
        yaxis2=dict(anchor="x2", showticklabels=False, zeroline=False, **y_common),
        annotations=[
            dict(
                text=text,
                x=x,
                y=1.0,
                xref="paper",
                yref="paper",
                xanchor="center",  # plotly's "auto" anchors x < ⅓ left and x > ⅔ right: on a phone they met
                yanchor="bottom",
                showarrow=False,
                font_size=12,
            )
            for text, x in ((_("cached<br>K: keys"), 0.23), (_("cached<br>V: values"), 0.77))
        ],
        shapes=newest,
    )
    return fig


def _attention_row(weights: np.ndarray, max_len: int) -> np.ndarray:
    """(heads, max_len) float32: this step's weights, NaN over positions not read yet."""
    heads, length = weights.shape
    z = np.full((heads, max_len), np.nan, dtype=np.float32)
    z[:, :length] = weights
    return z


def attention_step(base: dict, weights: np.ndarray, max_len: int) -> dict:
    """`attention_figure` at another step, from that figure's dict (same tokens, same layer)."""
    return patched(base, {0: {"z": _attention_row(weights, max_len)}})


def attention_figure(
    weights: np.ndarray, token_ids: list[int], max_len: int, label: Label = token_label, unit: str = "byte"
) -> go.Figure:
    """This step's attention weights: rows = heads, columns = cached positions (each row sums to 1)."""
    heads = weights.shape[0]
    z = _attention_row(weights, max_len)
    x_labels = [f"{i}: {label(t)}" for i, t in enumerate(token_ids[:max_len])]
    x_labels += [str(i) for i in range(len(x_labels), max_len)]
    fig = go.Figure(
        heatmap(
            z,
            0.0,
            1.0,
            x_labels=x_labels,
            y_labels=[_("head {h}").format(h=h) for h in range(heads)],
            colorscale=SEQUENTIAL,
            colorbar_title=_("weight"),
            hover=_("%{y}<br>position %{x}<br>weight %{z:.3f}") + "<extra></extra>",
        )
    )
    base_layout(fig, "", _("position read ({unit} number)").format(unit=_(unit)), "", height=220)
    # a position number every so often (six fit a phone); hover names each position's byte
    every = max(1, -(-max_len // 6))
    fig.update_xaxes(
        showgrid=False,
        tickmode="array",
        tickvals=x_labels[::every],
        ticktext=[str(i) for i in range(0, max_len, every)],
        tickangle=0,
    )
    fig.update_yaxes(showgrid=False, autorange="reversed")
    return fig
