"""Kimi K3: three boards to one full-attention layer, and a look back over depth."""

from __future__ import annotations

import streamlit as st

from core.figures.attn_res_heatmap import attn_res_figure, attn_res_step
from core.figures.k3_memory import (
    layer_memory_figure,
    layer_memory_step,
    memory_over_time_figure,
    memory_over_time_step,
)
from core.figures.layer_map import k3_layer_map
from core.i18n import _, language, ngettext
from core.models import mini_k3, mini_k3_trace
from core.ops.attn_res import BlockResidualStream, attn_res
from core.plan import attention_twin
from core.specs import SPECS, attn_res_block_starts
from core.tokenizer import decode, prepare_prompt, token_label
from core.units import format_bytes, format_count, format_params
from ui.charts import charts_side_by_side, ready_chart, show_figure
from ui.course import lesson_ref
from ui.deeper import go_deeper_k3, planner_batch_link
from ui.depth import engineer, in_depth
from ui.glossary import new_words
from ui.k3_details import CONTEXTS, map_caption, memory_chart
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, prompt_input, still_missing
from ui.mini_k3 import live_run, mini_k3_or_none
from ui.stepped import Stepped, built_once, step_controls, stepped_figures
from ui.text import code_span

K3 = SPECS["kimi_k3"]
MAX_PROMPT = 40  # bytes of the reader's text that mini-K3 reads (then it writes NEW_TOKENS more)
NEW_TOKENS = 16


def k3_map_figure():
    """The real K3's layer map (fixed by its config): built once per process, shared read-only."""
    return built_once("k3_map", None, lambda: ready_chart(k3_layer_map(K3)))


def step_figures(ids: tuple[int, ...], shown: int, run: mini_k3_trace.RunSummary, memory: bool = True) -> dict:
    """The pictures after byte `shown`: built once per text at its last byte, patched per byte. Without
    `memory` (Story depth) only the AttnRes heatmap: the memory charts are Engineer-only."""
    last = len(run.tokens_in)
    pairs = {
        "layers": (layer_memory_figure, layer_memory_step),
        "time": (memory_over_time_figure, memory_over_time_step),
        "attn_res": (attn_res_figure, attn_res_step),
    }
    if not memory:
        pairs = {"attn_res": pairs["attn_res"]}
    parts = {
        name: Stepped(base=lambda b=build: b(run, last), patch=lambda base, t, p=patch: p(base, run, t))
        for name, (build, patch) in pairs.items()
    }
    return stepped_figures("k3", ids, shown, parts)


lesson_header("kimi_k3")
new_words("embedding", "attn_res", "pseudo_query", "dense", engineer_keys=("rmsnorm", "ffn"), here="kimi_k3")
problem(
    _(
        "A fixed board, even one that forgets per channel, cannot hold everything: an exact detail from far "
        "back may have faded or been overwritten. Full attention never forgets, but its cache grows with every "
        "token. And a deep stack adds every layer's output into one running sum (the residual), so what an "
        "early layer found gets buried."
    )
)

st.markdown(
    _(
        "Kimi K3 (July 2026) **stacks both** kinds of memory. Three layers in every four use **KDA**, the "
        "forgetting board from {lesson}. The fourth uses full attention in a compressed form, **MLA**, which "
        "caches one short summary per token, so those layers can still look back at every token, including what "
        "the boards have let fade."
    ).format(lesson=lesson_ref("forgetting"))
)
if engineer():
    st.markdown(
        _(
            "KDA is **Kimi Delta Attention**. MLA is *multi-head latent attention*: instead of full keys and "
            "values it caches one short summary vector per token, and serving engines never expand it: they fold "
            "the up-projections into the query and the output, so attention reads the cached vector directly "
            "(DeepSeek-V2, §2.1.2)."
        )
    )

# -- 1. The real layer map ------------------------------------------------------------------
st.subheader(_("The real layer map"))
kinds = K3.layer_kinds()
c = st.columns(4)
c[0].metric(_("layers"), K3.num_layers)
c[1].metric(_("KDA layers (fixed boards)"), K3.num_linear_layers)
c[2].metric(_("MLA layers (growing cache)"), K3.num_full_attention_layers)
c[3].metric(_("AttnRes blocks"), len(attn_res_block_starts(K3.num_layers, K3.attn_res_block_size)))
show_figure(k3_map_figure(), key="k3_map")
st.caption(
    _(
        "One square per layer, {block} to a row: hatched = KDA (a fixed board), solid = MLA (a growing "
        "cache), every fourth column."
    ).format(block=K3.attn_res_block_size)
)
if engineer():
    map_caption()

# -- 2. Memory per conversation -------------------------------------------------------------
st.subheader(_("What one long conversation costs"))
rows = attention_twin.memory_at_contexts(K3, list(CONTEXTS))
twin = attention_twin.full_attention_twin(K3)
c = st.columns(3)
c[0].metric(_("cache per token, K3"), format_bytes(K3.kv_cache_bytes_per_token()))
c[1].metric(
    _("cache per token, all {n} layers MLA").format(n=K3.num_layers),
    format_bytes(twin.kv_cache_bytes_per_token()),
)
c[2].metric(
    _("fixed state (any length)"),
    format_bytes(K3.state_bytes()),
    help=_(
        "{boards} of KDA boards ({layers} layers × {heads} heads, fp32) + {conv} of short-convolution "
        "buffers (bf16)"
    ).format(
        boards=format_bytes(K3.recurrent_state_bytes()),
        layers=K3.num_linear_layers,
        heads=K3.linear.v_heads,
        conv=format_bytes(K3.conv_state_bytes()),
    ),
)
memory_chart(  # Story's sentence; Engineer: the chart and the full caption in its place
    rows,
    _(
        "Only the {mla} MLA layers grow; the boards stay {state} at any length. At 1M tokens K3 keeps "
        "{ratio:.1f}× less than the same model with MLA in every layer."
    ).format(
        mla=K3.num_full_attention_layers,
        state=format_bytes(K3.state_bytes()),
        ratio=rows[-1].twin_cache / rows[-1].hybrid_total,
    ),
)

# -- 3. Attention Residuals -------------------------------------------------------------------
st.subheader(_("Looking back over depth: Attention Residuals"))
in_depth(
    _(
        "A plain stack hands each layer the sum of all earlier outputs, each with weight 1. **Attention "
        "Residuals** (AttnRes) let a layer choose: a learned vector (a *pseudo-query*) weighs the earlier "
        "outputs, so a late layer can reach straight back to an early one. To keep it cheap, K3 weighs blocks "
        "of {size} layers."
    ).format(size=K3.attn_res_block_size),
    _(
        "In an ordinary stack, the input to layer *l* is the plain sum of everything before it: the "
        "token's embedding plus every earlier layer's output, each with weight 1. **Attention "
        "Residuals** (AttnRes, Kimi Team 2026, arXiv 2603.15031) replace that sum by attention **over depth**: "
        "each sub-layer owns one learned vector (a *pseudo-query*) and uses it to weigh the earlier outputs "
        "with a softmax — so a late layer can reach straight back to what an early one found. K3 has **two "
        "pseudo-queries per layer**, one before its attention and one before its feed-forward step, plus "
        "**a final one** before the output head (the last matrix, which turns the final vector into a score "
        "for every possible next token)."
    ),
)
if engineer():  # the block form, which Story says in one sentence
    st.markdown(
        _(
            "Remembering every layer's output per token would be costly, so K3 uses the **block** form: "
            "{size} layers in a row are summed as usual into one *block* (a group of layers here, "
            "not GPT-2's attention + feed-forward block), and each layer "
            "attends over the embedding, the finished blocks and the block it is filling. It is done "
            "before every attention and every feed-forward step. Nothing is added to the cache: it "
            "mixes the current token's own layer outputs."
        ).format(size=K3.attn_res_block_size)
    )


def byte_metrics(run: mini_k3_trace.RunSummary, shown: int, cfg) -> None:
    """Memory held after byte `shown`: the boards stay, the caches grow (and, for engineers, the step's time)."""
    boards, cache, growth = run.memory_at(shown)
    c = st.columns(3 if engineer() else 2)
    c[0].metric(
        _("KDA boards ({layers} layers × {heads} heads)").format(
            layers=run.kinds.count("kda"), heads=cfg.kda_heads
        ),
        format_bytes(boards),
    )
    c[1].metric(
        _("MLA caches ({layers} layers)").format(layers=run.kinds.count("mla")),
        format_bytes(cache),
        delta=format_bytes(growth) if growth is not None else None,
        delta_color="off",
    )
    if engineer():
        c[2].metric(_("this step took"), f"{run.wall_ms[shown - 1]:.0f} ms")


def strongest_pull_words(run: mini_k3_trace.RunSummary, shown: int) -> None:
    """The one-line takeaway under the AttnRes heatmap: its most lopsided row, read from the data."""
    pull = mini_k3_trace.strongest_pull(run, shown)
    if pull is None:
        return
    pull_words = (
        _(
            "**What to see:** for this byte, **{mix}** leans hardest on one source — it gives "
            "**{weight:.2f}** of its mix to the **{source}**, where an even split over its "
            "{sources} sources would give each {even:.2f} — far from a plain average: training taught "
            "this mix where to look."
        )
        if pull.far_from_even
        else _(
            "**What to see:** for this byte, **{mix}** leans hardest on one source — it gives "
            "**{weight:.2f}** of its mix to the **{source}**, where an even split over its "
            "{sources} sources would give each {even:.2f} — close to a plain average, even in the most "
            "lopsided row."
        )
    )
    st.markdown(
        pull_words.format(
            mix=pull.mix, weight=pull.weight, source=pull.source, sources=pull.sources, even=pull.even
        )
    )


def experts_woken(run: mini_k3_trace.RunSummary, shown: int, cfg) -> None:
    """Which experts this byte woke in each MoE layer (Engineer: the next lesson's subject)."""
    picks = [
        ngettext(
            "layer {layer} → expert {experts}", "layer {layer} → experts {experts}", len(experts)
        ).format(layer=i + 1, experts=_(" and ").join(str(e) for e in experts))
        for i, experts in enumerate(run.experts[shown - 1])
        if experts is not None
    ]
    st.markdown(
        _(
            "Experts this byte woke (the small feed-forward networks a layer is split into; {k} of "
            "{n} per layer run for each byte, plus {shared} shared; {lesson}): {picks}"
        ).format(
            k=cfg.top_k,
            n=cfg.num_experts,
            shared=cfg.num_shared_experts,
            lesson=lesson_ref("experts"),
            picks=" · ".join(picks),
        )
    )


@st.fragment
def stepper(run: mini_k3_trace.RunSummary, ids: tuple[int, ...], cfg) -> None:
    """Step controls and everything that moves with them: a Step click reruns only this part. Story shows
    the AttnRes heatmap (the idea); the memory charts are built only at Engineer depth."""
    total = len(run.tokens_in)
    t = step_controls("k3_step", total, unit=_("byte"), before_start=_("the whole run"))
    shown = t if t > 0 else total

    read = decode(run.tokens_in[:shown])
    line = (
        _("Byte {shown} of {total} (your text): **{byte}** · its guess for the next byte: **{guess}**")
        if shown <= run.prompt_length
        else _(
            "Byte {shown} of {total} (its own writing): **{byte}** · its guess for the next byte: **{guess}**"
        )
    )
    st.markdown(
        line.format(
            shown=shown,
            total=total,
            byte=code_span(token_label(run.tokens_in[shown - 1])),
            guess=code_span(token_label(run.tokens_out[shown - 1])),
        )
    )
    st.code(read or " ", language=None, wrap_lines=True)
    byte_metrics(run, shown, cfg)

    figures = step_figures(ids, shown, run, engineer())
    if engineer():
        charts_side_by_side(
            ("", figures["layers"], "k3_layer_memory"), ("", figures["time"], "k3_memory_time")
        )
        st.caption(
            _("The fixed KDA boards stay flat; only the attention layers' cache grows, a little per byte.")
        )
    show_figure(figures["attn_res"], key="k3_attn_res")
    in_depth(
        _("Rows: each layer's mix, top to bottom. Columns: what it draws on. Darker = more weight."),
        _(
            "Rows: the mix before each sub-layer (and before the output). Columns: the sources — the "
            "embedding and one sum per block; the block a layer is still filling is its running partial "
            "sum. Blank cells do not exist yet at that depth. Each row sums to 1."
        ),
        show=st.caption,
    )
    strongest_pull_words(run, shown)
    if engineer():
        experts_woken(run, shown, cfg)


# -- 4. mini-K3 live --------------------------------------------------------------------------
st.subheader(_("mini-K3, live"))
net = mini_k3_or_none()

if net is not None:
    cfg = net.cfg
    schedule = " ".join("A" if k == "mla" else "K" for k in net.kinds)
    in_depth(
        _(
            "mini-K3 is a tiny model built the same way: **{layers} layers** `{schedule}` (K = KDA, A = "
            "attention). It reads your text, then writes {new} bytes of its own."
        ).format(layers=cfg.num_layers, schedule=schedule, new=NEW_TOKENS),
        _(
            "A byte-level miniature built by the same rule: **{layers} layers** `{schedule}` "
            "(K = KDA, A = latent attention: every {every}th layer and the last), Block "
            "AttnRes with {block} layers per block, a *dense* first layer (one ordinary "
            "feed-forward network that every byte runs) and, after it, layers split into *experts* (several "
            "small feed-forward networks, of which each byte runs only a few) — {params:,} "
            "parameters, trained on the course corpus "
            "(see assets/mini_k3/MODEL_CARD.md). It reads your text, then keeps writing "
            "{new} bytes of its own."
        ).format(
            layers=cfg.num_layers,
            schedule=schedule,
            every=cfg.full_attn_every,
            block=cfg.attn_res_block_size,
            params=net.num_params(),
            new=NEW_TOKENS,
        ),
    )
    text = prompt_input("k3_prompt", "The cache grows, but the board stays.", max_chars=200)
    prompt = prepare_prompt(text, MAX_PROMPT)
    if prompt.was_cut:
        st.info(prompt.note())
    run = live_run(tuple(prompt.ids), NEW_TOKENS, language())
    total = len(run.tokens_in)
    stepper(run, tuple(prompt.ids), cfg)

if net is not None and engineer():  # about the per-layer memory chart, drawn at Engineer depth only
    mla_layers = ", ".join(str(i + 1) for i, k in enumerate(net.kinds) if k == "mla")
    notice(
        _("Step through a few bytes. Which bars in the per-layer memory chart move, and which never do?"),
        _(
            "Only layers {mla} — the latent-attention layers — grow, by ({latent} + {key}) numbers × 4 bytes = "
            "{per_byte} bytes per byte read. Each KDA layer's boards stay at {heads} heads × {dim} × {dim} × "
            "4 bytes = {board} from the first byte to the last."
        ).format(
            mla=mla_layers,
            latent=net.cfg.kv_latent_dim,
            key=net.cfg.shared_key_dim,
            per_byte=net.cfg.latent_bytes_per_token(),
            heads=net.cfg.kda_heads,
            dim=net.cfg.kda_head_dim,
            board=format_bytes(net.cfg.board_bytes()),
        ),
        key="k3_n1",
    )
if engineer():  # a second question on memory; Story asks about the AttnRes heatmap
    notice(
        _(
            "K3 keeps {per_token} of cache per token. How long must a conversation be before its {mla} growing "
            "caches outweigh the fixed boards of its {kda} KDA layers?"
        ).format(
            per_token=format_bytes(K3.kv_cache_bytes_per_token()),
            mla=K3.num_full_attention_layers,
            kda=K3.num_linear_layers,
        ),
        _(
            "All {kda} layers' boards (with their short-convolution buffers) take {state}; the cache grows "
            "{per_token} per token: they are equal near {crossover:,.0f} tokens. Beyond that the cache "
            "dominates — but it grows {slower:.1f}× slower than if every layer were MLA."
        ).format(
            kda=K3.num_linear_layers,
            state=format_bytes(K3.state_bytes()),
            per_token=format_bytes(K3.kv_cache_bytes_per_token()),
            crossover=attention_twin.crossover_tokens(K3),
            slower=twin.kv_cache_bytes_per_token() / K3.kv_cache_bytes_per_token(),
        ),
        key="k3_n2",
    )
notice(
    _("Before training, every pseudo-query is zero. What does the AttnRes heatmap look like then?"),
    _(
        "Uniform: a zero query scores every source the same, so the softmax gives each of n sources "
        "1/n — a plain average. Training moves the weights away from that; in the heatmap above, "
        "rows that are far from even are the ones the model learned to steer."
    ),
    key="k3_n3",
)

formula(
    r"h_l=\sum_{i=0}^{l-1}\alpha_{i\to l}\,v_i,\qquad "
    r"\alpha_{i\to l}=\operatorname{softmax}_i\!\big(w_l^{\top}\,\mathrm{RMSNorm}(v_i)\big)"
    r"\qquad\text{Block: } v_i\in\{\,b_0=\text{embedding},\,b_1,\dots,b_{n-1},\,b_n^{\text{partial}}\}",
    caption=_(
        "v_i: earlier outputs (Block AttnRes: block sums); w_l: the layer's pseudo-query. "
        "Keys are normalised, values are not. Memory per sequence, in bytes: "
        "T · Σ_MLA (d_c + d_R) · 2 + Σ_KDA (H · d_k · d_v · 4 + short-conv buffer · 2)."
    ),
    key="k3_formula",
)
code(
    attn_res,
    BlockResidualStream,
    mini_k3.DecoderLayer.run,
    mini_k3.MLALayer.attend,
    mini_k3.schedule,
    key="k3_code",
)
go_deeper_k3()
still_missing(
    _(
        "Memory is now under control. The other cost is the weights: K3 has {params} parameters, and a plain "
        "(*dense*) layer uses all of its weights for every token. So every K3 layer after the first splits into "
        "experts and runs only a few per token: about {active} of the weights work on any one token."
    ).format(params=format_count(K3.published_params), active=format_params(K3.active_params()))
)
if engineer():
    st.markdown(
        _(
            "Reading all of them for every token at batch 1 (one conversation; a batch shares the reads) would "
            "be hopeless. mini-K3 above is split into experts the same way."
        )
    )
    planner_batch_link()
next_lesson("kimi_k3")
