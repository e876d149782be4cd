"""Whole-run line charts of generation with and without a KV cache (the GPT-2 and KV cache pages): work and time per
step, the cache's bytes, and the likeliest next tokens.

Data in (lists taken from `core.generation.RunSeries`), plotly figure out. Axes are fixed by the
whole precomputed run, not the current step, so that stepping fills a frame instead of rescaling
it; a `*_step` function moves a built figure's dict to another step (core/figures/figure_dict.py).
The step grid is in core/figures/recompute_grid.py, the cache's heatmaps in
core/figures/cache_pictures.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from core.figures.figure_dict import patched
from core.figures.style import COLORS, base_layout
from core.i18n import _
from core.tokenizer import token_label
from core.units import format_bytes

Label = Callable[[int], str]  # token id → short readable name (core.tokenizer.token_label for bytes)
KIB = 1024  # the cache chart's unit, as the page's figures (format_bytes) say it


def _line_and_dots(line: tuple, dots: tuple) -> go.Figure:
    """A figure with a predicted line (x, y, name, line style) and the counted values as dots (x, y, name, colour)."""
    fig = go.Figure()
    x, y, name, style = line
    fig.add_scatter(x=x, y=y, mode="lines", name=name, line=style)
    x, y, name, color = dots
    fig.add_scatter(x=x, y=y, mode="markers", name=name, marker=dict(color=color, size=6))
    return fig


def work_figure(
    steps: list[int], measured: list[int], formula: list[int], cached: list[int] | None = None, shown: int = 0
) -> go.Figure:
    """Cumulative positions run through the model after each step: counted from the traces
    (markers) against the closed formula (line); optionally the cached model beside it."""
    fig = _line_and_dots(
        (steps, formula, _("formula n(n+1)/2 − (p−1)p/2"), dict(color=COLORS["predicted"], width=2)),
        (steps[:shown], measured[:shown], _("counted from the model's steps"), COLORS["warning"]),
    )
    if cached is not None:
        fig.add_scatter(
            x=steps[:shown],
            y=cached[:shown],
            mode="lines+markers",
            name=_("with a KV cache"),
            line=dict(color=COLORS["attention"]),
            marker=dict(size=4),
        )
    base_layout(fig, "", _("generation step"), _("positions computed so far (total)"), height=320)
    fig.update_xaxes(range=[0, max(steps, default=1) + 1])
    fig.update_yaxes(range=[0, max(formula + measured, default=1) * 1.05])
    return fig


def work_step(
    base: dict, steps: list[int], measured: list[int], cached: list[int] | None = None, shown: int = 0
) -> dict:
    """`work_figure` at another step, from that figure's dict (only the counted dots move)."""
    traces = {1: {"x": steps[:shown], "y": measured[:shown]}}
    if cached is not None:
        traces[2] = {"x": steps[:shown], "y": cached[:shown]}
    return patched(base, traces)


def running_median(values: list[float], window: int = 7) -> list[float]:
    """Median of each value and its neighbours: keeps the trend, drops one-off spikes
    (another program taking the CPU for a moment)."""
    data = np.asarray(values, dtype=float)
    half = window // 2
    return [float(np.median(data[max(0, i - half) : i + half + 1])) for i in range(len(data))]


def ms_per_token_figure(
    text_lengths: list[int],
    uncached_ms: list[float],
    cached_ms: list[float] | None = None,
    shown: int = 0,
    unit: str = "byte",
) -> go.Figure:
    """Measured wall time of each step against the length of the text it read (in `unit`s: bytes
    for the tiny model, tokens for a checkpoint): every step as a faint marker, the running median
    as the line. The y axis is fixed by the medians, so a rare spike may leave the top of the chart
    (its value is in the hover)."""
    fig = go.Figure()
    # (name, times, colour, dash, marker): red/blue also differ by dash and marker, not colour alone
    runs = [(_("no cache"), uncached_ms, COLORS["warning"], "solid", "x")]
    if cached_ms is not None:
        runs.append((_("with KV cache"), cached_ms, COLORS["attention"], "dash", "circle"))
    unit = _(unit)
    top = 1.0
    for name, ms, color, dash, symbol in runs:
        median = running_median(ms)
        top = max(top, max(median, default=1.0))
        fig.add_scatter(
            x=text_lengths[:shown],
            y=ms[:shown],
            mode="markers",
            name=_("{name}: each step").format(name=name),
            marker=dict(color=color, size=5, opacity=0.35, symbol=symbol),
            hovertemplate=_("%{{x}} {unit}s: %{{y:.2f}} ms").format(unit=unit) + "<extra></extra>",
        )
        fig.add_scatter(
            x=text_lengths[:shown],
            y=median[:shown],
            mode="lines",
            name=_("{name}: running median").format(name=name),
            line=dict(color=color, width=3, dash=dash),
            hovertemplate=_("%{{x}} {unit}s: median %{{y:.2f}} ms").format(unit=unit) + "<extra></extra>",
        )
    base_layout(
        fig,
        "",
        _("length of the text read ({unit}s)").format(unit=unit),
        _("time for this step (ms)"),
        height=320,
    )
    fig.update_xaxes(range=[0, max(text_lengths, default=1) + 1])
    fig.update_yaxes(range=[0, top * 1.6])
    return fig


def ms_per_token_step(
    base: dict,
    text_lengths: list[int],
    uncached_ms: list[float],
    cached_ms: list[float] | None = None,
    shown: int = 0,
) -> dict:
    """`ms_per_token_figure` at another step, from that figure's dict (the axes stay; the dots and
    running medians are cut at `shown`)."""
    runs = [uncached_ms] + ([cached_ms] if cached_ms is not None else [])
    traces = {}
    for i, ms in enumerate(runs):
        traces[2 * i] = {"x": text_lengths[:shown], "y": ms[:shown]}
        traces[2 * i + 1] = {"x": text_lengths[:shown], "y": running_median(ms)[:shown]}
    return patched(base, traces)


def cache_bytes_figure(
    text_lengths: list[int], cache_bytes: list[int], shown: int, bytes_per_token: int, unit: str = "byte"
) -> go.Figure:
    """Memory held by the KV cache after each step, in KiB as the page's figures say it: a straight
    line, one row per byte."""
    predicted = [n * bytes_per_token / KIB for n in text_lengths]
    held = [b / KIB for b in cache_bytes]
    fig = _line_and_dots(
        (
            text_lengths,
            predicted,
            _("{size} × {unit}s read").format(size=format_bytes(bytes_per_token), unit=_(unit)),
            dict(color=COLORS["predicted"], dash="dot"),
        ),
        (text_lengths[:shown], held[:shown], _("cache held (from the model)"), COLORS["attention"]),
    )
    base_layout(fig, "", _("{unit}s of text read").format(unit=_(unit)), _("KV cache held (KiB)"), height=300)
    fig.update_xaxes(range=[0, max(text_lengths, default=1) + 1])
    fig.update_yaxes(range=[0, max(held, default=1) * 1.05])
    return fig


def top_next_step(base: dict, top: list[tuple[int, float]], label: Label = token_label) -> dict:
    """`top_next_figure` for another step's top tokens (as many as the base's), from that figure's dict."""
    probs = [p for _token, p in top]
    return patched(
        base, {0: {"x": probs, "y": [f"{label(t)}" for t, _p in top], "text": [f"{p:.1%}" for p in probs]}}
    )


def top_next_figure(top: list[tuple[int, float]], label: Label = token_label) -> go.Figure:
    """The likeliest next tokens at one step as horizontal bars (probability 0–1, likeliest on top)."""
    names = [f"{label(t)}" for t, _p in top]
    probs = [p for _token, p in top]
    fig = go.Figure(
        go.Bar(
            x=probs,
            y=names,
            orientation="h",
            marker_color=COLORS["attention"],
            text=[f"{p:.1%}" for p in probs],
            # inside the bar's end where it fits (a sure 100.0% beside its bar was cut at the chart's
            # edge on a phone), beside a short bar
            textposition="auto",
            insidetextanchor="end",
            insidetextfont=dict(color="#ffffff"),
            cliponaxis=False,
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
        )
    )
    base_layout(fig, "", _("probability of coming next"), "", height=60 + 30 * max(1, len(top)))
    fig.update_xaxes(range=[0, 1.15], showgrid=False)
    fig.update_yaxes(autorange="reversed", type="category", showgrid=False)
    return fig
