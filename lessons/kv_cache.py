"""KV cache: keep what you computed — and watch the memory grow."""

from __future__ import annotations

import streamlit as st

from core.figures.generation import (
    attention_figure,
    attention_step,
    cache_bytes_figure,
    cache_heatmaps_figure,
    cache_heatmaps_step,
    grid_counts,
    ms_per_token_figure,
    recompute_grid_figure,
    recompute_grid_step,
    work_figure,
)
from core.figures.specs import speed_vs_context_figure
from core.generation import (
    GenerationRun,
    RunComparison,
    RunSeries,
    Sampling,
    compare_runs_per_step,
    positions_computed_formula,
    run_generation,
)
from core.gpu.published import published_row, result_speeds
from core.models.gpt2 import CausalSelfAttention, KVCache
from core.plan.calibration import shares_words
from core.roofline import CARDS, DEFAULT_CARD, predict, slowdown, spill_context, weight_bytes
from core.specs import SPECS
from core.units import format_bytes, format_context, format_small
from ui.course import lesson_ref
from ui.deeper import planner_batch_link
from ui.glossary import new_words
from ui.gpt2_model import (
    choose_model,
    generation_settings,
    grid_caption,
    live_model,
    show_cache_size,
    show_tokens,
    show_top_next,
)
from ui.lesson import (
    charts_side_by_side,
    code,
    formula,
    lesson_header,
    next_lesson,
    notice,
    problem,
    show_figure,
    step_controls,
    still_missing,
)
from ui.stepped import Stepped, built_once, stepped_figures

DEFAULT_PROMPT = "The cache "
CONTEXTS = [2**k for k in range(10, 21)]  # 1K … 1M tokens
GRID_TITLE = "Which positions the model ran at each step, with a cache"
PRECISIONS = {"16-bit weights (bf16)": 2.0, "8-bit weights": 1.0, "4-bit weights": 0.5}
# llama.cpp's own -ngl sweep (llama-bench README): tokens/s as layers move from the card to the CPU
NGL_SWEEP = result_speeds(published_row("spill", "Llama 7B Q4_0"))


def doesnt_fit_advice(spec, card, precision: str) -> str:
    """What to try when the weights alone overflow the card: a smaller precision that fits this
    card, else the smallest listed card that holds them, else the truth (many GPUs)."""
    need = weight_bytes(spec, PRECISIONS[precision])
    said = (
        f"{spec.name}'s weights alone ({format_bytes(need)}) do not fit on the {card.name} at this precision"
    )
    smaller = [
        p
        for p, b in PRECISIONS.items()
        if b < PRECISIONS[precision] and weight_bytes(spec, b) <= card.vram_bytes
    ]
    if smaller:
        return f"{said}; try {smaller[0]}."
    bigger = sorted((c for c in CARDS.values() if c.vram_bytes >= need), key=lambda c: c.vram_bytes)
    if bigger:
        return f"{said}; try a bigger card, such as the {bigger[0].name}."
    return (
        f"{said}, and no single card in this list holds them. A model this size is served on many GPUs at "
        f"once; the planner ({lesson_ref('planner')}) splits it across them."
    )


@st.cache_data(show_spinner="Generating with and without the cache…", max_entries=32)
def precompute(
    model_key: str, prompt_ids: tuple[int, ...], n_steps: int, temperature: float, top_k: int, seed: int
) -> tuple[GenerationRun, RunSeries, list[RunComparison]]:
    """The cached run in full; of the recomputing run only its per-step numbers and the live check."""
    sampling = Sampling(temperature=temperature, top_k=top_k or None, seed=seed)
    live = live_model(model_key)
    options = live.run_options
    cached = run_generation(
        live.model, list(prompt_ids), n_steps, use_cache=True, sampling=sampling, **options
    )
    plain = run_generation(
        live.model, list(prompt_ids), n_steps, use_cache=False, sampling=sampling, **options
    )
    checks = compare_runs_per_step(cached, plain)  # needs every step's logits; dropped after
    return cached.without_logits(), RunSeries(plain.traces), checks


def run_figures(settings: tuple, cached: GenerationRun, plain: RunSeries) -> dict:
    """Whole-run charts (work, time, bytes), built once per settings and shared read-only."""

    def build() -> dict:
        series = RunSeries(cached.traces)
        p, n = len(cached.prompt_ids), len(series.steps)
        formula_plain = [positions_computed_formula(p, s, use_cache=False) for s in series.steps]
        live = live_model(settings[0])
        per_token, unit = live.model.cache_bytes_per_token(), live.unit
        return {
            "work": work_figure(
                series.steps, plain.cumulative_work, formula_plain, series.cumulative_work, shown=n
            ),
            "ms": ms_per_token_figure(series.text_lengths, plain.wall_ms, series.wall_ms, shown=n, unit=unit),
            "bytes": cache_bytes_figure(series.text_lengths, series.cache_bytes, n, per_token, unit=unit),
        }

    return built_once("kv_run", settings, build)


def step_figures(settings: tuple, step: int, layer: int, head: int, cached: GenerationRun) -> dict:
    """The pictures at `step` (0: the finished run, the grid framing its first dozen steps), each
    built once per (settings, layer, head) at the last step and patched per step (see
    ui/stepped.py), so a warm rerun or a Back click only re-sends them."""
    n = len(cached.traces)
    t = step or n  # the step the cache pictures show
    live = live_model(settings[0])
    label, unit = live.tokenizer.label, live.unit
    final = cached.traces[-1].layers[layer]
    all_ids = cached.prompt_ids + cached.new_ids
    p, max_rows = len(cached.prompt_ids), final.keys.shape[1]

    def heatmaps(base: dict, step: int):
        # cache rows after the step: one per byte read
        rows = cached.traces[(step or n) - 1].position + 1 if n else 0
        return cache_heatmaps_step(base, final.keys, final.values, head, rows, all_ids, label)

    parts = {
        "heatmaps": Stepped(
            base=lambda: cache_heatmaps_figure(
                final.keys, final.values, head, max_rows, all_ids, label, unit
            ),
            patch=heatmaps,
        ),
        "grid": Stepped(
            base=lambda: recompute_grid_figure(cached.traces, n, p, GRID_TITLE, unit=unit),
            patch=lambda base, step: recompute_grid_step(base, cached.traces, step, GRID_TITLE),
            base_key=settings,
        ),
    }
    if t:
        parts["attention"] = Stepped(
            base=lambda: attention_figure(final.attention, all_ids, max_rows, label, unit),
            patch=lambda base, step: attention_step(
                base, cached.traces[(step or n) - 1].layers[layer].attention, max_rows
            ),
        )
    return stepped_figures("kv", (settings, layer, head), step, parts)


def speed_figure(spec_key: str, card_key: str, weight_bytes_per_param: float):
    return built_once(
        "kv_speed",
        (spec_key, card_key, weight_bytes_per_param),
        lambda: speed_vs_context_figure(SPECS[spec_key], CARDS[card_key], CONTEXTS, weight_bytes_per_param),
    )


lesson_header("kv_cache")
new_words(
    "dot_product", "softmax", "attention_weights", "vram", "bandwidth", "pcie", "roofline", "q4_0", "ngl", "batch", here="kv_cache"
)  # fmt: skip
problem(
    "Without a cache, the model re-read the whole text for every new token (a byte, for the tiny model), so each "
    "step got slower and the total work grew with the *square* of the length. Yet the numbers it recomputed for "
    "the old tokens never changed: token 3 can only look at tokens 0–3, whatever comes later."
)

live = choose_model("kv")
model, unit = live.model, live.unit
cfg = model.config
per_token = model.cache_bytes_per_token()

st.markdown(
    f"Inside every layer, each {unit} becomes three vectors: a **query** (what am I looking for?), a **key** "
    f"(what do I contain?) and a **value** (what do I hand over if picked). A new {unit} compares its query "
    f"with the keys of all earlier {unit}s and mixes their values. The keys and values of old {unit}s never "
    f"change — so **keep them**. That store is the *KV cache*: each step now runs only the newest {unit} "
    "through the model and adds one row of keys and one row of values to every layer."
)
st.markdown(
    f"How the new {unit} mixes, in four steps:\n"
    f"1. **Score**: its query times the key of every {unit} so far, its own included: a *dot product*, which "
    "multiplies two vectors number by number and adds the products up, so it is large when the two point the "
    f"same way ({lesson_ref('primer')} shows it live).\n"
    "2. **Softmax**: the scores become shares that add up to 1 — the *attention weights* drawn below.\n"
    "3. **Mix**: the output is the values added up by those shares.\n"
    "4. **Heads**: a layer runs several of these side by side, each with its own queries, keys and values."
)

settings = generation_settings("kv", DEFAULT_PROMPT, live)
cached, plain_series, checks = precompute(*settings)
if cached.stopped_at_window:
    st.info(
        f"The text fills the {cfg.block_size}-{unit} context window after {len(cached.traces)} new {unit}s, so "
        "generation **stops** there (it does not slide the window)."
    )
series = RunSeries(cached.traces)

st.subheader("Step through it")


def live_check_words(check, unit: str) -> str:
    """The cached-vs-recomputed check in words: how many steps agree, and by how much the scores differ
    (exactly equal, which the first steps often are, or by float rounding)."""
    if check.same_tokens != check.steps:
        agree = f"at only {check.same_tokens} of {check.steps} steps so far"
    else:
        agree = "at the first step" if check.steps == 1 else f"at all {check.steps} steps so far"
    scores = (
        "are exactly equal"
        if check.max_logit_difference == 0
        else f"differ by at most {format_small(check.max_logit_difference)} (float rounding: a computer keeps only "
        "the leading digits of each number, so the same sums added in another order can end in another digit)"
    )
    return (
        f"Live check: the cached run and a run that recomputes everything chose the same {unit} {agree}; "
        f"their scores for every possible next {unit} {scores}."
    )


def heatmap_caption(rows: int, prompt_length: int, t: int, live, ids: list[int]) -> str:
    """What to look at in the key/value heatmaps after step t: which rows the prompt wrote, the one
    row each later step appended (outlined), and why old rows keep their colour."""
    unit = live.unit
    columns = (
        "Columns are the head's *channels*: each column is one of the numbers in its key (left) or value "
        "(right) vector."
    )
    if rows == 0:
        return columns
    newest = f"row {rows - 1}, `{live.tokenizer.label(ids[rows - 1]).replace('`', 'ˋ')}`"
    if t <= 1:
        grew = f"the {prompt_length:,} rows of the prompt, all written at step 1; the last ({newest}) is outlined."
    else:
        grew = (
            f"rows 0–{prompt_length - 1} hold the prompt, written at step 1, and each of the {t - 1} steps since "
            f"appended **one row** at the bottom, for the {unit} it read: the newest, {newest}, is outlined."
        )
    return (
        f"**Look at the bottom edge.** After step {t} the cache holds {rows} rows: {grew} Red is positive, "
        "blue negative, on one colour range for the whole run, so an old row keeps its colour as you step: "
        f"it is never rewritten, only read. {columns}"
    )


@st.fragment
def stepper(
    live, settings: tuple, cached: GenerationRun, series: RunSeries, plain_series: RunSeries, checks: list
) -> None:
    """Step controls and everything that moves with them (and the layer and head pickers of the
    cache pictures): a Step click reruns only this part."""
    model, unit = live.model, live.unit
    cfg, per_token = model.config, model.cache_bytes_per_token()
    step = step_controls("kv_t", len(cached.traces), unit=unit, before_start="the finished run")
    t = step or len(cached.traces)  # before the first Step: the finished run, the cache at its fullest
    st.code(
        live.tokenizer.decode(cached.prompt_ids + cached.new_ids[:t]) or " ", language=None, wrap_lines=True
    )
    show_tokens(live, cached.prompt_ids + cached.new_ids[:t])

    rows = cached.traces[t - 1].position + 1 if t else 0  # cache rows after step t: one per byte read
    check = checks[min(t, len(checks) - 1)]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(
        "Positions run this step",
        series.positions_computed[t - 1] if t else "—",
        help=f"The first step reads the whole prompt (filling the cache); every later step reads one {unit}.",
    )
    m2.metric(
        "Rows in the cache", rows, help=f"One row of keys and one of values per {unit} read, in every layer."
    )
    m3.metric(
        "Cache held",
        format_bytes(series.cache_bytes[t - 1] if t else 0),
        help=f"{format_bytes(per_token)} per {unit}: K and V × {cfg.n_layer} layers × {cfg.d_model} numbers × "
        f"{model.element_bytes()} bytes.",
    )
    m4.metric(
        "Same output as without a cache?",
        "yes" if check.identical else "NO",
        delta=f"{check.same_tokens} of {check.steps} {unit}s identical",
        delta_color="off",
    )
    if t:
        st.caption(live_check_words(check, unit))
        show_top_next(live, cached.top[t - 1], key="kv_top5")
    show_cache_size(live)

    st.markdown(
        f"**The cache grows a row per {unit}.** Pick a layer and a head; each row is one {unit} the model has read."
    )
    s1, s2 = st.columns(2)
    layer = s1.selectbox("Layer", list(range(cfg.n_layer)), key="kv_layer")
    head = s2.selectbox("Head", list(range(cfg.n_head)), key="kv_head")
    figures = step_figures(settings, step, layer, head, cached) | run_figures(settings, cached, plain_series)
    show_figure(figures["heatmaps"], key="kv_heatmaps")
    st.caption(heatmap_caption(rows, len(cached.prompt_ids), t, live, cached.prompt_ids + cached.new_ids))
    if t:
        st.markdown(
            f"**What the newest {unit} looked at** (layer {layer}): attention weights over the cached rows."
        )
        show_figure(figures["attention"], key="kv_attention")

    charts_side_by_side(
        ("**Work: one position per step** (whole run)", figures["work"], "kv_work"),
        (f"**Time per {unit}, measured** (whole run)", figures["ms"], "kv_ms"),
    )
    show_figure(figures["grid"], key="kv_grid")
    st.caption(
        f"{grid_caption(grid_counts(cached.traces, step), len(cached.prompt_ids), unit)} Compare with "
        f"{lesson_ref('gpt2')}'s triangle."
    )


stepper(live, settings, cached, series, plain_series, checks)

st.subheader("The price: memory that grows")
show_figure(run_figures(settings, cached, plain_series)["bytes"], key="kv_bytes")
st.markdown(
    f"{'This model' if live.real else 'This tiny model'} keeps **{format_bytes(per_token)} per {unit}** "
    f"({cfg.n_layer} layers × K and V × {cfg.d_model} numbers × {model.element_bytes()} bytes), so its full "
    f"{cfg.block_size}-{unit} window holds {format_bytes(per_token * cfg.block_size)}. "
    f"{'Larger' if live.real else 'Real'} models keep far more per token, and chats run to "
    "hundreds of thousands of tokens."
)

st.subheader("The new bottleneck: reading memory")
st.markdown(
    "With a cache the arithmetic per token is small, but to write one token of one conversation (batch 1) the "
    "card must **read every weight and the whole cache** from its memory. A graphics card multiplies far faster than its memory can deliver "
    "numbers, so the time per token is about *bytes read ÷ memory bandwidth* (bandwidth = bytes per second the "
    "memory delivers). The longer the chat, the more cache to read, the slower each token. And once weights plus "
    "cache outgrow the card's memory (VRAM), the model *spills* into the computer's main memory and speed "
    "falls off a cliff."
)
with st.expander("Where the overflow goes, and why it is a cliff", icon=":material/engineering:"):
    st.markdown(
        "A batch of sequences shares one read of the weights "
        f"(the planner, {lesson_ref('planner')}, has a batch setting). Once weights plus cache outgrow VRAM, part "
        "of the model has to live in the computer's main memory. In programs that run models at home (llama.cpp, "
        "Ollama) that "
        "usually means the **CPU computes the offloaded layers** from main memory, many times slower than the "
        "card; a few other setups stream the overflow over the PCIe link each step. Either way speed falls off a "
        "cliff — the drop the article *From GPT-2 to Kimi K3* (2026) measured on a 12 GB card, and llama.cpp's "
        f"own `-ngl` sweep shows ({NGL_SWEEP[0]:.1f} → {NGL_SWEEP[-1]:.1f} tokens/s as layers move to the CPU; "
        "the README of llama-bench, llama.cpp's speed-test tool)."
    )
planner_batch_link()
st.markdown("**Calculator: a real model on a real card** (a prediction from memory traffic alone).")
k1, k2, k3 = st.columns(3)
spec_key = k1.selectbox(
    "Model",
    list(SPECS),
    format_func=lambda k: SPECS[k].name,
    key="kv_spec",
    index=list(SPECS).index("llama3_8b") if "llama3_8b" in SPECS else 0,
)
card_key = k2.selectbox(
    "Card",
    list(CARDS),
    format_func=lambda k: CARDS[k].name,
    key="kv_card",
    index=list(CARDS).index(DEFAULT_CARD),
)
precision = k3.selectbox(
    "Weights stored as",
    list(PRECISIONS),
    key="kv_precision",
    index=2,
    help="Hobbyists usually run 4-bit weights on a 12 GB card; 16-bit 8B weights alone fill about 15 GiB.",
)
context = st.select_slider(
    "Context length (tokens)", CONTEXTS, value=32768, format_func=format_context, key="kv_context"
)
spec, card, wbytes = SPECS[spec_key], CARDS[card_key], PRECISIONS[precision]

at = predict(spec, context, card, wbytes)
spill = spill_context(spec, card, wbytes)
c1, c2, c3, c4 = st.columns(4)
c1.metric("KV cache per token", format_bytes(spec.kv_cache_bytes_per_token()), help="16-bit cache entries.")
c2.metric(f"Cache at {format_context(context)} tokens", format_bytes(spec.cache_bytes(context)))
c3.metric("Weights", format_bytes(weight_bytes(spec, wbytes)))
if not at.weights_fit:
    c4.metric("Spills at (tokens)", "at once", help="Its weights alone do not fit in this card's memory.")
elif spill is None:
    c4.metric("Spills at (tokens)", "never")
else:
    c4.metric(
        "Spills at (tokens)",
        f"{spill:,}",
        help="Context length at which weights + cache no longer fit in VRAM.",
    )
show_figure(speed_figure(spec_key, card_key, wbytes), key="kv_speed")
if at.tokens_per_s is not None:
    ratio = slowdown(spec, card, context, wbytes)
    st.markdown(
        f"Predicted at {format_context(context)} tokens: **{at.tokens_per_s:,.1f} tokens/s**, "
        f"{ratio:.0%} of its speed with an empty context"
        + (
            f"; {format_bytes(at.spilled_bytes)} of every step's reads cross the host link."
            if at.spilled
            else "."
        )
    )
else:
    st.warning(doesnt_fit_advice(spec, card, precision))
if spec.context and context > spec.context:
    st.caption(
        f"{spec.name} was trained for {format_context(spec.context)} tokens: at {format_context(context)} this is "
        "what its memory traffic would be, not what the model can do (the map and the planner say the same)."
    )
st.caption(
    "Upper bound from bytes read per token at batch 1 (one conversation) and the card's bandwidth. "
    "Measured runs stay below it: llama-bench (llama.cpp's speed-test tool) "
    f"with Llama 8B (Q4_0) and an 8-bit cache on an RTX 3090 reached {shares_words()} of such a bound, the bound "
    "worked out by the planner for that "
    "setting (a community report: a pull request's text in the Abai/llama.cpp fork, 2026). Q4_0 stores about "
    "4.5 bits a weight; the 4-bit here counts 4.0, so this bound is higher. Cache entries are 16-bit. "
    "Units: memory in GiB (2³⁰ bytes), bandwidth in GB/s (10⁹ bytes per second, as card makers quote it); a "
    "'12 GB' card is counted as 12 GiB. Source of the card numbers and configs: core/roofline.py, core/specs/."
)

notice(
    "With the cache on, will step 100 take longer than step 10?",
    f"Hardly, in {'this model' if live.real else 'this tiny model'} — each step runs one position, and reading "
    "100 cached rows instead of 10 is cheap here. In a big model with a long chat the cache read *does* "
    "dominate, which is the bottleneck above.",
    key="kv_notice_speed",
)
notice(
    f"Will the cached model ever write a different {unit} than the plain one?",
    "No — it computes exactly the same numbers, just without redoing them. The live check above compares the two "
    "runs at every step; any difference is float rounding (at most "
    f"{format_small(max(c.max_logit_difference for c in checks))} in this run), far too small to change a choice.",
    key="kv_notice_same",
)
formula(
    r"o_t = \sum_{i \le t} \operatorname{softmax}_i\!\Big(\tfrac{q_t \cdot k_i}{\sqrt{d}}\Big)\, v_i"
    r"\qquad \text{cache}_t = [k_1 \dots k_t],\,[v_1 \dots v_t]"
    r"\qquad \text{bytes} = t \cdot 2 \cdot L \cdot d_{\text{model}} \cdot b",
    caption="Only q_t, k_t, v_t are new at step t; every earlier k_i, v_i comes from the cache. "
    "L layers, b bytes per number.",
    key="kv_formula",
)
code(KVCache.store, CausalSelfAttention.forward, compare_runs_per_step, key="kv_code")
still_missing(
    "The cache trades computing for remembering: it grows by a row per token, forever, and every token must "
    "read all of it. Could a model remember in a space of **fixed** size, however long the text?"
)
next_lesson("kv_cache")
