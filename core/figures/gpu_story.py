"""Story's two GPU pictures (issue 40): speed over context depth on a plain axis, and dense against MoE,
speed beside power. One idea each; the Engineer charts with error bars, eager lines and % panels are in
`core/figures/gpu.py`, whose line and colour helpers these share."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.gpu import SERIES_COLORS, SERIES_MARKERS, depth_line, number_or_none
from core.figures.style import COLORS, base_layout, legend_below, two_lines
from core.gpu.suites.context_bench import ContextResult
from core.gpu.suites.moe_bench import MoeResult
from core.i18n import _


def depth_story_figure(result: ContextResult, roofline: bool = False, title: str = "") -> go.Figure:
    """Story's picture of context vs speed: each model's measured tokens/s over depth on a plain axis from
    zero (full attention falls, the fixed state stays flat) and, with `roofline`, the dashed ceiling its
    bytes allow. No error bars, no eager line, no % panel: those are the Engineer chart's."""
    fig = go.Figure()
    for s in result.series:
        color = SERIES_COLORS.get(s.model, COLORS["measured"])
        fig.add_trace(
            depth_line(
                s,
                _("measured"),
                [p.tokens_per_s for p in s.points],
                dict(color=color, width=3),
                _("%{y:,.0f} tokens/s"),
                marker=dict(size=8, symbol=SERIES_MARKERS.get(s.model, "diamond")),
            )
        )
        if roofline:
            fig.add_trace(
                depth_line(
                    s,
                    _("roofline"),
                    [p.predicted_tokens_per_s for p in s.points],
                    dict(color=color, width=1.5, dash="dash"),
                    _("at most %{y:,.0f} tokens/s"),
                    mode="lines",
                )
            )
    base_layout(fig, title, _("depth d (tokens in memory)"), _("tokens per second"), height=400)
    fig.update_yaxes(rangemode="tozero")
    fig.update_xaxes(rangemode="tozero")
    return legend_below(fig)


def moe_story_figure(result: MoeResult) -> go.Figure:
    """Story's picture of dense vs MoE: tokens per second and average power side by side, one bar per model
    (the power panel only where the run read the card's power)."""
    names = [_(r.model) for r in result.rows]
    colors = [COLORS["dense"] if r.model == "dense" else COLORS["moe"] for r in result.rows]
    watts = [number_or_none(r.avg_watts) for r in result.rows]
    panels = [
        (_("speed (tokens per second)"), [number_or_none(r.tokens_per_s) for r in result.rows], _("tokens/s"))
    ]
    if any(w is not None for w in watts):
        panels.append((_("power (watts)"), watts, "W"))
    # each panel's title over two lines: side by side on a phone, one-line titles run into each other
    fig = make_subplots(
        rows=1,
        cols=len(panels),
        horizontal_spacing=0.18,
        subplot_titles=[two_lines(t) for t, *_rest in panels],
    )
    for col, (_title, values, unit) in enumerate(panels, 1):
        fig.add_trace(
            go.Bar(
                x=names,
                y=values,
                marker_color=colors,
                text=[f"{v:,.0f}" if v is not None else "" for v in values],
                textposition="outside",
                showlegend=False,
                hovertemplate=_("{label}: {value}").format(label="%{x}", value="%{y:,.0f} " + unit)
                + "<extra></extra>",
            ),
            row=1,
            col=col,
        )
        top = max((v for v in values if v is not None), default=1.0)
        fig.update_yaxes(range=[0, top * 1.2], row=1, col=col)
    base_layout(fig, "", "", "", height=360)
    fig.update_layout(bargap=0.35, margin=dict(t=70))  # room for the panels' two-line titles
    return fig
