"""The KV cache page's calculator: a real model on a real card, predicted from memory traffic alone — the KV
cache's size at a context length, where weights plus cache spill out of the card's memory, and the
tokens per second of one conversation (batch 1) that bytes read ÷ bandwidth allow (core/roofline.py).
Weights, the runtime's reserve and the spill point are the planner's own (core/plan/spill.py
`on_one_card`), so this lesson and the planner give one number for one model on one card."""

from __future__ import annotations

import streamlit as st

from core.figures.specs import speed_vs_context_figure
from core.i18n import N_, _
from core.plan.calibration import shares_words
from core.plan.spill import OnOneCard, on_one_card
from core.roofline import CARDS, DEFAULT_CARD, predict, slowdown
from core.specs import SPECS
from core.units import format_bytes, format_context
from ui.charts import ready_chart, show_figure
from ui.course import lesson_ref
from ui.stepped import built_once

CONTEXTS = [2**k for k in range(10, 21)]  # 1K … 1M tokens
# the calculator's precisions: English keys (the widget's values), each shown as _(key), and the planner's
# format for each (core/plan/formats.py): what a home computer runs, llama.cpp's GGUF files
PRECISIONS = {N_("16-bit weights (bf16)"): "bf16", N_("8-bit weights"): "q8_0", N_("4-bit weights"): "q4_0"}


def setting(spec, card, precision: str) -> OnOneCard:
    """`spec` on `card` in `precision`, counted as the planner counts it (weights, reserve, spill point)."""
    return on_one_card(spec, card.vram_bytes, PRECISIONS[precision])


def roofline_kwargs(at: OnOneCard) -> dict:
    """What core.roofline needs to place the same bytes in the same room: the budget and the reserve."""
    return dict(vram_budget_bytes=at.budget_bytes, reserve_bytes=at.reserve_bytes)


def doesnt_fit_advice(spec, card, precision: str) -> str:
    """What to try when the weights alone overflow the card: a smaller precision that fits this
    card, else the smallest listed card that holds them, else the truth (many GPUs)."""
    need = setting(spec, card, precision).weight_bytes
    names = dict(model=spec.name, size=format_bytes(need), card=card.name)
    order = list(PRECISIONS)
    smaller = [p for p in order[order.index(precision) + 1 :] if setting(spec, card, p).weights_fit]
    if smaller:
        return _(
            "{model}'s weights alone ({size}) do not fit on the {card} at this precision; try {precision}."
        ).format(precision=_(smaller[0]), **names)
    bigger = sorted(
        (c for c in CARDS.values() if setting(spec, c, precision).weights_fit), key=lambda c: c.vram_bytes
    )
    if bigger:
        return _(
            "{model}'s weights alone ({size}) do not fit on the {card} at this precision; try a bigger card, "
            "such as the {bigger}."
        ).format(bigger=bigger[0].name, **names)
    return _(
        "{model}'s weights alone ({size}) do not fit on the {card} at this precision, and no single card in "
        "this list holds them. A model this size is served on many GPUs at once; the planner ({planner}) "
        "splits it across them."
    ).format(planner=lesson_ref("planner"), **names)


def speed_figure(spec_key: str, card_key: str, precision: str):
    """Tokens/s against context length for one model, card and precision, built once for all readers; its
    spill line is the planner's spill point, the number beside it."""
    spec, card = SPECS[spec_key], CARDS[card_key]
    at = setting(spec, card, precision)
    return built_once(
        "kv_speed",
        (spec_key, card_key, precision),
        lambda: ready_chart(
            speed_vs_context_figure(
                spec, card, CONTEXTS, at.bytes_per_weight, spill=at.spill, **roofline_kwargs(at)
            )
        ),
    )


def card_calculator(key: str) -> None:
    """The calculator's pickers (model, card, precision, context; widget keys `{key}_…`), its four
    numbers, the speed against context chart and the prediction in words."""
    st.markdown(_("**Calculator: a real model on a real card** (a prediction from memory traffic alone)."))
    k1, k2, k3 = st.columns(3)
    spec_key = k1.selectbox(
        _("Model"),
        list(SPECS),
        format_func=lambda k: SPECS[k].name,
        key=f"{key}_spec",
        index=list(SPECS).index("llama3_8b") if "llama3_8b" in SPECS else 0,
    )
    card_key = k2.selectbox(
        _("Card"),
        list(CARDS),
        format_func=lambda k: CARDS[k].name,
        key=f"{key}_card",
        index=list(CARDS).index(DEFAULT_CARD),
    )
    precision = k3.selectbox(
        _("Weights stored as"),
        list(PRECISIONS),
        format_func=_,
        key=f"{key}_precision",
        index=2,
        help=_(
            "Hobbyists usually run 4-bit weights on a 12 GB card; 16-bit 8B weights alone fill about 15 GiB."
        ),
    )
    context = st.select_slider(
        _("Context length (tokens)"), CONTEXTS, value=32768, format_func=format_context, key=f"{key}_context"
    )
    spec, card = SPECS[spec_key], CARDS[card_key]
    home = setting(spec, card, precision)
    wbytes, room = home.bytes_per_weight, roofline_kwargs(home)

    at = predict(spec, context, card, wbytes, **room)
    spill = home.spill  # the planner's (core/plan/spill.py): one model on one card, one number
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(
        _("KV cache per token"),
        format_bytes(spec.kv_cache_bytes_per_token()),
        help=_("16-bit cache entries."),
    )
    c2.metric(
        _("Cache at {context} tokens").format(context=format_context(context)),
        format_bytes(spec.cache_bytes(context)),
    )
    c3.metric(_("Weights"), format_bytes(home.weight_bytes))
    if not at.weights_fit:
        c4.metric(
            _("Spills at (tokens)"),
            _("at once"),
            help=_("Its weights alone do not fit in this card's memory."),
        )
    elif spill is None:
        c4.metric(_("Spills at (tokens)"), _("never"))
    else:
        c4.metric(
            _("Spills at (tokens)"),
            f"{spill:,}",
            help=_(
                "Context length at which weights, the runtime's reserve and the cache no longer fit in VRAM: one "
                "token past the longest context the planner gives for this model, card and format."
            ),
        )
    show_figure(speed_figure(spec_key, card_key, precision), key=f"{key}_speed")
    if at.tokens_per_s is not None:
        ratio = slowdown(spec, card, context, wbytes, **room)
        empty = predict(spec, 0, card, wbytes, **room).tokens_per_s
        if at.spilled:
            predicted = _(
                "Predicted at {context} tokens: **{speed:,.1f} tokens/s**, {ratio:.0%} of the {empty:,.1f} tokens/s "
                "predicted for an empty context; {spilled} of every step's reads cross the host link."
            )
        else:
            predicted = _(
                "Predicted at {context} tokens: **{speed:,.1f} tokens/s**, {ratio:.0%} of the {empty:,.1f} tokens/s "
                "predicted for an empty context."
            )
        st.markdown(
            predicted.format(
                context=format_context(context),
                speed=at.tokens_per_s,
                ratio=ratio,
                empty=empty,
                spilled=format_bytes(at.spilled_bytes) if at.spilled else "",
            )
        )
    else:
        st.warning(doesnt_fit_advice(spec, card, precision))
    if spec.context and context > spec.context:
        st.caption(
            _(
                "{model} was trained for {trained} tokens: at {context} this is what its memory traffic would be, not "
                "what the model can do (the map and the planner say the same)."
            ).format(model=spec.name, trained=format_context(spec.context), context=format_context(context))
        )
    st.caption(
        _(
            "Upper bound from bytes read per token at batch 1 (one conversation) and the card's bandwidth. "
            "Measured runs stay below it: llama-bench (llama.cpp's speed-test tool) "
            "with Llama 8B (Q4_0) and an 8-bit cache on an RTX 3090 reached these shares of the bound the planner "
            "works out for that setting (measured speed ÷ bound): {shares} (a community report: a pull request's "
            "text in the Abai/llama.cpp fork, 2026). The weights are counted as the planner counts them: llama.cpp's "
            "Q4_0 (4.5 bits a weight, its output head in Q6_K) for 4-bit, Q8_0 (8.5 bits) for 8-bit; beside them "
            "1 GiB for the runtime and room for the activations of reading a prompt, so the spill point is the "
            "planner's for the same model and card. Cache entries are 16-bit. "
            "Units: memory in GiB (2³⁰ bytes), bandwidth in GB/s (10⁹ bytes per second, as card makers quote it); a "
            "'12 GB' card is counted as 12 GiB. Source of the card numbers and configs: core/roofline.py, core/specs/, "
            "core/plan/spill.py."
        ).format(shares=shares_words())
    )
