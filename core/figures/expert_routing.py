"""Experts' routing charts: which routed experts each byte woke, and the load on each expert."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.style import COLORS, base_layout, legend_below, weight_heatmap
from core.i18n import _
from core.tokenizer import byte_labels


def router_heatmap_figure(weights: np.ndarray, tokens: list[int], layer: int, zmax: float) -> go.Figure:
    """Tokens × experts: the weight each routed expert got for each byte (0 = not picked)."""
    # bytes counted from 1, as the Step counter counts them
    labels = [f"{i}:{label}" for i, label in enumerate(byte_labels(tokens), start=1)]
    experts = [str(e) for e in range(weights.shape[1])]
    hover = _("byte {byte}<br>expert {expert}<br>weight {weight}").format(
        byte="%{y}", expert="%{x}", weight="%{z:.2f}"
    )
    fig = go.Figure(weight_heatmap(weights, zmax, experts, labels, hover))
    base_layout(
        fig,
        title=_("Layer {layer}: which routed experts each byte woke").format(layer=layer),
        x_title=_("routed expert"),
        y_title=_("byte of your text"),
        height=min(1200, 140 + 16 * len(tokens)),  # room for a readable label on every byte
    )
    # every byte and every expert labelled: category ticks, one per row and column
    fig.update_yaxes(autorange="reversed", showgrid=False, type="category", dtick=1, tickfont=dict(size=11))
    # upright expert numbers, small enough that 16 fit a phone's width; the colour bar lies above the
    # plot, so the columns get the whole width (beside it, on a phone, the numbers crowded and turned)
    fig.update_xaxes(showgrid=False, type="category", dtick=1, tickangle=0, tickfont=dict(size=10))
    fig.update_traces(
        colorbar=dict(orientation="h", x=0.0, xanchor="left", y=1.0, yanchor="bottom", len=1.0,
                      thickness=12, title=dict(text=_("weight"), side="top")),
    )  # fmt: skip
    fig.update_layout(margin_t=(fig.layout.margin.t or 0) + 40)  # room for the colour bar under the title
    return fig


def expert_load_figure(load: np.ndarray, top_k: int, layer: int) -> go.Figure:
    """Bytes served per routed expert in one layer, with the perfectly even share drawn as a line."""
    even = load.sum() / len(load)
    fig = go.Figure()
    fig.add_bar(
        x=list(range(len(load))),
        y=load,
        marker_color=COLORS["moe"],
        name=_("bytes served"),
        hovertemplate=_("expert {expert}: {bytes} bytes").format(expert="%{x}", bytes="%{y}")
        + "<extra></extra>",
    )
    # the even share is a legend entry, not a label on the line: on a phone a label sat on the bars
    fig.add_scatter(
        x=[-0.5, len(load) - 0.5],
        y=[even, even],
        mode="lines",
        line=dict(color=COLORS["predicted"], dash="dash"),
        name=_("even share ({even:.1f} bytes each)").format(even=even),
        hovertemplate=_("even share: {even:.1f} bytes").format(even=even) + "<extra></extra>",
    )
    base_layout(
        fig,
        title=_("Layer {layer}: load per expert (each byte wakes {k})").format(layer=layer, k=top_k),
        x_title=_("routed expert"),
        y_title=_("bytes routed to it"),
        height=300,
    )
    fig.update_xaxes(tickmode="linear", dtick=1, tick0=0, tickangle=0, tickfont=dict(size=10),
                     range=[-0.5, len(load) - 0.5])  # fmt: skip
    fig.update_yaxes(range=[0, max(float(load.max()), even) * 1.15 + 1])
    legend_below(fig, y=-0.3, bottom=110, grow=50)
    return fig
