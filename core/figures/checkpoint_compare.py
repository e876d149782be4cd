"""Two or more checkpoints the reader benchmarked, side by side over depth: speed, and memory kept.

The GPU page's "your own checkpoint" section draws these once a dense model (Qwen3: attention in
every layer) and a hybrid (Qwen3.5: fixed boards in three layers of four) have both been run on the
same card — the article's "speed against context" with released models. Data in (plain numbers per
run), figure out; the runs come from core.gpu.suites.checkpoint_bench.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from core.figures.style import COLORS, base_layout, legend_below
from core.i18n import _

MIB = 1024**2


@dataclass(frozen=True)
class RunSeries:
    """One benchmarked checkpoint: its name, whether it keeps boards, and per depth what was measured."""

    name: str
    hybrid: bool  # some layers keep a fixed board instead of a growing cache
    depths: list[int]
    tokens_per_s: list[float]
    cache_bytes: list[int]  # the KV cache at each depth, counted on the real tensors
    state_bytes: list[int]  # the boards and convolution windows at each depth (0 for a dense model)

    @property
    def label(self) -> str:
        kind = _("hybrid: boards + cache") if self.hybrid else _("dense: cache in every layer")
        return _("{name} ({kind})").format(name=self.name, kind=kind)


def _style(run: RunSeries, i: int) -> dict:
    color = COLORS["hybrid"] if run.hybrid else COLORS["attention"]
    dash = "dashdot" if run.hybrid else "solid"
    return dict(line=dict(color=color, width=2.5, dash=dash if i < 2 else "dot"), marker=dict(size=8))


def speed_by_depth(runs: list[RunSeries]) -> go.Figure:
    """Measured decode tokens/s against depth, one line per checkpoint."""
    fig = go.Figure()
    for i, run in enumerate(runs):
        fig.add_trace(
            go.Scatter(
                x=run.depths,
                y=run.tokens_per_s,
                mode="lines+markers",
                name=run.label,
                hovertemplate=_("depth %{x:,}<br>%{y:,.1f} tokens/s") + "<extra></extra>",
                **_style(run, i),
            )
        )
    base_layout(
        fig, "", _("depth d (tokens already read)"), _("decode speed (tokens per second)"), height=380
    )
    fig.update_xaxes(rangemode="tozero")
    fig.update_yaxes(rangemode="tozero")
    return legend_below(fig, y=-0.2, bottom=100)


def memory_by_depth(runs: list[RunSeries]) -> go.Figure:
    """What one sequence holds at each depth (KV cache + fixed boards), in MiB, one line per checkpoint."""
    fig = go.Figure()
    for i, run in enumerate(runs):
        held = [(c + s) / MIB for c, s in zip(run.cache_bytes, run.state_bytes, strict=True)]
        fig.add_trace(
            go.Scatter(
                x=run.depths,
                y=held,
                mode="lines+markers",
                name=run.label,
                customdata=[s / MIB for s in run.state_bytes],
                hovertemplate=_("depth %{x:,}<br>%{y:,.3f} MiB held (%{customdata:,.3f} MiB of it boards)")
                + "<extra></extra>",
                **_style(run, i),
            )
        )
    base_layout(fig, "", _("depth d (tokens already read)"), _("memory one sequence holds (MiB)"), height=380)
    fig.update_xaxes(rangemode="tozero")
    fig.update_yaxes(rangemode="tozero")
    return legend_below(fig, y=-0.2, bottom=100)
