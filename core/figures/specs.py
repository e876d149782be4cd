"""Charts for real model specs, memory and the roofline (the map, KV cache, Kimi K3 and What changed).

Data in (specs, cards, lists of kinds), plotly figures out; every number drawn is
computed by `core.specs` / `core.roofline`.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.style import (
    COLORS,
    LABELS,
    base_layout,
    color_of,
    contrast_ratio,
    dash_of,
    label_of,
    legend_below,
    log_ticks,
    marker_line,
    marker_of,
)
from core.i18n import N_, _
from core.roofline import (
    HYBRID_EVERY,
    Card,
    Width,
    hybrid_macs_per_token,
    hybrid_memory_bytes,
    mechanism_macs_per_token,
    mechanism_memory_bytes,
    speed_curve,
    spill_context,
    weight_bytes,
)
from core.specs import MECHANISMS, ModelSpec
from core.units import format_bytes, format_context, format_count

# Layer kind → (colour key, legend label)
# Layer kinds in real configs → (colour key, label). Fixed-board kinds are the registry's rule keys.
ATTENTION_KINDS: dict[str, str] = {
    "mha": N_("Full attention (MHA)"),
    "gqa": N_("Full attention (GQA)"),
    "mla": N_("Full attention (MLA)"),
    "attention": LABELS["attention"],
}


def _kind_style(kind: str) -> tuple[str, str]:
    if kind in ATTENTION_KINDS:
        return ("mla" if kind == "mla" else "attention"), ATTENTION_KINDS[kind]
    return kind, label_of(kind)


def _kind_color(kind: str) -> str:
    return color_of(_kind_style(kind)[0])


def _kind_label(kind: str) -> str:
    """The legend name of a layer kind, in the reader's language."""
    return _(_kind_style(kind)[1])


# ---------------------------------------------------------------------------------------------
# The map: memory per token across the stages
# ---------------------------------------------------------------------------------------------


def memory_per_token_figure(specs: list[ModelSpec], bytes_per_element: float = 2) -> go.Figure:
    """One bar per model: how much the cache grows with each token of context (bf16 by default).

    Bars lie horizontally, oldest model on top: the names read across on any screen (standing
    bars turned them on a phone, where they ran into each other). The bar's colour is the kind of
    layer that keeps the growing cache; each name says how many of its layers grow at all, and
    the hover gives the fixed state the other layers keep.
    """
    names, values, colors, texts, hovers = [], [], [], [], []
    for spec in specs:
        per_token = spec.kv_cache_bytes_per_token(bytes_per_element)
        grow = spec.num_full_attention_layers
        layers = (
            _("{grow} of {layers} layers grow").format(grow=grow, layers=spec.num_layers)
            if spec.linear
            else _("all {layers} layers grow").format(layers=spec.num_layers)
        )
        names.append(f"{spec.name} ({spec.year})<br><span style='font-size:11px'>{layers}</span>")
        values.append(per_token / 1024)
        colors.append(_kind_color(spec.attention.kind))
        texts.append(format_bytes(per_token))
        fixed = spec.state_bytes()
        hovers.append(
            _(
                "<b>{name}</b><br>{kind}<br>cache per token: {per_token}<br>{layers}<br>"
                "fixed state (any length): {fixed}<extra></extra>"
            ).format(
                name=spec.name,
                kind=_kind_label(spec.attention.kind),
                per_token=format_bytes(per_token),
                layers=layers,
                fixed=format_bytes(fixed) if fixed else _("none"),
            )
        )
    fig = go.Figure(
        go.Bar(
            y=names,
            x=values,
            orientation="h",
            marker_color=colors,
            text=texts,
            # inside the bar's end where it fits, beside it where not: on a phone the longest bar
            # leaves no room beside it, on a wide screen every label fits
            textposition="auto",
            insidetextanchor="end",
            # inside a bar: white or black, whichever reads better on it (≥ 4.5 : 1 on both colours)
            insidetextfont=dict(
                color=[
                    max(("#ffffff", "#000000"), key=lambda ink, c=c: contrast_ratio(ink, c)) for c in colors
                ]
            ),
            cliponaxis=False,
            hovertemplate=hovers,
            showlegend=False,
        )
    )
    # a legend for the bar colours: one legend-only entry per colour the bars use
    legend = {
        "attention": _("keys and values of each K/V head: MHA / GQA"),  # fits a phone's legend
        "mla": _("one compressed latent per token: MLA"),
    }
    for key in dict.fromkeys(_kind_style(spec.attention.kind)[0] for spec in specs):
        fig.add_bar(
            x=[None],
            y=[None],
            orientation="h",
            marker_color=color_of(key),
            name=legend.get(key, _(label_of(key))),
        )
    base_layout(
        fig,
        title=_("Memory each new token adds to the cache"),
        # short for a phone's narrow plot (the title says what); unit in brackets
        x_title=_("per token (KiB)"),
        y_title=_("model (release year)"),
        height=110 + 52 * len(specs),
    )
    # one scale for every precision the map offers (16-bit is the widest): at 8-bit the bars halve
    # on screen, where a rescaled axis left them pixel-identical and only their numbers changed
    widest = max(spec.kv_cache_bytes_per_token(max(2, bytes_per_element)) for spec in specs) / 1024
    fig.update_xaxes(range=[0, widest * 1.3])
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=12))  # oldest on top, as the story runs
    fig.update_layout(margin_l=10)
    return legend_below(fig, y=-0.1, bottom=110)


# ---------------------------------------------------------------------------------------------
# The KV cache page: the calculator — predicted speed vs context on a card
# ---------------------------------------------------------------------------------------------


def speed_vs_context_figure(
    spec: ModelSpec,
    card: Card,
    contexts: list[int],
    weight_bytes_per_param: float = 2.0,
    spill: int | None | bool = True,
    **roofline_kwargs,
) -> go.Figure:
    """Bandwidth-bound tokens/s vs context for one model on one card, spill point marked.

    Solid: the prediction with the card's VRAM (cache beyond it streamed over the host link).
    Dashed: the same model if VRAM were unlimited — the gap after the spill is the cliff.
    When the weights alone do not fit, the figure says so instead of drawing a curve.
    `spill`: the spill point to mark, as the caller shows it in words (the KV cache page: the planner's,
    core/plan/spill.py), None for none; True (the default) works it out with core.roofline.spill_context.
    """
    contexts = sorted({int(t) for t in contexts if t >= 0})
    if not contexts:
        raise ValueError("contexts must contain at least one non-negative length")
    points = speed_curve(spec, card, contexts, weight_bytes_per_param, **roofline_kwargs)
    title = _("{model} on {card}").format(model=spec.name, card=card.name)
    fig = go.Figure()
    log_x = contexts[0] > 0 and contexts[-1] / contexts[0] >= 100

    if not points[0].weights_fit:
        need = weight_bytes(spec, weight_bytes_per_param)
        fig.add_annotation(
            text=_(
                "The weights alone need {need} at {per_param:.3g} bytes per parameter;<br>"
                "the card holds {vram}. Nothing to predict: it does not fit."
            ).format(
                need=format_bytes(need), per_param=weight_bytes_per_param, vram=format_bytes(card.vram_bytes)
            ),
            x=0.5,
            y=0.5,
            xref="paper",
            yref="paper",
            showarrow=False,
            font=dict(size=14, color=COLORS["warning"]),
        )
        base_layout(fig, title=title, x_title=_("context (tokens)"), y_title=_("predicted tokens per second"))
        lo, hi = (math.log10(contexts[0]), math.log10(contexts[-1])) if log_x else (contexts[0], contexts[-1])
        fig.update_xaxes(type="log" if log_x else "linear", range=[lo, hi] if hi > lo else None)
        fig.update_yaxes(range=[0, 1])
        return fig

    unlimited = dict(roofline_kwargs)
    unlimited["vram_budget_bytes"] = math.inf
    unlimited.pop("reserve_bytes", None)
    ideal = speed_curve(spec, card, contexts, weight_bytes_per_param, **unlimited)
    fig.add_scatter(
        x=contexts,
        y=[p.tokens_per_s for p in ideal],
        mode="lines",
        name=_("if VRAM were unlimited"),
        line=dict(color=COLORS["predicted"], dash="dash"),
        hovertemplate=_("%{x:,} tokens<br>%{y:.1f} tokens/s (no spill)<extra></extra>"),
    )
    fig.add_scatter(
        x=contexts,
        y=[p.tokens_per_s for p in points],
        mode="lines+markers",
        name=_("predicted on {card}").format(card=card.name),
        line=dict(color=_kind_color(spec.attention.kind), width=3),
        marker=dict(size=5),
        customdata=[[format_bytes(p.resident_bytes), format_bytes(p.spilled_bytes)] for p in points],
        hovertemplate=_(
            "%{x:,} tokens<br>%{y:.1f} tokens/s<br>weights + cache: %{customdata[0]}"
            "<br>read over the host link: %{customdata[1]}<extra></extra>"
        ),
    )
    if spill is True:
        spill = spill_context(spec, card, weight_bytes_per_param, **roofline_kwargs)
    if spill is not None and contexts[0] <= spill <= contexts[-1]:
        top = max(p.tokens_per_s for p in ideal)
        marker_line(
            fig,
            spill,
            top,
            _("cache spills at {spill:,} tokens").format(spill=spill),
            "dot",
            _("spill point: {spill:,} tokens<extra></extra>").format(spill=spill),
            text=["", _(" spills at {spill:,}").format(spill=spill)],
            textposition="middle right",
            textfont=dict(color=COLORS["warning"]),
        )
    base_layout(
        fig, title=title, x_title=_("context (tokens)"), y_title=_("predicted tokens per second"), height=400
    )
    fig.update_xaxes(type="log" if log_x else "linear")
    fig.update_yaxes(rangemode="tozero")
    return fig


# ---------------------------------------------------------------------------------------------
# What changed: every mechanism at one width
# ---------------------------------------------------------------------------------------------


def _story_rows(width: Width, context: int) -> list[tuple[str, str, float, float]]:
    rows = []
    for key, m in MECHANISMS.items():  # the stages in story order, every registered rule included
        rows.append(
            (
                key,
                # two short lines: the labels must leave room on a phone
                _("{label} · <br>{verb}").format(label=m.shown_label(), verb=m.shown_verb()),
                mechanism_memory_bytes(key, context, width),
                mechanism_macs_per_token(key, context, width),
            )
        )
    rows.append(
        (
            "hybrid",
            _("K3-style mix {boards}:1 · <br>share the work").format(boards=HYBRID_EVERY - 1),
            hybrid_memory_bytes(context, width),
            hybrid_macs_per_token(context, width),
        )
    )
    return rows


def story_figure(width: Width, context: int) -> go.Figure:
    """The story in one picture: per stage, memory kept and work per token at one context length.

    Two panels, one above the other (each gets the full width, so it reads on a phone), same rows
    (stages, top to bottom in story order), log-scaled bars.
    """
    rows = _story_rows(width, context)
    labels = [r[1] for r in rows]
    colors = [color_of(r[0]) for r in rows]
    fig = make_subplots(
        rows=2,
        cols=1,
        vertical_spacing=0.16,
        subplot_titles=(_("memory kept per sequence"), _("work for the next token")),
    )
    memory = [max(r[2], 1.0) for r in rows]  # 'no cache' keeps 0 B: draw it at the axis floor
    panels = (  # per panel: bar lengths, their labels, hover, extra bar settings
        (memory, [format_bytes(r[2]) for r in rows], "%{y}<br>%{text}<extra></extra>", {}),
        (
            [r[3] for r in rows],
            # counts in words: "34B" would read as bytes beside the memory panel's "0 B"
            [format_count(r[3]) for r in rows],
            _("%{y}<br>%{text} multiply-adds<extra></extra>"),
            dict(cliponaxis=False),
        ),
    )
    for row, (x, text, hover, extra) in enumerate(panels, start=1):
        fig.add_bar(
            y=labels,
            x=x,
            text=text,
            textposition="auto",
            hovertemplate=hover,
            orientation="h",
            marker_color=colors,
            showlegend=False,
            row=row,
            col=1,
            **extra,
        )
    base_layout(
        fig,
        # the page says which width
        title=_("Every stage at {context} tokens").format(context=format_context(context)),
        height=720,
    )
    powers = [1024**i for i in range(6)]
    fig.update_xaxes(
        type="log",
        title_text=_("bytes (log scale)"),
        row=1,
        col=1,
        tickvals=powers,
        ticktext=["1 B", "1 KiB", "1 MiB", "1 GiB", "1 TiB", "1 PiB"],
        range=[0, math.log10(max(memory)) + 0.3],
    )
    thousands = [1000**i for i in range(1, 7)]
    fig.update_xaxes(
        range=[math.log10(min(r[3] for r in rows)) - 0.5, math.log10(max(r[3] for r in rows)) + 1.0],
        tickvals=thousands,
        ticktext=[format_count(v).replace(".0", "") for v in thousands],
        row=2,
        col=1,
    )
    fig.update_xaxes(type="log", title_text=_("multiply-adds (log scale)"), row=2, col=1)
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=11))
    # the stage names set the left margin (automargin), the outside labels of the work bars get room right
    fig.update_layout(margin=dict(l=20, r=50, t=80, b=50))
    return fig


def memory_vs_context_figure(width: Width, contexts: list[int]) -> go.Figure:
    """Memory kept vs context, one line per mechanism (the boards are one flat line)."""
    fig = go.Figure()
    series = {
        "attention": [mechanism_memory_bytes("attention", t, width) for t in contexts],
        "kda": [mechanism_memory_bytes("kda", t, width) for t in contexts],
        "hybrid": [hybrid_memory_bytes(t, width) for t in contexts],
    }
    names = {
        "attention": _("KV cache (keeps every token)"),
        "kda": _("boards (add / rewrite / forget / per channel)"),
        "hybrid": _("K3-style mix (1 layer in {every} keeps a cache)").format(every=HYBRID_EVERY),
    }
    for key, values in series.items():
        fig.add_scatter(
            x=contexts,
            y=[v / 1024**3 for v in values],
            mode="lines+markers",
            name=names[key],
            line=dict(color=color_of(key), width=3, dash=dash_of(key)),
            marker=dict(symbol=marker_of(key), size=9),
            hovertemplate=_("%{x:,} tokens<br>%{y:.3f} GiB<extra></extra>"),
        )
    base_layout(
        fig,
        title=_("Memory kept as the text grows"),
        x_title=_("context (tokens, log scale)"),
        y_title=_("GiB per sequence (log)"),
        height=380,
    )
    if len(contexts) <= 8:  # few points: label each one the way context lengths are quoted
        fig.update_xaxes(type="log", tickvals=list(contexts), ticktext=[format_context(t) for t in contexts])
    else:
        xticks, xtext = log_ticks(min(contexts), max(contexts))
        fig.update_xaxes(type="log", tickvals=xticks, ticktext=xtext)
    gib = [v / 1024**3 for values in series.values() for v in values if v > 0]
    tickvals, ticktext = log_ticks(min(gib), max(gib))
    fig.update_yaxes(type="log", tickvals=tickvals, ticktext=ticktext)
    # the legend under the plot: inside it, it covered the lines on a phone
    fig.update_layout(
        legend=dict(x=0.0, y=-0.3, xanchor="left", yanchor="top", orientation="h"),
        margin=dict(b=150),
        height=480,
    )
    return fig
