"""Charts for lesson 10 (Your GPU): speed vs context with the roofline, dense vs MoE, live telemetry.

Data in (results of `core.gpu.bench`, samples of `core.gpu.nvml`), plotly figures out.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.style import COLORS, base_layout, log_axis
from core.gpu.bench import ContextResult, MoeResult
from core.gpu.nvml import TelemetrySample

SERIES_COLORS = {"full attention": COLORS["attention"], "fixed state": COLORS["gated_delta"]}


def context_speed_figure(result: ContextResult, title: str = "") -> go.Figure:
    """Measured tokens/s (mean ± std) vs context depth, the roofline dashed, the spill point marked."""
    fig = go.Figure()
    for s in result.series:
        color = SERIES_COLORS.get(s.model, COLORS["measured"])
        depths = [p.depth for p in s.points]
        fig.add_trace(
            go.Scatter(
                x=depths,
                y=[p.tokens_per_s for p in s.points],
                mode="lines+markers",
                name=f"{s.model}: measured",
                line=dict(color=color, width=2.5),
                marker=dict(size=8),
                error_y=dict(
                    type="data", array=[p.std_tokens_per_s for p in s.points], visible=True, thickness=1.5
                ),
                customdata=[[p.percent_of_roofline, p.ms_per_token] for p in s.points],
                hovertemplate="depth %{x:,}<br>%{y:,.1f} tokens/s (%{customdata[1]:.2f} ms/token)"
                "<br>%{customdata[0]:.0f} % of the roofline<extra>" + s.model + "</extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=depths,
                y=[p.predicted_tokens_per_s for p in s.points],
                mode="lines",
                name=f"{s.model}: roofline",
                line=dict(color=color, width=1.5, dash="dash"),
                hovertemplate="depth %{x:,}<br>roofline %{y:,.0f} tokens/s<extra>" + s.model + "</extra>",
            )
        )
        if s.spill_position is not None and depths and s.spill_position <= max(depths):
            fig.add_vline(
                x=s.spill_position,
                line=dict(color=COLORS["warning"], dash="dot", width=1.5),
                annotation_text="cache stops fitting the budget",
                annotation_position="top left",
                annotation_font_color=COLORS["warning"],
            )
        if s.oom_depth is not None:
            y = s.points[-1].tokens_per_s if s.points else 1.0
            fig.add_trace(
                go.Scatter(
                    x=[s.oom_depth],
                    y=[y],
                    mode="markers+text",
                    name=f"{s.model}: out of memory",
                    marker=dict(symbol="x", size=14, color=COLORS["warning"]),
                    text=["out of memory"],
                    textposition="top center",
                    hovertemplate="out of memory at depth %{x:,}<extra></extra>",
                )
            )
    base_layout(
        fig, title, "context depth (tokens already in memory)", "tokens per second (log scale)", height=420
    )
    fig.update_yaxes(**log_axis(_y_values(fig)))
    fig.update_xaxes(rangemode="tozero")
    return fig


def moe_figure(result: MoeResult) -> go.Figure:
    """Three panels, dense vs MoE: tokens/s (± std), average board watts, joules per token (net of idle)."""
    names = [r.model for r in result.rows]
    colors = [COLORS["dense"] if r.model == "dense" else COLORS["moe"] for r in result.rows]
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=(
            "speed (tokens/s)",
            "average board power (W)",
            "energy per token, idle subtracted (J)",
        ),
    )
    fig.add_trace(
        go.Bar(
            x=names,
            y=[_num(r.tokens_per_s) for r in result.rows],
            marker_color=colors,
            showlegend=False,
            error_y=dict(type="data", array=[_num(r.std_tokens_per_s) for r in result.rows], visible=True),
            hovertemplate="%{x}: %{y:,.1f} tokens/s<extra></extra>",
        ),
        row=1,
        col=1,
    )
    watts = [r.avg_watts for r in result.rows]
    joules = [r.net_joules_per_token for r in result.rows]
    for col, values, unit in ((2, watts, "W"), (3, joules, "J/token")):
        if all(v is None for v in values):
            fig.add_annotation(
                text="no energy reading<br>(needs an NVIDIA GPU)",
                showarrow=False,
                xref=f"x{col} domain",
                yref=f"y{col} domain",
                x=0.5,
                y=0.5,
                font=dict(color=COLORS["predicted"]),
            )
            fig.add_trace(
                go.Bar(x=names, y=[0] * len(names), marker_color=colors, showlegend=False, hoverinfo="skip"),
                row=1,
                col=col,
            )
        else:
            fig.add_trace(
                go.Bar(
                    x=names,
                    y=[_num(v) for v in values],
                    marker_color=colors,
                    showlegend=False,
                    hovertemplate="%{x}: %{y:,.3g} " + unit + "<extra></extra>",
                ),
                row=1,
                col=col,
            )
    base_layout(fig, "", "", "", height=340)
    fig.update_yaxes(title_text="tokens per second", row=1, col=1)
    fig.update_yaxes(title_text="watts", row=1, col=2)
    fig.update_yaxes(title_text="joules per token", row=1, col=3)
    return fig


def telemetry_figure(samples: list[TelemetrySample]) -> go.Figure:
    """Power, utilisation and memory used over the last samples (seconds relative to the newest)."""
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=("board power (W)", "GPU busy (% of time a kernel ran)", "memory used (GiB)"),
    )
    t_end = samples[-1].t if samples else 0.0
    xs = [s.t - t_end for s in samples]
    rows = (
        (1, [s.power_w for s in samples], COLORS["warning"]),
        (2, [s.gpu_util_pct for s in samples], COLORS["measured"]),
        (
            3,
            [None if s.memory_used_bytes is None else s.memory_used_bytes / 1024**3 for s in samples],
            COLORS["attention"],
        ),
    )
    for row, ys, color in rows:
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines+markers",
                line=dict(color=color),
                marker=dict(size=4),
                showlegend=False,
                connectgaps=False,
            ),
            row=row,
            col=1,
        )
    base_layout(fig, "", "", "", height=480)
    fig.update_xaxes(title_text="seconds (0 = now)", row=3, col=1)
    fig.update_yaxes(title_text="W", row=1, col=1, rangemode="tozero")
    fig.update_yaxes(title_text="%", row=2, col=1, range=[0, 100])
    fig.update_yaxes(title_text="GiB", row=3, col=1, rangemode="tozero")
    return fig


def _y_values(fig: go.Figure) -> list[float]:
    """Every y value the traces draw (for the log axis ticks)."""
    return [y for trace in fig.data if trace.y is not None for y in trace.y if y is not None]


def _num(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def prediction_figure(
    prediction: dict[str, list[tuple[int, float]]], budgeted: bool, title: str = ""
) -> go.Figure:
    """Roofline only (no measurement yet): predicted tokens/s vs depth for each model kind."""
    fig = go.Figure()
    for model, points in prediction.items():
        color = SERIES_COLORS.get(model, COLORS["predicted"])
        label = f"{model}: roofline" + (" with the budget" if budgeted and model == "full attention" else "")
        fig.add_trace(
            go.Scatter(
                x=[d for d, _ in points],
                y=[v for _, v in points],
                mode="lines+markers",
                name=label,
                line=dict(color=color, dash="dash", width=2),
                marker=dict(size=6, symbol="circle-open"),
                hovertemplate="depth %{x:,}<br>at most %{y:,.0f} tokens/s<extra>" + model + "</extra>",
            )
        )
    base_layout(
        fig, title, "context depth (tokens already in memory)", "tokens per second (log scale)", height=380
    )
    fig.update_yaxes(**log_axis(_y_values(fig)))
    fig.update_xaxes(rangemode="tozero")
    return fig
