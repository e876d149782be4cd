"""Experts' weight charts: parameters stored vs used, and the bytes read per token at batch 1."""

from __future__ import annotations

import plotly.graph_objects as go

from core.figures.style import COLORS, base_layout
from core.i18n import _
from core.units import format_params


def params_figure(rows: list[tuple[str, float, float]]) -> go.Figure:
    """Total vs active parameters, one pair of bars per model: rows of (name, total, active). Log scale."""
    fig = go.Figure()
    names = [r[0] for r in rows]
    for column, name, color in (
        (1, _("total (must be stored)"), "predicted"),
        (2, _("active (used per token)"), "moe"),
    ):
        fig.add_bar(
            x=names,
            y=[r[column] for r in rows],
            name=name,
            marker_color=COLORS[color],
            text=[format_params(r[column]) for r in rows],
            textposition="outside",
        )
    base_layout(
        fig,
        title=_("Parameters stored vs used per token"),
        x_title="",
        y_title=_("parameters (log scale)"),
        height=340,
    )
    fig.update_yaxes(type="log")
    fig.update_layout(barmode="group")
    return fig


def bytes_per_token_figure(rows: list[tuple[str, float]], title: str) -> go.Figure:
    """Bytes each model reads per token, one bar each; the title says what and at which batch
    (Experts: "Weights read per token at batch 1"), so the axis stays short enough for a phone."""
    fig = go.Figure()
    fig.add_bar(
        y=[r[0] for r in rows],
        x=[r[1] / 2**30 for r in rows],
        orientation="h",
        # the first row is the dense what-if, every later one an MoE variant
        marker_color=[COLORS["dense"]] + [COLORS["moe"]] * (len(rows) - 1),
        text=[f"{r[1] / 2**30:,.0f} GiB" for r in rows],
        textposition="auto",
    )
    base_layout(fig, title=title, x_title=_("per token (GiB)"), y_title="", height=160 + 40 * len(rows))
    return fig
