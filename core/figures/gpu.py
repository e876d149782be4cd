"""The Your GPU lesson's Engineer charts: speed vs context with the roofline, speed vs batch, dense vs MoE,
live telemetry (Story's two pictures: `core/figures/gpu_story.py`). Data in (results of
`core.gpu.suites.context_bench`, `batch_bench` and `moe_bench`, samples of `core.gpu.device.nvml`), figures out.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.style import COLORS, TITLE_MARGIN, base_layout, legend_below, two_lines
from core.gpu.device.nvml import TelemetrySample
from core.gpu.output.batch_words import ran
from core.gpu.output.report import percent
from core.gpu.suites.batch_bench import KINDS, PAIR_WORDS, BatchResult, BatchSeries
from core.gpu.suites.context_bench import ContextResult, Series
from core.gpu.suites.moe_bench import MoeResult
from core.i18n import N_, _
from core.units import format_si

# the benchmarks' model names (data: the JSON and the CLI keep them), translated where a chart shows them
MODEL_NAMES = (N_("full attention"), N_("fixed state"), N_("dense"), N_("experts (MoE)"))
_SERIES = [*KINDS.values(), *PAIR_WORDS.values()]  # the released pair's series drawn as the synthetic pair's
SERIES_COLORS = dict(zip(_SERIES, [COLORS["attention"], COLORS["gated_delta"]] * 2, strict=True))
SERIES_MARKERS = dict(zip(_SERIES, ["circle", "square"] * 2, strict=True))  # a second cue beside colour


def context_speed_figure(result: ContextResult, title: str = "") -> go.Figure:
    """Two panels over context depth: measured tokens/s (mean ± std) beside the dashed roofline, and
    measured ÷ roofline in %. A dotted line marks where the cache stops fitting the budget. On CUDA
    "measured" is the CUDA-graph figure and the eager one is drawn beside it, dotted."""
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        row_heights=[0.72, 0.28],
        vertical_spacing=0.06,
    )
    for s in result.series:
        color = SERIES_COLORS.get(s.model, COLORS["measured"])
        depths = [p.depth for p in s.points]
        measured = depth_line(
            s,
            _("measured"),
            [p.tokens_per_s for p in s.points],
            dict(color=color, width=2.5),
            _("%{y:,.1f} tokens/s (%{customdata[1]:.2f} ms/token)<br>%{customdata[0]:.0f} % of the roofline"),
            marker=dict(size=8, symbol=SERIES_MARKERS.get(s.model, "diamond")),
            error_y=dict(
                type="data", array=[p.std_tokens_per_s for p in s.points], visible=True, thickness=1.5
            ),
            customdata=[[p.percent_of_roofline, p.ms_per_token] for p in s.points],
        )
        roofline = depth_line(
            s,
            _("roofline"),
            [p.predicted_tokens_per_s for p in s.points],
            dict(color=color, width=1.5, dash="dash"),
            _("roofline %{y:,.0f} tokens/s"),
            mode="lines",
        )
        share = depth_line(
            s,
            _("% of roofline"),
            [p.percent_of_roofline for p in s.points],
            dict(color=color, width=1.5),
            _("%{y:.0f} % of the roofline"),
            marker=dict(size=6),
            showlegend=False,
        )
        fig.add_trace(measured, row=1, col=1)
        if any(p.graphed_tokens_per_s is not None for p in s.points):  # CUDA: the eager figure beside
            eager = depth_line(
                s,
                _("eager (no CUDA graph)"),
                [p.eager_tokens_per_s for p in s.points],
                dict(color=color, width=1, dash="dot"),
                _("eager %{y:,.1f} tokens/s: launched step by step, Python and launch overhead included"),
                marker=dict(size=5, symbol="circle-open"),
            )
            fig.add_trace(eager, row=1, col=1)
        fig.add_trace(roofline, row=1, col=1)
        fig.add_trace(share, row=2, col=1)
        if s.spill_position is not None and depths and s.spill_position <= max(depths):
            fig.add_vline(
                x=s.spill_position,
                row="all",
                col=1,
                line=dict(color=COLORS["warning"], dash="dot", width=1.5),
            )
            fig.add_annotation(
                x=s.spill_position,
                y=1,
                xref="x",
                yref="y domain",
                text=_("cache stops fitting the budget<br>(position {position:,})").format(
                    position=s.spill_position
                ),
                showarrow=False,
                xanchor="left",
                yanchor="top",
                align="left",
                xshift=4,
                font=dict(color=COLORS["warning"], size=12),
                bgcolor="rgba(255, 255, 255, 0.85)",  # readable over the roofline it crosses
            )
        if s.oom_depth is not None:
            y = s.points[-1].tokens_per_s if s.points else 1.0
            fig.add_trace(
                go.Scatter(
                    x=[s.oom_depth],
                    y=[y],
                    mode="markers+text",
                    name=_("{model}: out of memory").format(model=_(s.model)),
                    marker=dict(symbol="x", size=14, color=COLORS["warning"]),
                    text=[_("out of memory")],
                    textposition="top center",
                    hovertemplate=_("out of memory at depth %{x:,}") + "<extra></extra>",
                ),
                row=1,
                col=1,
            )
    base_layout(fig, title, "", "", height=520)
    speeds = [y for t in fig.data if t.yaxis == "y" and t.y is not None for y in t.y if y is not None]
    fig.update_yaxes(title_text=_("tokens per second<br>(log scale)"), row=1, col=1, **_log_axis(speeds))
    percents = [y for t in fig.data if t.yaxis == "y2" and t.y is not None for y in t.y if y is not None]
    fig.update_yaxes(
        title_text=_("% of<br>roofline"),
        row=2,
        col=1,
        range=[0, max([100.0, *percents]) * 1.08],
        ticksuffix=_(" %"),  # Japanese: '%' against the number
    )
    fig.update_xaxes(rangemode="tozero")
    fig.update_xaxes(title_text=_("depth d (tokens in memory)"), row=2, col=1)
    return legend_below(fig)


def depth_line(series: Series, what: str, ys: list[float], line: dict, hover: str, **extra) -> go.Scatter:
    """One of a model's lines over context depth, named '<model>: <what>' and grouped by model."""
    props = dict(
        mode="lines+markers",
        name=_("{model}: {what}").format(model=_(series.model), what=what),
        legendgroup=series.model,
        line=line,
        hovertemplate=_("depth %{x:,}") + "<br>" + hover + "<extra>" + _(series.model) + "</extra>",
    )
    return go.Scatter(x=[p.depth for p in series.points], y=ys, **(props | extra))


BATCH_PANELS = ((N_("in total"), "tokens_per_s_total"), (N_("per sequence"), "tokens_per_s_per_sequence"))
MARK_REACH = 4  # a largest fitting batch up to 4× the largest timed one widens the axis to show it


def batch_figure(result: BatchResult, title: str = "") -> go.Figure:
    """Two panels over batch (log scale): tokens/s of all sequences together, and of each one, for
    full attention and the fixed state at the sweep's depth. A dotted vertical line marks the largest
    batch of a model that fits the free memory, and a note above the plot names it (or says it lies
    past the chart's right edge)."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.6, 0.4], vertical_spacing=0.08)
    timed = sorted({p.batch for s in result.series for p in s.points})
    widest = max(timed, default=1)
    reach = max([widest, *(s.max_batch for s in result.series if 0 < s.max_batch <= MARK_REACH * widest)])
    notes: list[str] = []
    for s in result.series:
        points = sorted(ran(s).values(), key=lambda p: p.batch)
        for row, (what, field_name) in enumerate(BATCH_PANELS, 1):
            fig.add_trace(
                go.Scatter(
                    x=[p.batch for p in points],
                    y=[getattr(p, field_name) for p in points],
                    mode="lines+markers",
                    name=_("{model}: {what}").format(model=_(s.model), what=_(what)),
                    legendgroup=s.model,
                    line=dict(
                        color=SERIES_COLORS.get(s.model, COLORS["measured"]), width=2.5 if row == 1 else 1.5
                    ),
                    marker=dict(size=8 if row == 1 else 6, symbol=SERIES_MARKERS.get(s.model, "diamond")),
                    hovertemplate=_("batch %{x}<br>%{y:,.1f} tokens/s {what}").replace("{what}", _(what))
                    + f"<extra>{_(s.model)}</extra>",
                ),
                row=row,
                col=1,
            )
        notes.append(_mark_largest_batch(fig, s, reach))
    base_layout(fig, title, "", "", height=540)
    fig.add_annotation(  # above the plot, where it covers no point (inside it covered batch 1 on a phone)
        text="<br>".join(notes), x=0, y=1, xref="paper", yref="paper", xanchor="left", yanchor="bottom",
        xshift=-50, yshift=6, align="left", showarrow=False, font=dict(size=12),
    )  # fmt: skip
    for row, (what, field_name) in enumerate(BATCH_PANELS, 1):
        values = [getattr(p, field_name) for s in result.series for p in ran(s).values()]
        fig.update_yaxes(
            title_text=_("tokens per second<br>{what} (log)").format(what=_(what)),
            row=row,
            col=1,
            **_log_axis(values),
        )
    ticks = sorted({*timed, *(s.max_batch for s in result.series if 0 < s.max_batch <= reach)})
    fig.update_xaxes(
        type="log",
        tickvals=ticks,
        ticktext=[f"{t:,}" for t in ticks],
        range=[math.log10(0.8), math.log10(reach * 1.25)],
    )
    fig.update_xaxes(title_text=_("batch (sequences, log scale)"), row=2, col=1)
    legend_below(fig)
    fig.update_layout(margin=dict(t=(TITLE_MARGIN if title else 20) + 16 * len(notes) + 8))
    return fig


def _mark_largest_batch(fig: go.Figure, series: BatchSeries, reach: int) -> str:
    """A dotted vertical line through both panels at the largest batch that fits, when it lies within
    `reach`; returns the note that names it (or says it lies past the chart, or that none fits)."""
    n = series.max_batch
    if n == 0:
        return _("{model}: not even one fits").format(model=_(series.model))
    if n > reach:
        return _("{model}: {n:,} fit (past the right edge)").format(model=_(series.model), n=n)
    fig.add_shape(  # one line through both panels
        type="line", x0=n, x1=n, xref="x", y0=0, y1=1, yref="paper",
        line=dict(color=SERIES_COLORS.get(series.model, COLORS["measured"]), dash="dot", width=1.5),
    )  # fmt: skip
    return _("{model}: at most {n:,} fit (dotted line)").format(model=_(series.model), n=n)


def moe_figure(result: MoeResult, energy: bool = True) -> go.Figure:
    """Dense vs MoE: tokens/s (mean ± std) beside each one's roofline; with an energy reading (and
    `energy`), two more panels: average board watts and joules per token net of idle. Without one, the
    speed panel alone (`moe_energy_figure` then draws the energy on its own, for a narrow screen)."""
    names = [_(r.model) for r in result.rows]
    colors = [COLORS["dense"] if r.model == "dense" else COLORS["moe"] for r in result.rows]
    watts = [r.avg_watts for r in result.rows]
    joules = [r.net_joules_per_token for r in result.rows]
    has_energy = energy and any(v is not None for v in watts + joules)
    if has_energy:
        fig = make_subplots(
            rows=1,
            cols=3,
            column_widths=[0.44, 0.28, 0.28],
            horizontal_spacing=0.1,
            subplot_titles=(
                _("speed: measured vs roofline"),
                _("average GPU power"),
                _("energy per token, idle subtracted"),
            ),
        )
    else:
        fig = make_subplots(rows=1, cols=1)
    measured = [number_or_none(r.tokens_per_s) for r in result.rows]
    roofline = [number_or_none(r.predicted_tokens_per_s) for r in result.rows]
    fig.add_trace(
        go.Bar(
            x=names,
            y=measured,
            name=_("measured (mean ± 1 std)"),
            marker_color=colors,
            error_y=dict(
                type="data", array=[number_or_none(r.std_tokens_per_s) for r in result.rows], visible=True
            ),
            hovertemplate=_("%{x}: %{y:,.1f} tokens/s measured") + "<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Bar(
            x=names,
            y=roofline,
            name=_("roofline (bandwidth bound)"),
            marker=dict(color="white", line=dict(color=COLORS["predicted"], width=2), pattern_shape="/"),
            marker_pattern_fgcolor=COLORS["predicted"],
            hovertemplate=_("%{x}: at most %{y:,.0f} tokens/s") + "<extra>" + _("roofline") + "</extra>",
        ),
        row=1,
        col=1,
    )
    if has_energy:
        _energy_bars(fig, names, colors, ((watts, "W"), (joules, _("J/token"))), first_col=2)
    base_layout(fig, "", "", "", height=380)
    fig.update_layout(barmode="group", bargap=0.45, bargroupgap=0.06)
    fig.update_yaxes(
        title_text=_("tokens per second (log scale)"), row=1, col=1, **_log_axis([*measured, *roofline])
    )
    labels = [  # each model's share of its roofline, under its name
        f"{name}<br><span style='font-size:12px'>{_percent_label(m, r)}</span>"
        for name, m, r in zip(names, measured, roofline, strict=True)
    ]
    fig.update_xaxes(tickvals=names, ticktext=labels, row=1, col=1)
    if has_energy:
        fig.update_yaxes(title_text=_("watts (W)"), row=1, col=2, rangemode="tozero")
        fig.update_yaxes(title_text=_("joules per token (J)"), row=1, col=3, rangemode="tozero")
    return legend_below(fig, y=-0.2, bottom=100)  # under the two-line tick labels


def _energy_bars(fig: go.Figure, names: list[str], colors: list[str], panels, first_col: int) -> None:
    """One bar panel per (values, unit) in `panels`, side by side from column `first_col` of row 1:
    dense and MoE watts, joules per token (a missing value stays a gap)."""
    for col, (values, unit) in enumerate(panels, first_col):
        fig.add_trace(
            go.Bar(
                x=names,
                y=[number_or_none(v) for v in values],
                marker_color=colors,
                showlegend=False,
                hovertemplate=_("{label}: {value}").format(label="%{x}", value="%{y:,.3g} " + unit)
                + "<extra></extra>",
            ),
            row=1,
            col=col,
        )


def moe_energy_figure(result: MoeResult) -> go.Figure:
    """Dense vs MoE, power and energy alone: average board watts and joules per token net of idle, two
    narrow panels that a phone can read (beside the speed panel they were three)."""
    names = [_(r.model) for r in result.rows]
    colors = [COLORS["dense"] if r.model == "dense" else COLORS["moe"] for r in result.rows]
    titles = (two_lines(_("power")), two_lines(_("energy net of idle")))
    # wide spacing: room for the second panel's axis title on a phone
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.3, subplot_titles=titles)
    panels = (
        ([r.avg_watts for r in result.rows], "W"),
        ([r.net_joules_per_token for r in result.rows], _("J/token")),
    )
    _energy_bars(fig, names, colors, panels, first_col=1)
    base_layout(fig, "", "", "", height=340)
    fig.update_layout(bargap=0.35)
    fig.update_yaxes(title_text=_("average watts (W)"), row=1, col=1, rangemode="tozero")
    fig.update_yaxes(title_text=_("joules per token (J)"), row=1, col=2, rangemode="tozero")
    return fig


def _percent_label(measured: float | None, roofline: float | None) -> str:
    if not measured or not roofline:
        return ""
    return _("{percent} of roofline").format(
        percent=percent(measured, roofline)
    )  # '0.17 %', not '0 %', far below it


def telemetry_figure(samples: list[TelemetrySample]) -> go.Figure:
    """Power, utilisation and memory used over the last samples (seconds relative to the newest)."""
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=(_("GPU power (W)"), _("GPU busy (% of time a kernel ran)"), _("memory used (GiB)")),
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
    fig.update_xaxes(title_text=_("seconds (0 = now)"), row=3, col=1)
    fig.update_yaxes(title_text="W", row=1, col=1, rangemode="tozero")
    fig.update_yaxes(title_text="%", row=2, col=1, range=[0, 100])
    fig.update_yaxes(title_text="GiB", row=3, col=1, rangemode="tozero")
    return fig


def _y_values(fig: go.Figure) -> list[float]:
    """Every y value the traces draw (for the log axis ticks)."""
    return [y for trace in fig.data if trace.y is not None for y in trace.y if y is not None]


def number_or_none(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def prediction_figure(
    prediction: dict[str, list[tuple[int, float]]], budgeted: bool, title: str = ""
) -> go.Figure:
    """Roofline only (no measurement yet): predicted tokens/s vs depth for each model kind."""
    fig = go.Figure()
    for model, points in prediction.items():
        color = SERIES_COLORS.get(model, COLORS["predicted"])
        label = (
            _("{model}: roofline with the budget")
            if budgeted and model == "full attention"
            else _("{model}: roofline")
        ).format(model=_(model))
        fig.add_trace(
            go.Scatter(
                x=[d for d, _v in points],
                y=[v for _d, v in points],
                mode="lines+markers",
                name=label,
                line=dict(color=color, dash="dash", width=2),
                marker=dict(size=6, symbol="circle-open"),
                hovertemplate=_("depth %{x:,}<br>at most %{y:,.0f} tokens/s")
                + "<extra>"
                + _(model)
                + "</extra>",
            )
        )
    base_layout(fig, title, _("depth d (tokens in memory)"), _("tokens per second (log scale)"), height=400)
    fig.update_yaxes(**_log_axis(_y_values(fig)))
    fig.update_xaxes(rangemode="tozero")
    return legend_below(fig)


def _log_axis(values: list[float | None]) -> dict:
    """A log axis with 1-2-5 ticks that bracket the data, so every point has a labelled tick above and
    below it (falls back to powers of ten when that would be more than nine ticks)."""
    positive = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    if not positive:
        return dict(type="log")
    lo, hi = min(positive), max(positive)
    for mantissas in ((1, 2, 5), (1,)):
        steps = [
            m * 10.0**k
            for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
            for m in mantissas
        ]
        below = max(t for t in steps if t <= lo * 1.0001)
        above = min(t for t in steps if t >= hi / 1.0001)
        ticks = [t for t in steps if below <= t <= above]
        if len(ticks) <= 9:
            break
    return dict(
        type="log",
        tickvals=ticks,
        ticktext=[format_si(t) for t in ticks],
        range=[math.log10(below) - 0.04, math.log10(above) + 0.04],
    )
