"""Experts: 898 experts, 18 awake per token."""

from __future__ import annotations

import streamlit as st

from core.figures import k3 as fk
from core.k3 import bytes_per_token_rows
from core.models.moe import MoE, route
from core.specs import SPECS
from core.tokenizer import prepare_prompt, token_label
from core.units import format_bytes, format_params
from ui.course import lesson_ref
from ui.lesson import (
    code,
    formula,
    lesson_header,
    next_lesson,
    notice,
    problem,
    prompt_input,
    show_figure,
    step_controls,
    still_missing,
)
from ui.mini_k3 import mini_k3_or_none, routing
from ui.stepped import Stepped, built_once, stepped_figures

K3 = SPECS["kimi_k3"]
MAX_TEXT = 64  # bytes of the reader's text the router is shown on


def k3_grid_figure():
    """One K3 MoE layer (fixed by the config): built once per process, shared read-only."""
    moe = K3.moe
    title = (
        f"One K3 MoE layer: {moe.shared} shared experts always on; for each token the router "
        f"wakes {moe.top_k} of the {moe.experts} grey ones"
    )
    return built_once(
        "ex_k3_grid", None, lambda: fk.expert_grid_figure(moe.experts, moe.shared, moe.top_k, [], title)
    )


def totals_figures(rows: tuple[tuple[str, float, float], ...]) -> dict:
    """Stored-vs-used parameters and bytes per token: fixed numbers, built once per process."""
    return built_once(
        "ex_totals",
        rows,
        lambda: {
            "params": fk.params_figure(list(rows)),
            "bytes": fk.bytes_per_token_figure(
                bytes_per_token_rows(K3), "Weights read to produce one token (bf16)"
            ),
        },
    )


def layer_figures(ids: tuple[int, ...], layer: int, zmax: float, top_k: int, table) -> dict:
    """Router heatmap and expert load of one layer for one text, shared read-only."""
    return built_once(
        "ex_layer",
        (ids, layer, zmax, top_k),
        lambda: {
            "router": fk.router_heatmap_figure(table.weights, list(ids), layer, zmax),
            "load": fk.expert_load_figure(table.load, top_k, layer),
        },
    )


def mini_grid(cfg, ids: tuple[int, ...], layer: int, shown: int, table) -> dict:
    """mini-K3's expert grid at byte `shown`: validated once per model (built with a title, so the
    top margin is that of a titled chart); each byte patches in its own picks and title."""
    sizes = (cfg.num_experts, cfg.num_shared_experts)

    def patch(base: dict, t: int):
        picked = [int(e) for e in table.expert_ids[t - 1]]
        return fk.expert_grid_step(base, *sizes, picked, f"mini-K3 layer {layer}, byte {t}: who is awake")

    grid = Stepped(
        base=lambda: fk.expert_grid_figure(*sizes, cfg.top_k, [], "who is awake"),
        patch=patch,
        base_key=(*sizes, cfg.top_k),
    )
    return stepped_figures("ex_grid", (ids, layer), shown, {"grid": grid})


lesson_header("experts")
problem(
    "Kimi K3 has 2.8 trillion parameters. Generating one token means reading the weights it uses "
    f"from memory, and {lesson_ref('kv_cache')} showed that reading memory, not arithmetic, sets the speed. If "
    "every token had to read every weight, a model this size could never answer in time."
)

st.markdown(
    "The way out is a **mixture of experts** (MoE). Each layer's feed-forward part — the step "
    "that works on each token alone — is split into many small networks, the *experts*. A small "
    "**router** (one score per expert, squashed to 0…1 by a sigmoid) picks the few best for each "
    "token; only those run. A few **shared** experts run for every token, to hold what every "
    "token needs."
)

# -- 1. K3's experts --------------------------------------------------------------------------
st.subheader("K3: 898 experts, 18 awake")
per_layer, awake = K3.expert_counts()
moe = K3.moe
c = st.columns(4)
c[0].metric("experts per MoE layer", f"{per_layer:,}", help="routed + shared")
c[1].metric("routed / shared", f"{moe.experts} / {moe.shared}")
c[2].metric("awake per token", awake, help=f"{moe.top_k} routed + {moe.shared} shared")
c[3].metric("MoE layers", K3.num_layers - K3.first_k_dense, help="layer 1 keeps a dense feed-forward")
show_figure(k3_grid_figure(), key="ex_k3_grid")
st.caption(
    "Which 16 wake depends on the token, so none are marked here; mini-K3 below shows real picks. "
    f"Source: {K3.source}"
)

# -- 2. The router, live ----------------------------------------------------------------------
st.subheader("The router, live on your text")
net = mini_k3_or_none()

if net is not None:
    cfg = net.cfg
    st.markdown(
        f"mini-K3 ({lesson_ref('kimi_k3')}) has {cfg.num_experts} routed experts and {cfg.num_shared_experts} shared "
        f"expert in each of its {cfg.num_layers - cfg.first_k_dense} MoE layers; each byte wakes "
        f"{cfg.top_k}. Type anything: the picture is its router's real decision for every byte."
    )
    text = prompt_input("ex_prompt", "The cat sat on the mat. 猫 🐱 42 plus 17 is 59.", max_chars=200)
    prompt = prepare_prompt(text, MAX_TEXT)
    if prompt.was_cut:
        st.info(prompt.note())
    tables = routing(tuple(prompt.ids))
    by_layer = {r.layer + 1: r for r in tables}
    layer = st.select_slider("MoE layer", options=list(by_layer), value=list(by_layer)[0], key="ex_layer")
    table = by_layer[layer]
    zmax = cfg.routed_scaling_factor  # a weight can be at most the whole routed share
    per_layer_figures = layer_figures(tuple(prompt.ids), layer, zmax, cfg.top_k, table)
    show_figure(per_layer_figures["router"], key="ex_router")
    show_figure(per_layer_figures["load"], key="ex_load")
    busiest, idle = table.busiest, table.idle
    st.caption(
        f"Busiest expert in layer {layer}: {busiest} ({int(table.load[busiest])} of "
        f"{len(prompt.ids) * cfg.top_k} picks); experts nobody picked: {idle}. Training kept the load "
        "even with a per-expert selection bias, not an extra loss (K3's “noaux_tc”)."
    )

    st.markdown("**One byte at a time.** Step through your text to see which experts each byte wakes.")
    t = step_controls("ex_step", len(prompt.ids), unit="byte")
    shown = t if t > 0 else 1
    picked = [int(e) for e in table.expert_ids[shown - 1]]
    weights = [float(table.weights[shown - 1, e]) for e in picked]
    st.markdown(
        f"Byte {shown}: **`{token_label(prompt.ids[shown - 1])}`** → experts "
        + ", ".join(f"{e} (weight {w:.2f})" for e, w in zip(picked, weights, strict=True))
        + f" + {cfg.num_shared_experts} shared"
    )
    show_figure(mini_grid(cfg, tuple(prompt.ids), layer, shown, table)["grid"], key="ex_mini_grid")

# -- 3. Stored vs used ------------------------------------------------------------------------
st.subheader("Parameters stored vs parameters used")
rows = [(K3.name, K3.total_params(), K3.active_params())]
if net is not None:
    rows.insert(0, ("mini-K3", net.num_params(), net.active_params()))
c = st.columns(3)
c[0].metric(
    "K3 total (config count)",
    format_params(K3.total_params()),
    help=f"published: {format_params(K3.published_params)}",
)
c[1].metric(
    "K3 active per token",
    format_params(K3.active_params()),
    help=f"published: {format_params(K3.published_active)}",
)
c[2].metric("share read per token", f"{K3.active_params() / K3.total_params():.1%}")
show_figure(totals_figures(tuple(rows))["params"], key="ex_params")
st.caption(
    "Every expert must be stored (in memory, somewhere); only the active ones are read for a token. "
    "Counted from the config by core/specs.py; K3's own release states 2.8T total / 104B activated."
)

# -- 4. Bytes per token ---------------------------------------------------------------------
st.subheader("Bytes read per token: dense vs experts")
byte_rows = bytes_per_token_rows(K3)
show_figure(totals_figures(tuple(rows))["bytes"], key="ex_bytes")
st.markdown(
    f"A dense model of K3's size would read **{format_bytes(byte_rows[0][1])}** of weights per token; K3 "
    f"reads **{format_bytes(byte_rows[1][1])}** — {byte_rows[0][1] / byte_rows[1][1]:.0f}× less traffic, "
    "so it is faster and draws less power per token. The catch: all experts still have to be *stored* "
    "somewhere fast enough to fetch."
)
st.info(
    f"Measure it yourself: the **power test** on the *Your GPU* page ({lesson_ref('your_gpu')}) runs a dense and an MoE "
    "model with the same total parameters on your card and reports tokens/s and joules per token.",
    icon=":material/bolt:",
)

notice(
    "Type a text of one repeated letter (e.g. `aaaaaaaa`). What will the router heatmap look like?",
    "The same few columns light up on every row: the router sees (almost) the same thing for each byte, "
    "so it makes (almost) the same choice. A mixed text spreads the load; that is why balance is "
    "measured over many tokens.",
    key="ex_n1",
)
notice(
    f"K3 wakes {awake} of {per_layer} experts — {awake / per_layer:.0%}. Why is the share of *parameters* "
    f"read per token ({K3.active_params() / K3.total_params():.1%}) bigger than that?",
    "Attention layers, shared experts, the dense first layer, the output head and the router run for "
    "every token, and a shared expert is wider than a routed one. Only the routed experts are skipped.",
    key="ex_n2",
)

formula(
    r"y=\sum_{s\in\text{shared}}E_s(x)+\sum_{e\in\operatorname{TopK}(s+b)}w_e\,E_e(x),\quad "
    r"s=\sigma(W_r x),\quad w_e=\rho\,\frac{s_e}{\sum_{j\in\operatorname{TopK}}s_j}",
    caption="s: sigmoid router scores; b: balancing bias (changes who is picked, never the weights); "
    "ρ: routed scaling factor (K3: 1.0).",
    key="ex_formula",
)
code(route, MoE.forward, MoE.active_params, key="ex_code")
still_missing(
    "Experts cut the bytes read per token — but what does that mean on a real card? How fast does a "
    "long context slow down when the cache spills out of VRAM, and how many joules does a token cost? "
    "Next: measure it on your own GPU."
)
next_lesson("experts")
