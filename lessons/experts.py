"""Experts: 898 experts, 18 awake per token."""

from __future__ import annotations

import streamlit as st

from core.figures.expert_grid import expert_grid_figure, expert_grid_step
from core.figures.expert_routing import expert_load_figure, router_heatmap_figure
from core.figures.moe_weights import bytes_per_token_figure, params_figure
from core.gpu.output.committed_run import moe_power_words
from core.i18n import N_, _, ngettext
from core.models.moe import MoE, route
from core.plan.expert_bytes import (
    MXFP4_BYTES_PER_PARAM,
    bytes_per_token_rows,
    example_picks,
    release_weight_bytes_per_token,
)
from core.specs import SPECS
from core.tokenizer import prepare_prompt, token_label
from core.units import format_bytes, format_count, format_params
from ui.charts import ready_chart, show_figure
from ui.course import lesson_ref, next_available
from ui.deeper import go_deeper_experts, planner_batch_link
from ui.depth import engineer, engineer_section, in_depth
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, prompt_input, still_missing
from ui.mini_k3 import mini_k3_or_none, routing
from ui.stepped import Stepped, built_once, step_controls, stepped_figures
from ui.text import code_span

K3 = SPECS["kimi_k3"]
MAX_TEXT = 64  # bytes of the reader's text the router is shown on
GRID_COLOURS = N_(
    "One square per expert: orange = woken for this token, dark grey = shared (always on), light grey = asleep."
)


def k3_grid_figure():
    """One K3 MoE layer (fixed by the config) with one token's top-k lit: built once per process, shared
    read-only. Which experts light is an example (`example_picks`); how many is the config's."""
    moe = K3.moe
    title = _("One K3 MoE layer: {n} experts").format(
        n=moe.experts + moe.shared
    )  # short: it must fit a phone
    picked = example_picks(moe.experts, moe.top_k)
    return built_once(
        "ex_k3_grid",
        None,
        lambda: ready_chart(expert_grid_figure(moe.experts, moe.shared, moe.top_k, picked, title)),
    )


def totals_figures(rows: tuple[tuple[str, float, float], ...]) -> dict:
    """Stored-vs-used parameters and bytes per token: fixed numbers, built once per process."""
    return built_once(
        "ex_totals",
        rows,
        lambda: {
            "params": ready_chart(params_figure(list(rows))),
            "bytes": ready_chart(
                bytes_per_token_figure(weight_read_rows(), _("Weights read per token at batch 1"))
            ),
        },
    )


def weight_read_rows() -> list[tuple[str, float]]:
    """Dense and K3 with every weight in bf16 (what-ifs), then K3 in its released formats."""
    dense, moe = (read for _name, read in bytes_per_token_rows(K3))
    return [
        (_("dense {params}, bf16 (what-if)").format(params=format_params(K3.published_params)), dense),
        (_("K3, all bf16 (what-if)"), moe),
        (_("K3 as released (MXFP4)"), release_weight_bytes_per_token(K3)),
    ]


def layer_figures(ids: tuple[int, ...], layer: int, zmax: float, top_k: int, table) -> dict:
    """Router heatmap and expert load of one layer for one text, shared read-only."""
    return built_once(
        "ex_layer",
        (ids, layer, zmax, top_k),
        lambda: {
            "router": ready_chart(router_heatmap_figure(table.weights, list(ids), layer, zmax)),
            "load": ready_chart(expert_load_figure(table.load, top_k, layer)),
        },
    )


def mini_grid(cfg, ids: tuple[int, ...], layer: int, shown: int, table) -> dict:
    """mini-K3's expert grid at byte `shown`: validated once per model (built with a title, so the
    top margin is that of a titled chart); each byte patches in its own picks and title."""
    sizes = (cfg.num_experts, cfg.num_shared_experts)

    def patch(base: dict, t: int):
        picked = [int(e) for e in table.expert_ids[t - 1]]
        title = _("mini-K3 layer {layer}, byte {t}: who is awake").format(layer=layer, t=t)
        return expert_grid_step(base, *sizes, picked, title)

    grid = Stepped(
        base=lambda: expert_grid_figure(*sizes, cfg.top_k, [], _("who is awake")),
        patch=patch,
        base_key=(*sizes, cfg.top_k),
    )
    return stepped_figures("ex_grid", (ids, layer), shown, {"grid": grid})


@st.fragment
def stepper(cfg, ids: tuple[int, ...], layer: int, table) -> None:
    """Step controls and the picture that moves with them: a Step click reruns only this part."""
    shown = step_controls("ex_step", len(ids), unit=_("byte"), start=1)  # byte 1 is there from the start
    picked = [int(e) for e in table.expert_ids[shown - 1]]
    weights = [float(table.weights[shown - 1, e]) for e in picked]
    st.markdown(
        _("Byte {shown}: **{byte}** → experts {experts} + {shared} shared").format(
            shown=shown,
            byte=code_span(token_label(ids[shown - 1])),
            experts=_(", ").join(
                _("{expert} (weight {weight:.2f})").format(expert=e, weight=w)
                for e, w in zip(picked, weights, strict=True)
            ),
            shared=cfg.num_shared_experts,
        )
    )
    show_figure(mini_grid(cfg, ids, layer, shown, table)["grid"], key="ex_mini_grid")
    st.caption(_(GRID_COLOURS))


def router_charts(cfg, prompt, layer: int, table) -> None:
    """The router heatmap, the load per expert and what they show (Engineer: the grid carries the idea)."""
    zmax = cfg.routed_scaling_factor  # a weight can be at most the whole routed share
    per_layer_figures = layer_figures(tuple(prompt.ids), layer, zmax, cfg.top_k, table)
    show_figure(per_layer_figures["router"], key="ex_router")
    show_figure(per_layer_figures["load"], key="ex_load")
    busiest, idle = [str(e) for e in table.busiest], table.idle
    if len(busiest) == 1:
        busy = _("Busiest in layer {layer}: expert {expert}, with {load} of the {picks} picks").format(
            layer=layer, expert=busiest[0], load=table.busiest_load, picks=len(prompt.ids) * cfg.top_k
        )
    else:
        busy = _(
            "Busiest in layer {layer}: experts {experts} and {last}, with {load} of the {picks} picks each"
        ).format(
            layer=layer,
            experts=_(", ").join(busiest[:-1]),
            last=busiest[-1],
            load=table.busiest_load,
            picks=len(prompt.ids) * cfg.top_k,
        )
    unused = (
        _("every expert got at least one byte")
        if idle == 0
        else ngettext("{n:,} expert picked by no byte", "{n:,} experts picked by no byte", idle).format(
            n=idle
        )
    )
    st.caption(
        _(
            "{busy}; {unused}. Training kept the load even with a per-expert selection bias, not an extra loss "
            "term. K3's config names its router “noaux_tc”, DeepSeek-V3's auxiliary-loss-free balancing: a bias "
            "per expert, nudged after each step, steers the top-k choice. That is not no balance loss at all: "
            "DeepSeek-V3 keeps a small sequence-wise one beside the bias (α = 0.0001, its report §2.1.2 and §4.2); "
            "mini-K3 here uses the bias alone."
        ).format(busy=busy, unused=unused)
    )


def stored_vs_used(rows: list, story: str) -> None:
    """Parameters stored vs used: Story's plain paragraph `story`; at Engineer depth, in its place, the chart
    and where the counts come from (what one token reads follows in `bytes_per_token`)."""
    if engineer():
        show_figure(totals_figures(tuple(rows))["params"], key="ex_params")
    in_depth(
        story,
        _(
            "Every expert must be stored (in memory, somewhere); only the active ones are read for a token. "
            "Counted from the config by core/specs: {active} active, counting the whole token table "
            "({without:.1f}B without it). NVIDIA's NeMo AutoModel documentation for Kimi K3 publishes "
            "{published} total / {published_active} activated; the model page gives only the {published} total. "
            "This page uses the count."
        ).format(
            active=format_params(K3.active_params()),
            without=K3.active_params(count_embedding_table=False) / 1e9,
            published=format_params(K3.published_params),
            published_active=format_params(K3.published_active),
        ),
        show=st.caption if engineer() else st.markdown,
    )


def bytes_per_token(rows: list) -> None:
    """What one token reads at batch 1: dense vs experts, bf16 vs the released MXFP4 (Engineer)."""
    st.subheader(_("Bytes read per token at batch 1: dense vs experts"))
    byte_rows = bytes_per_token_rows(K3)
    release_bytes = release_weight_bytes_per_token(K3)
    st.markdown(
        _(
            "K3's routed experts ship in **MXFP4**, a 4-bit number format (one shared scale per group of 32 "
            "weights); everything else ships in bf16, 16 bits. The chart compares what one token reads."
        )
    )
    show_figure(totals_figures(tuple(rows))["bytes"], key="ex_bytes")
    st.markdown(
        _(
            "A dense model of K3's size in bf16 would read **{dense}** of weights per token at batch 1 (a what-if; "
            "a batch shares one read). K3 reads only the weights it wakes: **{moe}** if every weight were bf16 — "
            "{ratio:.0f}× less — and **{released}** as released, because its routed experts are stored in MXFP4 "
            "({bits:.2f} bits per weight: 4 bits plus one shared 8-bit scale per 32) while attention, shared "
            "experts, the dense layer and the head stay bf16. Less to read should mean **faster, and fewer joules "
            "per token**. {measured} (The run and its charts: {lesson}.) The catch: all experts still have to be "
            "*stored* somewhere fast enough to fetch."
        ).format(
            dense=format_bytes(byte_rows[0][1]),
            moe=format_bytes(byte_rows[1][1]),
            ratio=byte_rows[0][1] / byte_rows[1][1],
            released=format_bytes(release_bytes),
            bits=MXFP4_BYTES_PER_PARAM * 8,
            measured=moe_power_words(),
            lesson=lesson_ref("your_gpu"),
        )
    )
    planner_batch_link()
    st.info(
        _(
            "Measure it yourself: the **power test** on the *Your GPU* page ({lesson}) runs a dense and an MoE "
            "model with the same total parameters on your card and reports tokens/s and joules per token."
        ).format(lesson=lesson_ref("your_gpu")),
        icon=":material/bolt:",
    )


def next_words() -> str:
    """What is still missing, ending on the next lesson as the outline names it (never typed)."""
    after = next_available("experts")
    story = _(
        "Every part of K3 is now in place — fading boards, a few attention layers, a look back over depth, "
        "experts — but only in models this course built. Does a released model behave the same way?"
    )
    if after is None:
        return story
    return _("{story} Next: {title}.").format(story=story, title=after.title)


lesson_header("experts")
new_words("router", "j_per_token", engineer_keys=("sigmoid", "mxfp4"), here="experts")
problem(
    _(
        "Kimi K3 has {params} parameters. To write one token, a model reads the weights it uses from memory, and "
        "{kv_lesson} showed that reading memory, not arithmetic, sets the speed. If every token read every weight "
        "(as one conversation at batch 1 does in a dense model), a model this size could never answer in time."
    ).format(params=format_count(K3.published_params), kv_lesson=lesson_ref("kv_cache"))
)
if engineer():
    st.markdown(
        _("A batch shares its reads — see the planner's batch setting, {planner}.").format(
            planner=lesson_ref("planner")
        )
    )

st.markdown(
    _(
        "The way out is a **mixture of experts** (MoE). Each layer's feed-forward part is split into many small "
        "networks, the *experts*. A small **router** picks the few best for each token, and only those run. A "
        "few **shared** experts run for every token."
    )
)
if engineer():
    st.markdown(
        _(
            "The feed-forward part is the step that works on each token alone. The router gives one score per "
            "expert, squashed to 0…1 by a sigmoid; the shared experts hold what every token needs."
        )
    )
if engineer_section(_("K3's experts work at a narrower width (for engineers)")):
    st.markdown(
        _(
            "K3's experts are **latent**: a routed expert does not work at the model's full width of "
            "{hidden:,} numbers. The router scores the token at full width; then the token is squeezed to "
            "{latent:,} numbers (a down projection), the routed experts run at that smaller width, their "
            "weighted sum is normalised (an RMSNorm), and one up projection brings it "
            "back to {hidden:,}. The {shared} shared experts are stored as one fused full-width network "
            "(intermediate size {intermediate:,}) that every token runs. Source: the "
            "released config (`routed_expert_hidden_size {latent}`, `latent_moe_use_norm`) and weight "
            "listing (`routed_expert_down_proj [{latent}, {hidden}]`)."
        ).format(
            hidden=K3.hidden,
            latent=K3.moe.latent_dim,
            shared=K3.moe.shared,
            intermediate=K3.moe.shared * K3.moe.shared_intermediate,
        )
    )

# -- 1. K3's experts --------------------------------------------------------------------------
per_layer, awake = K3.expert_counts()
st.subheader(_("K3: {n} experts, {awake} awake").format(n=per_layer, awake=awake))
moe = K3.moe
c = st.columns(4)
c[0].metric(_("experts per MoE layer"), f"{per_layer:,}", help=_("routed + shared"))
c[1].metric(_("routed / shared"), f"{moe.experts} / {moe.shared}")
c[2].metric(
    _("awake per token"), awake, help=_("{k} routed + {shared} shared").format(k=moe.top_k, shared=moe.shared)
)
c[3].metric(
    _("MoE layers"),
    K3.num_layers - K3.first_k_dense,
    help=ngettext(
        "the first {n:,} layer keeps a dense feed-forward",
        "the first {n:,} layers keep a dense feed-forward",
        K3.first_k_dense,
    ).format(n=K3.first_k_dense),
)
show_figure(k3_grid_figure(), key="ex_k3_grid")
st.caption(_(GRID_COLOURS))
if engineer():
    st.caption(
        _(
            "{shared} shared experts are always on; for each token the router wakes {k} of the "
            "{n} routed ones — lit here for one example token. Which {k} depends on the token "
            "(K3's own router is not run here: the example's places are drawn at random); mini-K3 below shows a "
            "real router's picks. Source: {source}"
        ).format(shared=moe.shared, k=moe.top_k, n=moe.experts, source=_(K3.source))
    )

# -- 2. The router, live ----------------------------------------------------------------------
st.subheader(_("The router, live on your text"))
net = mini_k3_or_none()

if net is not None:
    cfg = net.cfg
    st.markdown(
        _(
            "mini-K3 ({lesson}) has {n} routed experts and {shared} shared expert in each of its {layers} MoE "
            "layers; each byte wakes {k}. Type anything, then step through it: the grid shows which experts its "
            "router really woke for each byte."
        ).format(
            lesson=lesson_ref("kimi_k3"),
            n=cfg.num_experts,
            shared=cfg.num_shared_experts,
            layers=cfg.num_layers - cfg.first_k_dense,
            k=cfg.top_k,
        )
    )
    text = prompt_input("ex_prompt", "The cat sat on the mat. 猫 🐱 42 plus 17 is 59.", max_chars=200)
    prompt = prepare_prompt(text, MAX_TEXT)
    if prompt.was_cut:
        st.info(prompt.note())
    tables = routing(tuple(prompt.ids))
    by_layer = {r.layer + 1: r for r in tables}
    layer = st.select_slider(_("MoE layer"), options=list(by_layer), value=list(by_layer)[0], key="ex_layer")
    table = by_layer[layer]
    stepper(cfg, tuple(prompt.ids), layer, table)
    if engineer_section(_("Every byte at once: the router's choices and the load")):
        router_charts(cfg, prompt, layer, table)

# -- 3. Stored vs used ------------------------------------------------------------------------
st.subheader(_("Parameters stored vs parameters used"))
rows = [(K3.name, K3.total_params(), K3.active_params())]
if net is not None:
    rows.insert(0, ("mini-K3", net.num_params(), net.active_params()))
c = st.columns(3)
c[0].metric(
    _("K3 total (config count)"),
    format_params(K3.total_params()),
    help=_("published: {params}").format(params=format_params(K3.published_params)),
)
c[1].metric(
    _("K3 active per token"),
    format_params(K3.active_params()),
    help=_("published: {params} (NVIDIA NeMo AutoModel docs)").format(
        params=format_params(K3.published_active)
    ),
)
c[2].metric(_("share used per token"), f"{K3.active_params() / K3.total_params():.1%}")
dense_read, _moe_read = (read for _name, read in bytes_per_token_rows(K3))
stored_vs_used(  # Engineer: the chart and its caption in this paragraph's place, then what a token reads
    rows,
    _(
        "Every expert must be stored somewhere, but only about {active} of the weights work on any one token. A "
        "dense model of K3's size would read **{dense}** of weights per token at batch 1; K3 as released reads "
        "**{released}**. Less to read should mean faster, and fewer joules per token."
    ).format(
        active=format_params(K3.active_params()),
        dense=format_bytes(dense_read),
        released=format_bytes(release_weight_bytes_per_token(K3)),
    ),
)
if engineer():
    bytes_per_token(rows)
    notice(
        _("Type a text of one repeated letter (e.g. `aaaaaaaa`). What will the router heatmap look like?"),
        _(
            "The same few columns light up on every row: the router sees (almost) the same thing for each byte, "
            "so it makes (almost) the same choice. A mixed text spreads the load; that is why balance is "
            "measured over many tokens."
        ),
        key="ex_n1",
    )
notice(
    _(
        "K3 wakes {awake} of {n} experts — {share:.0%}. Why is the share of *parameters* used per token "
        "({used:.1%}) bigger than that?"
    ).format(awake=awake, n=per_layer, share=awake / per_layer, used=K3.active_params() / K3.total_params()),
    _(
        "Attention layers, shared experts, the dense first layer, the output head and the router run for "
        "every token, and a shared expert is wider than a routed one. Only the routed experts are skipped."
    ),
    key="ex_n2",
)

formula(
    r"y=E_{\text{shared}}(x)+W_{\uparrow}\,\mathrm{RMSNorm}\!\Big(\sum_{e\in\operatorname{TopK}(s+b)}w_e\,"
    r"E_e(W_{\downarrow}x)\Big),\quad "
    r"s=\sigma(W_r x),\quad w_e=\rho\,\frac{s_e}{\sum_{j\in\operatorname{TopK}}s_j}",
    caption=_(
        "K3's latent MoE: W↓ squeezes x from {hidden} to {latent} numbers, the routed experts E_e run at "
        "{latent}, their weighted sum is RMS-normalised and W↑ brings it back to {hidden}; E_shared is the fused "
        "shared expert ({shared} × {intermediate} wide) at full width. s: sigmoid router scores; b: balancing "
        "bias (changes who is picked, never the weights); ρ: routed scaling factor (K3: 1.0). Source: K3 "
        "config.json and weight listing; HF transformers modular_kimi_k3.py; mlx-lm "
        "mlx_lm/models/kimi_k3.py (KimiK3SparseMoE)."
    ).format(
        hidden=K3.hidden,
        latent=K3.moe.latent_dim,
        shared=K3.moe.shared,
        intermediate=K3.moe.shared_intermediate,
    ),
    key="ex_formula",
)
code(route, MoE.forward, MoE.active_params, key="ex_code")
go_deeper_experts()
still_missing(next_words())
if engineer():
    st.markdown(
        _(
            "And on a real card? How fast does a long context slow down when the cache spills out of VRAM, and "
            "how many joules does a token cost? {lesson} measures it on your own GPU."
        ).format(lesson=lesson_ref("your_gpu"))
    )
next_lesson("experts")
