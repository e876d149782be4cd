"""Line and bar charts of the board playground: memory held (Linear attention), recall curves
(Collisions and DeltaNet), fade rates, channel fill and value strength (Forgetting). Data in, go.Figure out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.figures.board_panels import key_labels, matrix_axes
from core.figures.style import (
    COLORS,
    SEQUENTIAL,
    base_layout,
    color_of,
    dash_of,
    heatmap,
    label_of,
    legend_below,
    marker_of,
)
from core.i18n import _
from core.units import format_bytes


def memory_figure(
    T: np.ndarray, cache_bytes: np.ndarray, board_bytes: np.ndarray, title: str = ""
) -> go.Figure:
    """Bytes held after T tokens: a cache grows a row per token, the board stays the same."""
    fig = go.Figure()
    for name, short, key, held in (
        (_("KV cache (softmax attention)"), _("cache"), "attention", cache_bytes),
        (_("board (linear attention)"), _("board"), "linear", board_bytes),
    ):
        fig.add_trace(
            go.Scatter(
                x=T,
                y=held,
                name=name,
                line=dict(color=color_of(key), width=3, dash=dash_of(key)),  # not colour alone
                customdata=[format_bytes(b) for b in held],
                hovertemplate=_("%{{x}} tokens: %{{customdata}}<extra>{short}</extra>").format(short=short),
            )
        )
    base_layout(fig, title, _("tokens written (T)"), _("memory held (bytes, fp32)"), height=320)
    return fig


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
                line=dict(color=color_of(rule), width=3, dash=dash),
                marker=dict(symbol=marker_of(rule), size=8),
                hovertemplate=_("%{{x}} pairs: %{{y:.0%}} recalled<extra>{label}</extra>").format(
                    label=label
                ),
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
    base_layout(fig, title, _("pairs written (n)"), _("keys recalled (fraction)"), height=360)
    fig.update_yaxes(range=[-0.03, 1.05], tickformat=".0%")
    return legend_below(fig, y=-0.2, bottom=100, grow=40)


def _rule_bars(
    fig: go.Figure, x: Sequence[str], bars: dict[str, Sequence[float]], hover: str, *, numbers: bool = False
) -> None:
    """One bar trace per rule, in the rule's colour and name; `hover` formats the bar's y.
    numbers: print each bar's value (two decimals) above it."""
    for rule, y in bars.items():
        text = {"text": [f"{v:.2f}" for v in y], "textposition": "outside"} if numbers else {}
        fig.add_trace(
            go.Bar(
                x=list(x),
                y=[float(v) for v in y],
                name=label_of(rule),
                marker_color=color_of(rule),
                hovertemplate=_("{label}: {value}").format(label="%{x}", value=hover)
                + f"<extra>{label_of(rule)}</extra>",
                **text,
            )
        )
    # a gap between a group's bars keeps their printed numbers apart ("0.680.680.68" on a phone)
    fig.update_layout(barmode="group", bargroupgap=0.15 if numbers else 0.0)


def channel_rates_figure(rates: dict[str, np.ndarray], keep_channels: int, title: str = "") -> go.Figure:
    """The fade rate α of every key channel, one bar group per rule (1 = keep everything)."""
    fig = go.Figure()
    d = len(next(iter(rates.values())))
    _rule_bars(fig, key_labels(d), rates, "α = %{y:.2f}")
    fig.add_vrect(
        x0=-0.5,
        x1=keep_channels - 0.5,
        fillcolor="#fff3bf",
        opacity=0.5,
        line_width=0,
        annotation_text=_("fact channels"),
        annotation_position="top left",
    )
    base_layout(fig, title, _("key channel"), _("fade rate α (1 = keep all)"), height=320)
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
            colorbar_title=_("held"),
            hover=_("after token %{x}<br>%{y}<br>holds %{z:.2f}<extra></extra>"),
        )
    )
    fig.add_vline(
        x=switch + 0.5,
        line_dash="dash",
        line_color=COLORS["warning"],
        annotation_text=_("topic switch"),
        annotation_position="top right",
        # on a white label: the cells under it can be the darkest blue
        annotation_bgcolor="rgba(255,255,255,0.9)",
        annotation_bordercolor=COLORS["warning"],
        annotation_font_color=COLORS["warning"],
    )
    base_layout(fig, title, _("tokens written (token #)"), _("key channel"), height=300)
    matrix_axes(fig)
    return fig


def strength_figure(
    groups: Sequence[str], strengths: dict[str, Sequence[float]], title: str = ""
) -> go.Figure:
    """How much of the right value each group of keys still returns, one bar per rule."""
    fig = go.Figure()
    _rule_bars(fig, groups, strengths, "%{y:.2f}", numbers=True)
    fig.add_hline(y=1.0, line_dash="dot", line_color=COLORS["predicted"])
    base_layout(fig, title, _("keys"), _("strength (1 = as written)"), height=340)
    fig.update_yaxes(range=[min(-0.1, min(min(v) for v in strengths.values()) - 0.1), 1.25])
    return fig
