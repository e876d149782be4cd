"""Planner: any model's config.json → weights, KV cache, fixed state, what fits and how fast.

The first view is for a beginner: a model and a card, one sentence (core/plan/headline.py) and one
picture; the serving choices an engineer tunes sit under "More settings". Story then says what one
decode step reads (and why that is less than memory holds) and draws the speed as the context grows;
Engineer adds every figure, the assumptions, the cautions' sources, the serving section and the code
(ui/depth.py). UI only: the arithmetic is core/plan (also `python -m core.plan`), the pictures
core/figures/plan.py, the widgets, the captions and the shareable link ui/planner.py.
"""

from __future__ import annotations

import streamlit as st

from core.figures.plan import context_figure, memory_figure
from core.i18n import _, pgettext
from core.plan import ConfigError, parse, plan
from core.plan.cautions import caution_parts
from core.plan.curve import sweep
from core.plan.export import rows, to_csv, to_json
from core.plan.headline import headline, quoted_plan, reads_words, speed_note, window_words
from core.units import format_bytes, format_context
from ui.charts import show_figure
from ui.course import lesson_ref
from ui.deeper import go_deeper_serving
from ui.depth import engineer, engineer_section
from ui.glossary import new_words
from ui.lesson import code, lesson_header, link_to, next_lesson, still_missing
from ui.planner import (
    first_view,
    memory_caption,
    restore_from_link,
    serving_inputs,
    speed_caption,
    write_link,
)
from ui.text import plain


def sentence_start(words: str) -> str:
    """`words` opening a sentence, as `lesson_ref` wrote them: its first letter capital (Japanese is left as it is)."""
    return words[:1].upper() + words[1:]


lesson_header("planner")
new_words("tensor_parallel", here="planner")
st.markdown(
    _(
        "Will a model run on your graphics card, and how fast? Pick a model and a card: the planner reads the "
        "model's `config.json` (the file every released model ships with) and works out how much memory its "
        "weights take, how long a conversation can grow before the memory runs out, and how fast it can write. "
        "The sentence and the bar below are the answer; **More settings** holds what an engineer tunes."
    )
)

restore_from_link()
choice, card_key = first_view()
summary = st.container()  # the sentence and the picture, filled once the plan is known
with st.expander(_("More settings"), icon=":material/tune:"):
    if engineer():
        st.markdown(
            _(
                "{Lesson} sized the cache of a few fixed models at batch 1. Here any model's `config.json` — dense "
                "(MHA, GQA, MQA, sliding-window layers), MLA with experts, or a hybrid with a fixed recurrent state "
                "(Qwen3-Next, Kimi Linear, Kimi K3) — meets your serving choices. The command line gives the same "
                "figures: `python -m core.plan --config config.json --context 131072 --batch 8 --card h100_80gb`."
            ).format(Lesson=sentence_start(lesson_ref("kv_cache")))
        )
    inputs = serving_inputs(card_key)
share = write_link(inputs, choice)

if choice.text is None:
    summary.info(choice.problem)
    st.stop()
try:
    model = parse(choice.text)
except ConfigError as exc:
    # quotes the config, which may come from a link
    summary.error(_("Cannot plan this config: {problem}").format(problem=plain(exc)))
    st.stop()

result = plan(model, inputs)
quoted = quoted_plan(model, result)  # the conversation the sentence speaks of
spec = model.spec
window = window_words(inputs.context, result.trained_context)
with summary:
    with st.container(border=True):
        st.markdown(f"**{plain(headline(model, inputs))}**")  # the name may come from a pasted config
    for caution, source in caution_parts(model, inputs, result.gpus_needed):  # = result.cautions
        st.warning(plain(caution), icon=":material/info:")
        if source is not None and engineer():
            st.caption(plain(source))
    show_figure(memory_figure(quoted), key="plan_memory")  # the sentence's context
    st.caption(memory_caption(quoted))

if quoted.fits:  # what one step reads, and why less weight than memory holds (the numbers add up)
    st.markdown(plain(reads_words(model, quoted)))
if not result.fits:
    if result.gpus_needed is None:
        more = _(
            "no even split of its heads over these cards holds it: tensor parallelism alone is not enough "
            "(engines add pipeline parallelism, splitting the layers too)"
        )
    else:
        more = _("{n:,} of these cards would hold it (tensor parallel)").format(n=result.gpus_needed)
    st.warning(
        _("At {batch} × {context} tokens this does not fit: it needs {needed}; {more}.").format(
            batch=inputs.batch,
            context=format_context(inputs.context),
            needed=format_bytes(result.needed),
            more=more,
        )
    )
speed_plans = sweep(model, inputs)
speed_figure = context_figure(speed_plans)
show_figure(speed_figure, key="plan_speed")
st.caption(speed_caption(speed_plans, speed_figure))

if engineer_section(_("Every figure at your settings")):
    st.subheader(
        _("{model} · {batch} × {context} tokens ({window}) on {gpus} × {card}").format(
            model=plain(spec.name),
            batch=inputs.batch,
            context=format_context(inputs.context),
            window=window,
            gpus=inputs.gpus,
            card=result.card_name,
        )
    )
    memory_cols = st.columns(3)
    memory_cols[0].metric(_("Weights"), format_bytes(result.weights))
    memory_cols[1].metric(
        _("KV cache"),
        format_bytes(result.kv),
        help=(
            _(
                "All GPUs together, {copies} copies: each GPU keeps its own copy of the key/value heads (or MLA's "
                "latent) it shares with others."
            ).format(copies=result.cache_copies)
            if result.cache_copies
            else None
        ),
    )
    memory_cols[2].metric(_("Fixed state"), format_bytes(result.state))
    fit_cols = st.columns(3)
    if not result.weights_fit:
        fit_cols[0].metric(_("Longest context"), _("weights do not fit"))
    else:
        longest = _("no limit") if result.max_context is None else format_context(result.max_context)
        trained = result.trained_context
        if trained and (result.max_context is None or result.max_context > trained):
            fit_cols[0].metric(
                _("Longest context"),
                _("{context} (trained)").format(context=format_context(trained)),
                help=_("The length the model was trained for; memory alone sets no limit.")
                if result.max_context is None
                else _("The length the model was trained for; memory alone would hold {longest}.").format(
                    longest=longest
                ),
            )
        else:
            fit_cols[0].metric(_("Longest context"), longest)
    most = _("no limit") if result.max_batch is None else f"{result.max_batch:,}"
    fit_cols[1].metric(_("Most sequences at {context}").format(context=format_context(inputs.context)), most)
    speed = result.decode_tokens_per_s
    fit_cols[2].metric(_("Decode ceiling"), _("does not fit") if speed is None else f"{speed:,.0f} " + _("tokens/s"))
    fit_cols[2].caption(_("A ceiling {note}.").format(note=speed_note(result)))

    if quoted is not result:  # the first picture showed the longest that fits: here, the asked
        show_figure(memory_figure(result), key="plan_memory_asked")

    left, right = st.columns([3, 2])
    with left:
        st.markdown(_("**Every figure**"))
        # a static table wraps its text (a dataframe cut both columns on a phone); cells are markdown,
        # and the model's name can be a pasted config's, so every cell goes through `plain`
        quantity, value = _("quantity"), pgettext("the planner's table column", "value")
        st.table(
            [{quantity: plain(q), value: plain(v)} for q, v, _raw in rows(result)],
            hide_index=True,
            border="horizontal",
        )
    with right:
        with st.container(border=True):
            st.markdown(_("**Assumptions**"))
            st.markdown("\n".join(f"- {text}" for text in result.assumptions))

st.markdown(_("**Take it with you**"))
a, b = st.columns(2)
a.download_button(
    _("Download JSON"), to_json(result), file_name="plan.json", mime="application/json", key="plan_json"
)
b.download_button(_("Download CSV"), to_csv(result), file_name="plan.csv", mime="text/csv", key="plan_csv")
st.markdown(
    _(
        "This page's address now holds every input: copy it from the browser to share the plan, or keep "
        "[this link to the plan]({link})."
    ).format(link=share)
)

go_deeper_serving()
code(plan, key="plan_code")
still_missing(
    _(
        "Every number here is a ceiling worked out from the config and the card's data sheet, not a "
        "measurement: real software stays below it, and further below as the conversation grows. The time a "
        "card needs to start each small program, and several cards to pass results to each other, enters only "
        "as a stated round figure. The next page puts the whole story side by side."
    )
)
link_to("your_gpu", _("Measure the real thing on your own card"))
next_lesson("planner")
