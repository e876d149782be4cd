"""KV cache: keep what you computed — and watch the memory grow."""

from __future__ import annotations

import streamlit as st

from core.figures.cache_pictures import (
    HeadCache,
    attention_figure,
    attention_step,
    cache_heatmaps_figure,
    cache_heatmaps_step,
)
from core.figures.generation import cache_bytes_figure, ms_per_token_figure, work_figure
from core.figures.recompute_grid import grid_counts, recompute_grid_figure, recompute_grid_step
from core.generation import GenerationRun, run_generation
from core.i18n import N_, _
from core.models.gpt2 import CausalSelfAttention, KVCache
from core.models.gpt2_cache import RunComparison, RunSeries, compare_runs_per_step, positions_computed_formula
from core.specs.published import published_row, result_speeds
from core.units import format_bytes, format_small
from ui.card_calculator import card_calculator
from ui.charts import charts_side_by_side, ready_chart, show_figure
from ui.course import lesson_ref
from ui.deeper import planner_batch_link
from ui.depth import engineer, engineer_section
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing
from ui.models.gpt2 import (
    LiveGPT2,
    RunSettings,
    choose_model,
    generation_settings,
    say_if_the_window_filled,
    show_cache_size,
    show_tokens,
    show_top_next,
)
from ui.run_captions import HEATMAP_COLUMNS, grid_caption, heatmap_caption, live_check_words
from ui.stepped import Stepped, built_once, step_controls, stepped_figures

DEFAULT_PROMPT = "The cache "
GRID_TITLE = N_("Which positions the model ran at each step, with a cache")  # translated where shown
# llama.cpp's own -ngl sweep (llama-bench README): tokens/s as layers move from the card to the CPU
NGL_SWEEP = result_speeds(published_row("spill", "Llama 7B Q4_0"))


@st.cache_data(show_spinner=False, max_entries=32)
def precompute(
    settings: RunSettings, _live: LiveGPT2
) -> tuple[GenerationRun, RunSeries, list[RunComparison]]:
    """The cached run in full; of the recomputing run only its per-step numbers and the live check
    (`_live` is the model `settings.model` names: it is not hashed)."""
    runs = [
        run_generation(
            _live.model,
            list(settings.prompt),
            settings.new_tokens,
            use_cache=use_cache,
            sampling=settings.sampling,
            **_live.run_options,
        )
        for use_cache in (True, False)
    ]
    cached, plain = runs
    checks = compare_runs_per_step(cached, plain)  # needs every step's logits; dropped after
    return cached.without_logits(), RunSeries(plain.traces), checks


def run_figures(live: LiveGPT2, settings: RunSettings, cached: GenerationRun, plain: RunSeries) -> dict:
    """Whole-run charts (work, time, bytes), built once per settings and shared read-only."""

    def build() -> dict:
        series = RunSeries(cached.traces)
        p, n = len(cached.prompt_ids), len(series.steps)
        formula_plain = [positions_computed_formula(p, s, use_cache=False) for s in series.steps]
        per_token, unit = live.model.cache_bytes_per_token(), live.unit
        figures = {
            "work": work_figure(
                series.steps, plain.cumulative_work, formula_plain, series.cumulative_work, shown=n
            ),
            "ms": ms_per_token_figure(series.text_lengths, plain.wall_ms, series.wall_ms, shown=n, unit=unit),
            "bytes": cache_bytes_figure(series.text_lengths, series.cache_bytes, n, per_token, unit=unit),
        }
        return {name: ready_chart(figure) for name, figure in figures.items()}

    return built_once("kv_run", settings, build)


def step_figures(
    live: LiveGPT2, settings: RunSettings, step: int, layer: int, head: int, cached: GenerationRun
) -> dict:
    """The pictures at `step` (0: the finished run, the grid framing its first dozen steps), each
    built once per (settings, layer, head) at the last step and patched per step (see
    ui/stepped.py), so a warm rerun or a Back click only re-sends them."""
    n = len(cached.traces)
    t = step or n  # the step the cache pictures show
    label, unit = live.tokenizer.label, live.unit
    final = cached.traces[-1].layers[layer]
    all_ids = cached.prompt_ids + cached.new_ids
    p, max_rows = len(cached.prompt_ids), final.keys.shape[1]
    head_cache = HeadCache(final.keys, final.values, head, all_ids, label)

    def heatmaps(base: dict, step: int):
        # cache rows after the step: one per byte read
        rows = cached.traces[(step or n) - 1].position + 1 if n else 0
        return cache_heatmaps_step(base, head_cache, rows)

    parts = {
        "heatmaps": Stepped(
            base=lambda: cache_heatmaps_figure(head_cache, max_rows, unit),
            patch=heatmaps,
        ),
        "grid": Stepped(
            base=lambda: recompute_grid_figure(cached.traces, n, p, GRID_TITLE, unit=unit),
            patch=lambda base, step: recompute_grid_step(base, cached.traces, step, GRID_TITLE),
            base_key=settings,
        ),
    }
    if t and engineer():  # what the newest token looked at: a second idea, for engineers
        parts["attention"] = Stepped(
            base=lambda: attention_figure(final.attention, all_ids, max_rows, label, unit),
            patch=lambda base, step: attention_step(
                base, cached.traces[(step or n) - 1].layers[layer].attention, max_rows
            ),
        )
    return stepped_figures("kv", (settings, layer, head), step, parts)


lesson_header("kv_cache")
new_words(
    "dot_product", "softmax", "attention_weights", "vram", "batch",
    engineer_keys=("bandwidth", "pcie", "roofline", "q4_0", "ngl", "llama_cpp", "ollama"), here="kv_cache",
)  # fmt: skip
problem(
    _(
        "Without a cache, the model re-read the whole text for every new token, so each step got slower and the "
        "total work grew with the *square* of the length. Yet the numbers it recomputed for old tokens never "
        "changed: token 3 only looks at tokens 0–3, whatever comes later."
    )
)

live = choose_model("kv")
model, unit = live.model, live.unit_word
cfg = model.config
per_token = model.cache_bytes_per_token()

st.markdown(
    _(
        "Inside every layer, each {unit} becomes three vectors: a **query** (what am I looking for?), a **key** "
        "(what do I contain?) and a **value** (what do I hand over if picked). A new {unit} compares its query "
        "with the keys of all earlier {unit}s and mixes their values. Old keys and values never change — so **keep "
        "them**: that store is the *KV cache*. Each step now runs only the newest {unit} and adds one row of keys "
        "and one of values to every layer."
    ).format(unit=unit)
)
st.markdown(
    _(
        "How the new {unit} mixes:\n"
        "1. **Score**: a *dot product* of its query with the key of every {unit} so far, its own included "
        "(multiply number by number, add up: large when the two point the same way; {primer} shows it live).\n"
        "2. **Softmax**: the scores become shares that add up to 1, the *attention weights*.\n"
        "3. **Mix**: the output is the values added up by those shares.\n\n"
        "A layer runs several of these side by side, each a *head* with its own queries, keys and values."
    ).format(unit=unit, primer=lesson_ref("primer"))
)

settings = generation_settings("kv", DEFAULT_PROMPT, live)
with st.spinner(_("Generating with and without the cache…")):
    cached, plain_series, checks = precompute(settings, _live=live)
say_if_the_window_filled(cached, live)
series = RunSeries(cached.traces)

st.subheader(_("Step through it"))


@st.fragment
def stepper(
    live: LiveGPT2,
    settings: RunSettings,
    cached: GenerationRun,
    series: RunSeries,
    plain_series: RunSeries,
    checks: list[RunComparison],
) -> None:
    """Step controls and everything that moves with them (and the layer and head pickers of the
    cache pictures): a Step click reruns only this part."""
    model, unit = live.model, live.unit_word
    cfg, per_token = model.config, model.cache_bytes_per_token()
    step = step_controls("kv_t", len(cached.traces), unit=unit, before_start=_("the finished run"))
    t = step or len(cached.traces)  # before the first Step: the finished run, the cache at its fullest
    st.code(
        live.tokenizer.decode(cached.prompt_ids + cached.new_ids[:t]) or " ", language=None, wrap_lines=True
    )
    show_tokens(live, cached.prompt_ids + cached.new_ids[:t])

    rows = cached.traces[t - 1].position + 1 if t else 0  # cache rows after step t: one per byte read
    check = checks[min(t, len(checks) - 1)]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(
        _("Positions run this step"),
        series.positions_computed[t - 1] if t else "—",
        help=_(
            "The first step reads the whole prompt (filling the cache); every later step reads one {unit}."
        ).format(unit=unit),
    )
    m2.metric(
        _("Rows in the cache"),
        rows,
        help=_("One row of keys and one of values per {unit} read, in every layer.").format(unit=unit),
    )
    m3.metric(
        _("Cache held"),
        format_bytes(series.cache_bytes[t - 1] if t else 0),
        help=_("{size} per {unit}: K and V × {layers} layers × {width} numbers × {element} bytes.").format(
            size=format_bytes(per_token),
            unit=unit,
            layers=cfg.n_layer,
            width=cfg.d_model,
            element=model.element_bytes(),
        ),
    )
    m4.metric(
        _("Same output as without a cache?"),
        _("yes") if check.identical else _("NO"),
        delta=_("{same} of {steps} {unit}s identical").format(
            same=check.same_tokens, steps=check.steps, unit=unit
        ),
        delta_color="off",
    )
    if engineer():  # the check in numbers, the model's guesses, the live cache size
        if t:
            st.caption(live_check_words(check, live.unit))
            show_top_next(live, cached.top[t - 1], key="kv_top5")
        show_cache_size(live)

    st.markdown(
        _(
            "**The cache grows a row per {unit}.** Pick a layer and a head; each row is one {unit} the model has read."
        ).format(unit=unit)
    )
    s1, s2 = st.columns(2)
    layer = s1.selectbox(_("Layer"), list(range(cfg.n_layer)), key="kv_layer")
    head = s2.selectbox(_("Head"), list(range(cfg.n_head)), key="kv_head")
    figures = step_figures(live, settings, step, layer, head, cached)
    if engineer():  # the whole-run charts are the engineers'
        figures |= run_figures(live, settings, cached, plain_series)
    show_figure(figures["heatmaps"], key="kv_heatmaps")
    st.caption(heatmap_caption(rows, len(cached.prompt_ids), t, live, cached.prompt_ids + cached.new_ids))
    if engineer() and rows:
        st.caption(_(HEATMAP_COLUMNS))
    if t and engineer():
        st.markdown(
            _(
                "**What the newest {unit} looked at** (layer {layer}): attention weights over the cached rows."
            ).format(unit=unit, layer=layer)
        )
        show_figure(figures["attention"], key="kv_attention")

    if engineer():
        charts_side_by_side(
            (_("**Work: one position per step** (whole run)"), figures["work"], "kv_work"),
            (_("**Time per {unit}, measured** (whole run)").format(unit=unit), figures["ms"], "kv_ms"),
        )
    show_figure(figures["grid"], key="kv_grid")
    caption = grid_caption(grid_counts(cached.traces, step), len(cached.prompt_ids), live.unit, cached=True)
    st.caption(
        _("{caption} Compare with {lesson}'s triangle.").format(caption=caption, lesson=lesson_ref("gpt2"))
    )


stepper(live, settings, cached, series, plain_series, checks)

st.subheader(_("The price: memory that grows"))
if engineer():
    show_figure(run_figures(live, settings, cached, plain_series)["bytes"], key="kv_bytes")
if live.real:
    held = _(
        "This model keeps **{size} per {unit}**, so its full {window}-{unit} window holds {full}. Larger models "
        "keep far more per token, and chats run to hundreds of thousands of tokens."
    )
else:
    held = _(
        "This tiny model keeps **{size} per {unit}**, so its full {window}-{unit} window holds {full}. Real models "
        "keep far more per token, and chats run to hundreds of thousands of tokens."
    )
st.markdown(
    held.format(
        size=format_bytes(per_token),
        unit=unit,
        window=cfg.block_size,
        full=format_bytes(per_token * cfg.block_size),
    )
)
if engineer():
    st.caption(
        _("{size} per {unit} = {layers} layers × K and V × {width} numbers × {element} bytes.").format(
            size=format_bytes(per_token),
            unit=unit,
            layers=cfg.n_layer,
            width=cfg.d_model,
            element=model.element_bytes(),
        )
    )

st.subheader(_("The new bottleneck: reading memory"))
st.markdown(
    _(
        "With a cache each token needs little arithmetic, but to write a token of one conversation (batch 1) the "
        "card must still **read every weight and the whole cache** from its memory, and memory delivers numbers far slower than the card multiplies "
        "them. So the longer the chat, the slower each token. And once weights plus cache outgrow the card's "
        "memory (VRAM), the model *spills* into the computer's main memory and speed falls off a cliff."
    )
)
if engineer():
    st.markdown(
        _(
            "For one conversation at a time (*batch 1*) the time per token is about *bytes read ÷ memory "
            "bandwidth* (bandwidth = bytes per second the memory delivers)."
        )
    )
if engineer_section(_("Where the overflow goes, and why it is a cliff")):
    st.markdown(
        _(
            "A batch of sequences shares one read of the weights "
            "(the planner, {planner}, has a batch setting). Once weights plus cache outgrow VRAM, part "
            "of the model has to live in the computer's main memory. In programs that run models at home "
            "(llama.cpp, Ollama) that "
            "usually means the **CPU computes the offloaded layers** from main memory, many times slower than the "
            "card; a few other setups stream the overflow over the PCIe link each step. Either way speed falls off "
            "a cliff — the drop the article *From GPT-2 to Kimi K3* (2026) measured on a 12 GB card, and "
            "llama.cpp's own `-ngl` sweep shows ({first:.1f} → {last:.1f} tokens/s as layers move to the CPU; "
            "the README of llama-bench, llama.cpp's speed-test tool)."
        ).format(planner=lesson_ref("planner"), first=NGL_SWEEP[0], last=NGL_SWEEP[-1])
    )
if engineer():
    planner_batch_link()
    card_calculator(key="kv")

if live.real:
    speed_answer = _(
        "Hardly, in this model — each step runs one position, and reading 100 cached rows instead of 10 is cheap "
        "here. In a big model with a long chat the cache read *does* dominate, which is the bottleneck above."
    )
else:
    speed_answer = _(
        "Hardly, in this tiny model — each step runs one position, and reading 100 cached rows instead of 10 is "
        "cheap here. In a big model with a long chat the cache read *does* dominate, which is the bottleneck above."
    )
notice(
    _("With the cache on, will step 100 take longer than step 10?"),
    speed_answer,
    key="kv_notice_speed",
)
notice(
    _("Will the cached model ever write a different {unit} than the plain one?").format(unit=unit),
    _(
        "No — it computes exactly the same numbers, just without redoing them. The live check above compares the "
        "two runs at every step; any difference is float rounding (at most {difference} in this run), far too "
        "small to change a choice."
    ).format(difference=format_small(max(c.max_logit_difference for c in checks))),
    key="kv_notice_same",
)
formula(
    r"o_t = \sum_{i \le t} \operatorname{softmax}_i\!\Big(\tfrac{q_t \cdot k_i}{\sqrt{d}}\Big)\, v_i"
    r"\qquad \text{cache}_t = [k_1 \dots k_t],\,[v_1 \dots v_t]"
    r"\qquad \text{bytes} = t \cdot 2 \cdot L \cdot d_{\text{model}} \cdot b",
    caption=_(
        "Only q_t, k_t, v_t are new at step t; every earlier k_i, v_i comes from the cache. L layers, b bytes per "
        "number."
    ),
    key="kv_formula",
)
code(KVCache.store, CausalSelfAttention.forward, compare_runs_per_step, key="kv_code")
still_missing(
    _(
        "The cache trades computing for remembering: it grows by a row per token, forever, and every token must "
        "read all of it. Could a model remember in a space of **fixed** size, however long the text?"
    )
)
next_lesson("kv_cache")
