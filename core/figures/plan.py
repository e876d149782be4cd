"""The planner's pictures: where the memory goes, and the decode ceiling as the context grows.

Data in (`core.plan.Plan` objects), figure out; no Streamlit.
"""

from __future__ import annotations

from html import escape

import plotly.graph_objects as go

from core.figures.style import COLORS, base_layout, marker_line
from core.i18n import N_, _, list_of
from core.plan.export import bound_words
from core.plan.headline import ALL_REDUCE_COUNTED, window_words
from core.plan.plan import Plan
from core.units import format_bytes, format_context

GiB = 1024**3

_PARTS = (
    ("weights", N_("weights"), COLORS["dense"]),
    ("reserve", N_("reserve (runtime + activations)"), COLORS["predicted"]),
    ("kv", N_("KV cache"), COLORS["attention"]),
    ("state", N_("fixed recurrent state"), COLORS["hybrid"]),
)  # the legend's names, marked here and translated when a figure is drawn


def memory_figure(plan: Plan) -> go.Figure:
    """One stacked bar of what the plan needs, against the usable memory of the chosen GPUs."""
    fig = go.Figure()
    needed = _("needed")  # the bar's one category (its tick label is hidden)
    for attr, part, color in _PARTS:
        value, label = getattr(plan, attr), _(part)
        fig.add_bar(
            y=[needed],
            x=[value / GiB],
            orientation="h",
            name=label,
            marker_color=color,
            hovertemplate=_("{label}: {value}").format(label=label, value=format_bytes(value))
            + "<extra></extra>",
        )
    usable = plan.usable / GiB
    # the usable line as a trace (so it has a legend entry and hover), spanning the one bar
    fig.add_scatter(
        x=[usable, usable],
        y=[needed, needed],
        mode="markers",
        name=_("usable: {size}").format(size=format_bytes(plan.usable)),
        marker=dict(color=COLORS["warning"], symbol="line-ns-open", size=60, line=dict(width=3)),
        hovertemplate=_("usable memory: {size}").format(size=format_bytes(plan.usable)) + "<extra></extra>",
    )
    verdict = _("fits") if plan.fits else _("does not fit")
    window = window_words(plan.inputs.context, plan.trained_context)
    title = _("{model}: {batch} × {context} tokens ({window}) on {gpus} × {card} — {verdict}").format(
        model=escape(plan.model_name),
        batch=plan.inputs.batch,
        context=format_context(plan.inputs.context),
        window=window,
        gpus=plan.inputs.gpus,
        card=plan.card_name,
        verdict=verdict,
    )
    base_layout(fig, title=title, x_title=_("memory (GiB)"), height=300)
    fig.update_layout(
        barmode="stack", legend=dict(orientation="h", y=-0.45, yanchor="top", x=0, xanchor="left")
    )
    fig.update_yaxes(showticklabels=False)
    return fig


def context_figure(plans: list[Plan]) -> go.Figure:
    """Decode ceiling (all sequences) against context length; points that do not fit are left out.
    A dashed line marks the trained window, where the sweep reaches it: past it the speeds are what
    memory would allow, not contexts the model was trained for."""
    if not plans:
        raise ValueError("need at least one plan")
    xs = [p.inputs.context for p in plans]
    fits = [p for p in plans if p.decode_tokens_per_s is not None]
    fig = go.Figure()
    fig.add_scatter(
        x=[p.inputs.context for p in fits],
        y=[p.decode_tokens_per_s for p in fits],
        mode="lines+markers",
        name=list_of(
            [_("batch {batch}, ceiling").format(batch=plans[0].inputs.batch)]
            + ([_(ALL_REDUCE_COUNTED)] if plans[0].inputs.gpus > 1 else [])
        ),
        line=dict(color=COLORS["attention"], width=3),
        customdata=[[format_bytes(p.read_per_step), bound_words(p.decode_bound)] for p in fits],
        hovertemplate=_("%{x:,} tokens<br>%{y:,.1f} tokens/s<br>moved per step: %{customdata[0]}")
        + "<br>%{customdata[1]}<extra></extra>",
    )
    missing = [p.inputs.context for p in plans if p.decode_tokens_per_s is None]
    if missing:
        fig.add_scatter(
            x=missing,
            y=[0] * len(missing),
            mode="markers",
            name=_("does not fit"),
            marker=dict(color=COLORS["warning"], symbol="x", size=10),
            hovertemplate=_("%{x:,} tokens: does not fit") + "<extra></extra>",
        )
    base_layout(
        fig,
        title=_("{model} on {gpus} × {card}: decode ceiling vs context").format(
            model=escape(plans[0].model_name), gpus=plans[0].inputs.gpus, card=plans[0].card_name
        ),
        x_title=_("context (tokens)"),
        y_title=_("tokens per second (all sequences)"),
        height=360,
    )
    if min(xs) > 0 and max(xs) / min(xs) >= 100:
        # context lengths are quoted in binary steps (8K, 128K): tick every fourfold step, named so
        ticks = [4**i for i in range(40) if min(xs) <= 4**i <= max(xs)]
        fig.update_xaxes(type="log", tickvals=ticks, ticktext=[format_context(t) for t in ticks])
    fig.update_yaxes(rangemode="tozero")
    trained = plans[0].trained_context
    if trained and min(xs) <= trained <= max(xs):
        top = max((p.decode_tokens_per_s for p in fits), default=1.0)
        marker_line(
            fig,
            trained,
            top,
            _("trained for {trained:,} tokens").format(trained=trained),
            "dash",
            _("the model was trained for {trained:,} tokens").format(trained=trained) + "<extra></extra>",
        )
    return fig
