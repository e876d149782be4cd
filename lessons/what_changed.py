"""What changed — add → rewrite → forget → forget per channel, side by side.

Story: the problem, the four stages in one sentence, the story picture and the memory-vs-length picture
(each with a one-line caption), the rules table and the two predictions; Engineer adds the width's
details, the memory and work tables with their caption, and the code (ui/depth.py)."""

from __future__ import annotations

import streamlit as st

from core.figures.specs import memory_vs_context_figure, story_figure
from core.i18n import N_, _, language, run_on
from core.roofline import (
    HYBRID_EVERY,
    Width,
    hybrid_macs_per_token,
    hybrid_memory_bytes,
    mechanism_macs_per_token,
    mechanism_memory_bytes,
)
from core.specs import MECHANISMS, SPECS
from core.units import format_bytes, format_context, format_count
from ui.charts import show_figure
from ui.course import lesson_ref, number
from ui.depth import engineer, engineer_section
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing

CONTEXTS = [1024, 8192, 131072, 1048576]
# the slider shows labels (AppTest and readers both see "128K"); the page maps them back
CONTEXT_LABELS = {format_context(t): t for t in CONTEXTS}
TABLE_CONTEXTS = [1024, 131072, 1048576]
# shown labels → spec keys (English labels as options: AppTest selects by them; the reader sees them translated)
WIDTH_SOURCES = {N_("Llama-3-8B's width"): "llama3_8b", N_("GPT-2 small's width"): "gpt2"}


@st.cache_data(show_spinner=False)
def cached_story_figure(width: Width, context: int, lang: str):
    return story_figure(width, context)


@st.cache_data(show_spinner=False)
def cached_memory_figure(width: Width, lang: str):
    return memory_vs_context_figure(width, CONTEXTS)


def memory_column(t: int) -> str:
    return _("memory at {context}").format(context=format_context(t))


def work_column(t: int) -> str:
    return _("multiply-adds per token at {context}").format(context=format_context(t))


@st.cache_data(show_spinner=False)
def stage_table(width: Width, lang: str) -> list[dict]:
    """Per stage: its verb, its rule, memory and work per token at three context lengths (all from core),
    in the reader's language (`lang`, part of the cache key)."""
    rows = []
    for key, m in MECHANISMS.items():
        row = {
            _("lesson"): number(m.lesson),
            _("stage"): m.shown_label(),
            _("what it does"): m.shown_verb(),
            _("rule"): m.shown_update(),
        }
        for t in TABLE_CONTEXTS:
            row[memory_column(t)] = format_bytes(mechanism_memory_bytes(key, t, width))
        for t in TABLE_CONTEXTS:
            row[work_column(t)] = format_count(mechanism_macs_per_token(key, t, width))
        rows.append(row)
    mix = {
        _("lesson"): number("kimi_k3"),
        _("stage"): _("Kimi K3-style mix"),
        _("what it does"): _("share the work"),
        _("rule"): _("{boards} layers of KDA boards to 1 layer with a full cache").format(
            boards=HYBRID_EVERY - 1
        ),
    }
    for t in TABLE_CONTEXTS:
        mix[memory_column(t)] = format_bytes(hybrid_memory_bytes(t, width))
    for t in TABLE_CONTEXTS:
        mix[work_column(t)] = format_count(hybrid_macs_per_token(t, width))
    rows.append(mix)
    return rows


def _tick_ratio(axis) -> float | None:
    """The one ratio between neighbouring ticks of a log axis; None when the steps differ."""
    ticks = list(axis.tickvals or [])
    ratios = {round(b / a, 6) for a, b in zip(ticks, ticks[1:], strict=False)}
    return ratios.pop() if len(ratios) == 1 else None


def story_chart_caption(width: Width, context: int) -> str:
    """The story chart's one-line caption: what its two halves are, and how much one tick to the right is
    (read off the chart's ticks: 1 KiB → 1 MiB above, a thousand-fold below, so about 1,000× in both)."""
    figure = cached_story_figure(width, context, language())
    words = _(
        "One bar per stage, in the colour of its own lesson: the top half is the memory it keeps, the bottom "
        "half the work for one more token."
    )
    steps = [r for r in (_tick_ratio(figure.layout.xaxis), _tick_ratio(figure.layout.xaxis2)) if r]
    if steps:
        words = run_on(
            words, _("Each tick to the right is about {ratio:,.0f}× more.").format(ratio=min(steps))
        )
    return words


def memory_chart_caption(width: Width) -> str:
    """The memory chart's one-line caption: its colours, and what one step up its log axis is, read off
    the chart's own ticks."""
    words = _(
        "Blue: the cache, which grows with every token. Deep pink: the boards, flat at any length. Purple: the "
        "K3-style mix in between."
    )
    if step := _tick_ratio(cached_memory_figure(width, language()).layout.yaxis):
        words = run_on(words, _("Each step up the side is {ratio:g}× more memory.").format(ratio=step))
    return words


K3 = SPECS["kimi_k3"]  # the real hybrid's layer counts, from its config

lesson_header("what_changed")

problem(
    _(
        "Back in {gpt2_lesson} the question was simple: a model must remember what it has read, "
        "so how should it keep it? "
        "Keeping everything was exact but grew without end. Every later stage traded a little exactness for memory "
        "that stays the same size — and then spent its cleverness on what to do when that memory fills up."
    ).format(gpt2_lesson=lesson_ref("gpt2"))
)

st.markdown(
    _(
        "Read the four board stages as one sentence. **Adding** blends a key that is written again with what it "
        "held, so DeltaNet learned to **rewrite**. Rewriting one key at a time cannot clear a finished topic, so "
        "Gated DeltaNet learned "
        "to **forget**. One fade rate for the whole board throws away the useful with the stale, so KDA learned to "
        "**forget per channel**. Kimi K3 then stopped choosing: about "
        "{ratio} board layers for every one that keeps a full "
        "cache ({linear} KDA + {full} full attention in its {layers} "
        "layers; the mix drawn below keeps a cache in 1 layer of {every})."
    ).format(
        ratio=round(K3.num_linear_layers / K3.num_full_attention_layers),
        linear=K3.num_linear_layers,
        full=K3.num_full_attention_layers,
        layers=K3.num_layers,
        every=HYBRID_EVERY,
    )
)

cols = st.columns(2)
source = cols[0].selectbox(
    _("Model width shared by every stage"),
    list(WIDTH_SOURCES),
    # a dict made now, not `_`: AppTest formats the options outside the script run's language
    format_func={label: _(label) for label in WIDTH_SOURCES}.get,
    key="wc_width",
    help=_("Same layers, heads and head size for every stage, so only the memory rule differs."),
)
context_label = cols[1].select_slider(
    _("Context length (tokens)"),
    options=list(CONTEXT_LABELS),
    value="128K",
    key="wc_context",
)
context = CONTEXT_LABELS[context_label]
width = Width.of(SPECS[WIDTH_SOURCES[source]])
if engineer():  # the width in numbers
    if width.cached_heads != width.heads:
        width_words = _(
            "{name}: {layers} layers × {heads} heads × {head_dim} numbers per head; its cache keeps {cached} "
            "key/value heads (GQA), as the real model does — the same number as on the map and in {kv_lesson}."
        )
    else:
        width_words = _("{name}: {layers} layers × {heads} heads × {head_dim} numbers per head.")
    st.caption(
        width_words.format(
            name=width.name,
            layers=width.layers,
            heads=width.heads,
            head_dim=width.head_dim,
            cached=width.cached_heads,
            kv_lesson=lesson_ref("kv_cache"),
        )
    )
st.caption(
    _(
        "Every stage is drawn at this width. The *no cache* row is a teaching baseline: a model at this width "
        "that recomputes the whole text for every token. GPT-2 itself never ran that way — its own 2019 code "
        "already kept past keys and values, as {gpt2_lesson} notes."
    ).format(gpt2_lesson=lesson_ref("gpt2"))
)

show_figure(cached_story_figure(width, context, language()), key="wc_story_chart")
st.caption(story_chart_caption(width, context))

attention_memory = mechanism_memory_bytes("attention", context, width)
board_memory = mechanism_memory_bytes("kda", context, width)
st.markdown(
    _(
        "At {context} tokens the cache holds {attention}; every board stage holds "
        "{board} (one board per head in every layer), whatever the length. The stages differ "
        "in *what* they do with that memory, "
        "not in how much of it there is: rewriting costs one extra read of the board per token, forgetting one "
        "more pass to fade it. The model without a cache keeps nothing and pays for it in work that grows with "
        "the square of the length: {no_cache} multiply-adds for the "
        "next token, against {cached} with a cache."
    ).format(
        context=format_context(context),
        attention=format_bytes(attention_memory),
        board=format_bytes(board_memory),
        no_cache=format_count(mechanism_macs_per_token("no_cache", context, width)),
        cached=format_count(mechanism_macs_per_token("attention", context, width)),
    )
)

notice(
    _("At 1M tokens, which needs more memory: DeltaNet or Gated DeltaNet?"),
    _(
        "Neither: both keep {memory} at this width. "
        "Forgetting changes what is written on the boards, not their size."
    ).format(memory=format_bytes(mechanism_memory_bytes("delta", 1048576, width))),
    key="wc_notice_same_size",
)

st.subheader(_("Every stage, side by side"))
# static tables (cells wrap): the rules in words, then the numbers — one wide table ran off the page
rows = stage_table(width, language())
RULE_COLUMNS = (_("lesson"), _("stage"), _("what it does"), _("rule"))
st.table([{c: row[c] for c in RULE_COLUMNS} for row in rows], hide_index=True, border="horizontal")
if engineer_section(_("Memory and work of every stage")):
    # memory and work apart: four columns each fit a phone (seven in one table ran off its edge)
    for column_of in (memory_column, work_column):
        columns = [column_of(t) for t in TABLE_CONTEXTS]
        st.table(
            [{_("stage"): row[_("stage")], **{c: row[c] for c in columns}} for row in rows],
            hide_index=True,
            border="horizontal",
        )
    st.caption(
        _(
            "Memory: cache in 16-bit, boards in 32-bit. Work: multiply-adds of the memory part of all layers for "
            "one new token; the projections and feed-forward layers every stage runs for that token are left out. "
            "The row without a cache counts its redone key/value projections and attention only: rerunning the "
            "rest of the model for every earlier token would add more still."
        )
    )

show_figure(cached_memory_figure(width, language()), key="wc_memory_chart")
st.caption(memory_chart_caption(width))

mix_ratio = hybrid_memory_bytes(1048576, width) / mechanism_memory_bytes("attention", 1048576, width)
notice(
    _(
        "The K3-style mix keeps a cache in one layer out of {every}. At 1M tokens, what share of the all-cache "
        "model's memory does it need?"
    ).format(every=HYBRID_EVERY),
    _(
        "{ratio:.1%} — 1/{every} for the cache layers, plus boards too small to notice at that length. "
        "The real {k3} keeps {k3_memory} at 1M tokens, against "
        "{full_memory} if all {layers} layers kept an "
        "MLA cache."
    ).format(
        ratio=mix_ratio,
        every=HYBRID_EVERY,
        k3=K3.name,
        k3_memory=format_bytes(K3.cache_bytes(1048576)),
        full_memory=format_bytes(1048576 * K3.all_full_attention_bytes_per_token()),
        layers=K3.num_layers,
    ),
    key="wc_notice_mix",
)

formula(
    r"\begin{aligned}"
    r"\text{add:}\quad & S_t = S_{t-1} + k_t v_t^\top\\"
    r"\text{rewrite:}\quad & S_t = (I - \beta_t k_t k_t^\top)\,S_{t-1} + \beta_t k_t v_t^\top\\"
    r"\text{forget:}\quad & S_t = (I - \beta_t k_t k_t^\top)\,\alpha_t S_{t-1} + \beta_t k_t v_t^\top\\"
    r"\text{forget per channel:}\quad & S_t = (I - \beta_t k_t k_t^\top)\,\mathrm{diag}(\alpha_t)\,S_{t-1}"
    r" + \beta_t k_t v_t^\top"
    r"\end{aligned}",
    caption=_(
        "S is the board (d_k × d_v per head), k and v the token's key and value, β ∈ (0,1) how hard to "
        "write, α ∈ (0,1) how much survives (a number per head, or a vector of d_k numbers per head for KDA). "
        "Read-out: o_t = S_tᵀ q_t."
    ),
    key="wc_formula",
)
code(mechanism_memory_bytes, mechanism_macs_per_token, key="wc_code")

still_missing(
    _(
        "Nothing here is finished. K3's full-attention layers still grow with every token, a fixed board still "
        "cannot hold every detail of a long text, and {weights} weights must be stored "
        "even if only a sliver wakes per token. What changed in seven years is less the size than the craft of "
        "deciding what to throw away — and that craft shows up on your own card as speed that holds, or falls, "
        "as the text grows."
    ).format(weights=format_count(K3.published_params))
)
next_lesson("what_changed")
