"""The map — the whole progression in one table and one chart."""

from __future__ import annotations

import streamlit as st

from core.figures.specs import memory_per_token_figure
from core.i18n import N_, _, language
from core.specs import SPECS, ModelSpec, gpt2s_in, hybrid_layer_kinds
from core.units import format_billions, format_bytes, format_context, format_params
from ui.charts import data_table, show_figure
from ui.course import COURSE, Lesson, lesson
from ui.depth import engineer, engineer_section
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing
from ui.progress import DONE_MARK, done, progress_panel

CONTEXTS = [1024, 8192, 131072, 1048576]
# the slider shows labels (AppTest and readers both see "128K"); the page maps them back
CONTEXT_LABELS = {format_context(t): t for t in CONTEXTS}
# English labels as the options (what AppTest selects); the reader sees them translated
PRECISIONS = {N_("16-bit (bf16)"): 2, N_("8-bit (fp8)"): 1}

# The story, one row per lesson slug: (stage, what it fixed, what it left), English sources with
# {placeholders} that `story_words()` fills in after translation; numbers come from the specs
K3 = SPECS["kimi_k3"]
K3_EXPERTS, K3_AWAKE = K3.expert_counts()  # routed + shared per MoE layer, and awake per token
STORY = {
    "gpt2": (
        N_("GPT-2, plain (2019)"),
        N_("Predicts the next piece of text with {gpt2_layers} stacked blocks."),
        N_(
            "With no cache (the course's baseline; GPT-2's own 2019 code kept one), each new token re-reads "
            "the whole text."
        ),
    ),
    "kv_cache": (
        N_("KV cache"),
        N_("Keeps each token's key and value, so nothing is recomputed."),
        N_("The cache grows with every token; reading it back becomes the bottleneck."),
    ),
    "linear_attention": (
        N_("Linear attention"),
        N_("Folds everything into one board of fixed size: memory stops growing."),
        N_("Writing over the same board is coarser than looking everything up."),
    ),
    "collisions": (
        N_("Collisions"),
        N_("Shows why: with more pairs than board dimensions, writes pile on each other."),
        N_("A key written again returns old and new blended; past d keys, nothing reads back exactly."),
    ),
    "deltanet": (
        N_("DeltaNet"),
        N_("Erases the old value under a key before writing the new one."),
        N_("Each rewrite depends on the last, so the steps queue up one by one."),
    ),
    "chunks": (
        N_("Chunks"),
        N_("Cuts the text into chunks: all at once inside, hand-over only at the edges."),
        N_("The board still cannot drop a whole topic at once."),
    ),
    "forgetting": (
        N_("Forgetting"),
        N_(
            "Gated DeltaNet fades the board; KDA (Kimi Delta Attention) gives each channel, one row of the "
            "board, its own fade rate."
        ),
        N_("A fixed board, however well kept, cannot hold every detail exactly."),
    ),
    "kimi_k3": (
        N_("Kimi K3"),
        N_(
            "About {ratio} layers of fixed boards to one full-attention layer ({linear} + {full} of {layers}), "
            "plus a look back over depth."
        ),
        N_("The full-attention layers' cache still grows, {share:.0%} as fast as with one in every layer."),
    ),
    "experts": (
        N_("Experts"),
        N_("{experts} experts, {awake} awake per token: a giant that wakes a sliver of itself per token."),
        N_("All {weights} weights must still be stored somewhere."),
    ),
}
# lessons beyond the story that the map still links to, with a word on what they hold
MORE = {
    "primer": N_("the arithmetic the boards are built from, one live picture each"),
    "real_hybrid": N_("a released model with the same 3 : 1 plan, stepped live on your machine"),
    "your_gpu": N_("measure it on your own card"),
    "planner": N_("any model on any card: what fits, how fast"),
    "what_changed": N_("every stage side by side"),
    "glossary": N_("every word in one plain sentence"),
}


def story_words(slug: str) -> tuple[str, str, str]:
    """The story row of `slug` in the reader's language, its numbers filled in from the specs."""
    values = {
        "gpt2_layers": SPECS["gpt2"].num_layers,
        "ratio": round(K3.num_linear_layers / K3.num_full_attention_layers),
        "linear": K3.num_linear_layers,
        "full": K3.num_full_attention_layers,
        "layers": K3.num_layers,
        "share": K3.kv_cache_bytes_per_token() / K3.all_full_attention_bytes_per_token(),
        "experts": K3_EXPERTS,
        "awake": K3_AWAKE,
        "weights": format_params(K3.published_params),
    }
    return tuple(_(text).format(**values) for text in STORY[slug])


@st.cache_data(show_spinner=False)
def model_rows(context: int, bytes_per_element: float, lang: str) -> list[dict]:
    """One row per released model, every number computed from its config (`lang`: the column names'
    language, part of the cache key)."""
    rows = []
    for spec in SPECS.values():
        rows.append(
            {  # what this section is about first: a phone shows the first three columns
                _("model"): spec.name,
                _("memory at {context}").format(context=format_context(context)): format_bytes(
                    spec.cache_bytes(context, bytes_per_element)
                ),
                _("cache per token"): format_bytes(spec.kv_cache_bytes_per_token(bytes_per_element)),
                _("fixed state"): format_bytes(spec.state_bytes()) if spec.linear else "—",
                _("year"): spec.year,
                _("parameters (published)"): format_params(spec.published_params),
                _("counted from config"): format_params(spec.total_params()),
                _("active per token"): format_params(spec.active_params()),
            }
        )
    return rows


@st.cache_data(show_spinner=False)
def memory_chart(bytes_per_element: float, lang: str):
    return memory_per_token_figure(list(SPECS.values()), bytes_per_element)


def past_their_length(context: int) -> str:
    """A sentence naming the models trained on shorter texts than `context` (their row is what-if)."""
    short = [spec for spec in SPECS.values() if spec.context < context]
    if not short:
        return ""
    names = _(", ").join(f"{spec.name} ({format_context(spec.context)})" for spec in short)
    return _(
        "Trained on shorter texts than {context} tokens: {names}. Their memory there is "
        "what the cache would take if they could read that far; past that length they stop making sense."
    ).format(context=format_context(context), names=names)


def story_rows() -> list[tuple[Lesson, tuple[str, str, str]]]:
    """The story's rows in course order, in the reader's language (an unknown slug in STORY fails loudly)."""
    unknown = set(STORY) - {item.slug for item in COURSE.lessons}
    if unknown:
        raise ValueError(f"STORY names lessons that are not in the course: {sorted(unknown)}")
    return [(item, story_words(item.slug)) for item in COURSE.lessons if item.slug in STORY]


def lesson_link(slug: str, label: str) -> None:
    """A link into the course; plain text when the page runs outside the router (tests)."""
    item = lesson(slug)
    if not item.exists:
        st.markdown(_("- {label} *(page coming)*").format(label=label))
        return
    try:
        st.page_link(item.file, label=label, icon=item.icon)
    except Exception:  # opened on its own: no router, no links
        st.markdown(f"- {label}")


def headline(gpt2: ModelSpec, k3: ModelSpec) -> None:
    cols = st.columns(3)
    cols[0].metric(
        f"{gpt2.name} ({gpt2.year})",
        _("{params} parameters").format(params=format_params(gpt2.published_params)),
    )
    cols[1].metric(
        f"{k3.name} ({k3.year})", _("{params} parameters").format(params=format_params(k3.published_params))
    )
    cols[2].metric(_("GPT-2s that fit in one Kimi K3"), f"{int(gpt2s_in(k3, gpt2)):,}")
    linear = SPECS["kimi_linear"]
    if engineer_section(_("Published vs counted parameters (for engineers)")):
        st.caption(_("The numbers above are published totals, as their makers announced them."))
        st.caption(
            _(
                "Counted from the released configs: {gpt2} {gpt2_count:,} parameters; "
                "{k3}'s text model {k3_total}, of which "
                "{k3_active} work on any one token — counting the whole token table; without "
                "it {k3_active_no_table}, the "
                "{k3_published_active} NVIDIA publishes (NeMo AutoModel docs). The course uses the count, "
                "{k3_active}, from here on. Counts and published names differ the same way for "
                "{linear}: {linear_total} counted, "
                "{linear_no_table} without its token table and output "
                "head — published as {linear_published}."
            ).format(
                gpt2=gpt2.name,
                gpt2_count=gpt2.total_params(),
                k3=k3.name,
                k3_total=format_params(k3.total_params()),
                k3_active=format_params(k3.active_params()),
                k3_active_no_table=format_billions(k3.active_params(count_embedding_table=False)),
                k3_published_active=format_params(k3.published_active),
                linear=linear.name,
                linear_total=format_billions(linear.total_params()),
                linear_no_table=format_billions(linear.total_params() - linear.embedding_params()),
                linear_published=format_params(linear.published_params),
            )
        )


lesson_header("map")
new_words(
    "token", "byte", "parameter", "layer", "block", "context", "matrix", "query", "key", "value", "attention",
    "head", "kv_cache", "gqa", "mha", "mla", "fp32", "gib", "gpu", "board", "channel", "expert",
    "linear_attention", "deltanet", "gated_deltanet", "kda", "short_conv", "chunk", "full_attention",
    here="map", title=N_("Words you will meet, each taught in its lesson"),
)  # fmt: skip
gpt2, k3 = SPECS["gpt2"], K3
headline(gpt2, k3)

st.markdown(
    _(
        "Seven years separate these two models. The size is the obvious change, but it is not the story. "
        "The story is one question asked again and again: **how much must a model remember about the text "
        "it has read so far, and how does it keep it?** Every stage below exists because the one before it "
        "left something broken."
    )
)

st.caption(
    _(
        "This course retells, with models that run, the article *From GPT-2 to Kimi K3* (5 August 2026). The story "
        "is theirs; every number here is checked against the sources on each page."
    )
)
if engineer():
    st.caption(
        _(
            "The article's full title is *From GPT-2 to Kimi K3: What Actually Changed in Seven Years? A "
            "Beginner-Friendly Walkthrough*; it unpacks the original *From GPT2 to Kimi3, Explained* by ali "
            "(@waterloo_intern). The framing is theirs; the sentences, code and numbers here are this course's own."
        )
    )

problem(
    _(
        "A language model writes one token at a time, and each new token depends on everything before it. "
        "So it must either redo its reading of the whole text at every step, or keep notes. Notes cost memory, "
        "and on a real graphics card, memory — how much fits, and how fast it can be read — is what runs out "
        "first."
    )
)

st.subheader(_("The whole progression"))
# a static table: its cells wrap, so every sentence can be read without scrolling sideways
st.table(
    [
        {_("lesson"): item.number, _("stage"): stage, _("what it fixed"): fixed, _("what it left"): left}
        for item, (stage, fixed, left) in story_rows()
    ],
    hide_index=True,
    border="horizontal",
)
progress_panel()  # the reader's own progress: the lessons whose check they passed (ui/progress.py)
with st.expander(_("Go to a lesson"), expanded=False, icon=":material/list:"):
    for item in COURSE.lessons:  # course order: the story's stages and the lessons around them
        mark = f" {DONE_MARK}" if item.slug in done() else ""
        if item.slug in STORY:
            lesson_link(item.slug, f"{item.number} · {story_words(item.slug)[0]}{mark}")
        elif item.slug in MORE:
            lesson_link(item.slug, f"{lesson(item.slug).label}{mark} — {_(MORE[item.slug])}")

st.subheader(_("Memory per token, stage by stage"))
st.markdown(
    _(
        "Every model that keeps a cache adds a little to it with each token it reads. The chart shows how much, "
        "for real released models, from their config files. Shorter is better: this number decides how long a "
        "text fits on your card and how much must be read back for every new token."
    )
)
notice(
    _(
        "{k3} is about {times:,} times bigger than {gpt2}. Which of the two adds more memory per token of text?"
    ).format(k3=k3.name, times=int(gpt2s_in(k3, gpt2)), gpt2=gpt2.name),
    _(
        "{gpt2}: {gpt2_bytes} per token against {k3_bytes} for {k3} (16-bit). Parameters and memory per token "
        "are different fights; the second one is what this course is about."
    ).format(
        gpt2=gpt2.name,
        gpt2_bytes=format_bytes(gpt2.kv_cache_bytes_per_token()),
        k3_bytes=format_bytes(k3.kv_cache_bytes_per_token()),
        k3=k3.name,
    ),
    key="map_notice_size",
)
precision = st.radio(
    _("Cache precision"),
    list(PRECISIONS),
    # a dict made now, not `_`: AppTest formats the options outside the script run's language
    format_func={label: _(label) for label in PRECISIONS}.get,
    horizontal=True,
    key="map_precision",
    help=_("Bytes per stored number. Real engines keep the cache in 16-bit; some squeeze it to 8-bit."),
)
bytes_per_element = PRECISIONS[precision]
show_figure(memory_chart(bytes_per_element, language()), key="map_memory_chart")
st.caption(
    _("A shorter bar = less memory for each token read; the colour says what a model keeps (see the legend).")
)

llama, ds = SPECS["llama3_8b"], SPECS["deepseek_v3"]
st.markdown(
    "\n".join(
        (
            _(
                "- **{gpt2}** stores a key and a value for every head in every layer: {per_token} per token."
            ).format(
                gpt2=gpt2.name, per_token=format_bytes(gpt2.kv_cache_bytes_per_token(bytes_per_element))
            ),
            _(
                "- **{llama}** lets {share} query heads share one key/value head (grouped-query attention, "
                "*GQA*): {per_token} per token for a model {times:.0f}× larger."
            ).format(
                llama=llama.name,
                share=llama.attention.heads // llama.attention.kv_heads,
                per_token=format_bytes(llama.kv_cache_bytes_per_token(bytes_per_element)),
                times=llama.total_params() / gpt2.total_params(),
            ),
            _(
                "- **{ds}** squeezes each token into a {latent}-number latent (multi-head latent attention, "
                "*MLA*): {per_token} per token across {layers} layers."
            ).format(
                ds=ds.name,
                latent=ds.attention.cache_elements_per_token(),
                per_token=format_bytes(ds.kv_cache_bytes_per_token(bytes_per_element)),
                layers=ds.num_layers,
            ),
            _(
                "- **{k3}** keeps a cache in only {full} of its {layers} layers; the other {linear} keep "
                "fixed-size boards (a *fixed state*: the same size at any length) — {per_token} per token plus a "
                "fixed {state} that never grows."
            ).format(
                k3=k3.name,
                full=k3.num_full_attention_layers,
                layers=k3.num_layers,
                linear=k3.num_linear_layers,
                per_token=format_bytes(k3.kv_cache_bytes_per_token(bytes_per_element)),
                state=format_bytes(k3.state_bytes()),
            ),
        )
    )
)
if engineer():
    st.caption(
        _(
            "{k3}'s fixed {state}: {boards} of boards, one per head, + {conv} of short-convolution buffers (each "
            "layer's last few inputs, kept for a small filter that mixes every token with the ones just before it)."
        ).format(
            k3=k3.name,
            state=format_bytes(k3.state_bytes()),
            boards=format_bytes(k3.recurrent_state_bytes()),
            conv=format_bytes(k3.conv_state_bytes()),
        )
    )

st.subheader(_("Every model at one context length"))
context_label = st.select_slider(
    _("Context length (tokens)"),
    options=list(CONTEXT_LABELS),
    value="128K",
    key="map_context",
    help=_("How much text the model has read so far in one conversation."),
)
context = CONTEXT_LABELS[context_label]
table_rows = model_rows(context, bytes_per_element, language())
# between the slider and the table: a phone shows three columns, and the table's toolbar (search,
# download, full screen) floats over the right end of what stands just above it — so a line short
# enough to end before it, not the slider's end
st.caption(_("Scroll sideways for all {n} columns →").format(n=len(table_rows[0])))
data_table(table_rows, key="map_models_table", width="stretch")
k3_memory = k3.cache_bytes(context, bytes_per_element)
full_memory = context * k3.all_full_attention_bytes_per_token(bytes_per_element)
st.caption(
    _(
        "At {context} tokens {k3} keeps {k3_memory}; with MLA in all {layers} layers it would keep {full_memory}. {past}"
    ).format(
        context=format_context(context),
        k3=k3.name,
        k3_memory=format_bytes(k3_memory),
        layers=k3.num_layers,
        full_memory=format_bytes(full_memory),
        past=past_their_length(context),
    )
)
if engineer():
    st.caption(
        _(
            "Cache in the chosen precision; fixed states are boards in 32-bit, as the reference code keeps them, "
            "plus 16-bit short-convolution buffers."
        )
    )

formula(
    r"\text{cache per token} = \sum_{\text{full-attention layers}} \begin{cases}"
    r"2\,n_{kv}\,d_h & \text{MHA / GQA}\\ d_c + d_R & \text{MLA}\end{cases} \times \text{bytes}"
    r"\qquad \text{memory}(T) = T\cdot\text{cache per token} + \sum_{\text{board layers}}"
    r"\big(H\,d_k\,d_v \times 4 + (k_{\text{conv}}-1)\,c_{\text{conv}} \times 2\big)",
    caption=_(
        "n_kv key/value heads of size d_h; MLA caches a latent of d_c = {d_c} plus a key "
        "of d_R = {d_r} ({ds}); bytes = 2 "
        "for a 16-bit cache, 1 for 8-bit. A board layer keeps one d_k × d_v matrix per head in 32-bit (4 bytes), "
        "plus its short-convolution buffer: the last k_conv − 1 = {conv} inputs of its c_conv "
        "channels, 16-bit ({k3}). Both "
        "stay the same at any length T."
    ).format(
        d_c=ds.attention.kv_lora_rank,
        d_r=ds.attention.qk_rope_head_dim,
        ds=ds.name,
        conv=k3.linear.conv_kernel - 1,
        k3=k3.name,
    ),
    key="map_formula",
)
code(ModelSpec.kv_cache_bytes_per_token, ModelSpec.cache_bytes, hybrid_layer_kinds, key="map_code")

still_missing(
    _(
        "This page is the map, not the territory. To see *why* each row exists, start where the story starts: "
        "a model run with no cache, re-reading its whole text for every new token — the course's baseline, not "
        "how GPT-2's own code ran."
    )
)
next_lesson("map")
