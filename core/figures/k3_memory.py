"""Kimi K3's memory charts: the real K3 per conversation, mini-K3 per layer and as tokens arrive."""

from __future__ import annotations

import plotly.graph_objects as go

from core.figures.figure_dict import patched
from core.figures.style import (
    COLORS,
    bar_pattern,
    base_layout,
    dash_of,
    label_of,
    legend_below,
    marker_of,
)
from core.i18n import _, ngettext
from core.models.mini_k3_trace import RunSummary
from core.plan.attention_twin import MEMORY_KINDS, MemoryAtContext
from core.specs import ModelSpec
from core.units import format_bytes, format_context

GIB = 1024**3


def memory_at_context_figure(spec: ModelSpec, rows: list[MemoryAtContext]) -> go.Figure:
    """Grouped bars per context length: hybrid (cache + fixed boards, stacked) vs all-attention."""
    x = [_("{context} tokens").format(context=format_context(r.context)) for r in rows]
    boards = [r.hybrid_state / GIB for r in rows]
    bars = (  # (name, colour, group, GiB, stacked on, text above, what the hover calls it)
        (_("K3: fixed state, {n} KDA layers").format(n=spec.num_linear_layers), "kda", "hybrid", boards, None, None,
         _("fixed state")),
        (_("K3: growing MLA cache ({n} layers)").format(n=spec.num_full_attention_layers), "mla", "hybrid",
         [r.hybrid_cache / GIB for r in rows], boards, [format_bytes(r.hybrid_total) for r in rows], _("cache")),
        (_("same width, all {n} layers MLA").format(n=spec.num_layers), "predicted", "twin",
         [r.twin_cache / GIB for r in rows], None, [format_bytes(r.twin_cache) for r in rows], _("all-MLA cache")),
    )  # fmt: skip
    fig = go.Figure()
    for name, color, group, y, base, text, what in bars:
        extra = {} if text is None else dict(text=text, textposition="outside")
        fig.add_bar(
            x=x,
            y=y,
            name=name,
            marker_color=COLORS[color],
            marker_pattern=bar_pattern(color),  # the boards hatched, so not told apart by colour alone
            offsetgroup=group,
            **({} if base is None else dict(base=base)),
            **extra,
            hovertemplate="%{x}<br>"
            + _("{label}: {value}").format(label=what, value="%{y:.2f} GiB")
            + "<extra></extra>",
        )
    top = max(max(r.twin_cache, r.hybrid_total) for r in rows) / GIB
    base_layout(
        fig,
        title=_("{model}: memory per conversation").format(model=spec.name),
        x_title=_("context length"),
        y_title=_("memory per sequence (GiB)"),
        height=380,
    )
    fig.update_yaxes(range=[0, top * 1.18])
    fig.update_layout(barmode="group")
    legend_below(fig, y=-0.3, bottom=130, grow=80)
    return fig


# ---------------------------------------------------------------------------------------------
# Kimi K3: mini-K3 stepping
# ---------------------------------------------------------------------------------------------


def _layer_memory_bars(run: RunSummary, step: int) -> list[dict]:
    """Per kind: the bytes each of its layers holds after `step` (1-based) and their labels."""
    memory = run.memory_bytes[step - 1]
    bars = []
    for kind in MEMORY_KINDS:
        idx = run.layers_of(kind)
        bars.append({"y": [int(memory[i]) for i in idx], "text": [format_bytes(memory[i]) for i in idx]})
    return bars


def _layer_memory_title(step: int) -> str:
    return ngettext("Memory per layer after {n:,} token", "Memory per layer after {n:,} tokens", step).format(
        n=step
    )


def layer_memory_step(base: dict, run: RunSummary, step: int) -> dict:
    """`layer_memory_figure` at another step, from that figure's dict (same run)."""
    bars = dict(enumerate(_layer_memory_bars(run, step)))
    return patched(base, bars, {"title": {"text": _layer_memory_title(step)}})


def layer_memory_figure(run: RunSummary, step: int) -> go.Figure:
    """Bars per layer: bytes of memory held after `step` (1-based); y range fixed to the run's end."""
    names = [_("KDA boards (one per head)") if k == "kda" else _("MLA latent cache") for k in run.kinds]
    bars = _layer_memory_bars(run, step)
    fig = go.Figure()
    for kind, bar in zip(MEMORY_KINDS, bars, strict=True):
        idx = run.layers_of(kind)
        fig.add_bar(
            x=[i + 1 for i in idx],
            y=bar["y"],
            name=(_("{kind} (fixed boards)") if kind == "kda" else _("{kind} (grows per token)")).format(
                kind=label_of(kind)
            ),
            marker_color=COLORS[kind],
            marker_pattern=bar_pattern(kind),
            text=bar["text"],
            textposition="outside",
            # upright and kept at full size: flat, or shrunk to the bar's width, a phone dropped the labels
            textangle=-90,
            constraintext="none",
            textfont=dict(size=11),
            cliponaxis=False,
            customdata=[names[i] for i in idx],
            hovertemplate=_("layer {layer}: {what}<br>{bytes} bytes").format(
                layer="%{x}", what="%{customdata}", bytes="%{y:,}"
            )
            + "<extra></extra>",
        )
    top = float(run.memory_bytes.max())
    base_layout(
        fig,
        title=_layer_memory_title(step),
        x_title=_("layer"),
        y_title=_("bytes held (fp32)"),
        height=360,
    )
    fig.update_yaxes(range=[0, top * 1.4])  # headroom for the upright labels
    fig.update_xaxes(tickmode="linear", dtick=1)
    legend_below(fig, y=-0.3, bottom=130, grow=80)
    return fig


def memory_over_time_step(base: dict, run: RunSummary, step: int) -> dict:
    """`memory_over_time_figure` at another step, from that figure's dict (same run)."""
    steps, boards, cache = run.memory_totals()
    lines = {0: {"x": steps[:step], "y": boards[:step]}, 1: {"x": steps[:step], "y": cache[:step]}}
    return patched(base, lines)


def memory_over_time_figure(run: RunSummary, step: int) -> go.Figure:
    """Total bytes in boards vs in caches as tokens arrive, up to `step`; axes fixed to the whole run."""
    steps, boards, cache = run.memory_totals()
    fig = go.Figure()
    names = {"kda": _("KDA boards ({n} layers)"), "mla": _("MLA caches ({n} layers)")}
    for kind, y in (("kda", boards), ("mla", cache)):
        fig.add_scatter(
            x=steps[:step],
            y=y[:step],
            name=names[kind].format(n=len(run.layers_of(kind))),
            mode="lines+markers",
            line=dict(color=COLORS[kind], width=3, dash=dash_of(kind)),
            marker=dict(symbol=marker_of(kind), size=7, maxdisplayed=12),
        )
    base_layout(
        fig,
        title=_("Memory held as tokens arrive"),  # short, to fit a phone; the page's text says what to see
        x_title=_("tokens read"),
        y_title=_("bytes held (fp32)"),
        height=330,
    )
    fig.update_xaxes(range=[0, len(steps) + 1])
    fig.update_yaxes(range=[0, float(max(boards.max(), cache.max())) * 1.1])
    legend_below(fig, y=-0.3, bottom=130, grow=80)
    return fig
