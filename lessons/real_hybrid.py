"""A real hybrid: Qwen3.5, a released 3 : 1 model, stepped token by token in the course's own code."""

from __future__ import annotations

import streamlit as st

from core import real_hybrid as rh
from core.figures import real_hybrid as fr
from core.models import qwen35_layers
from core.units import counted, format_bytes
from ui.course import lesson_ref
from ui.lesson import (
    charts_side_by_side,
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
from ui.real_hybrid import choose_checkpoint, hybrid_run
from ui.stepped import Stepped, built_once, stepped_figures
from ui.text import code_span

MAX_PROMPT = 40  # tokens of the reader's text the model steps through (each step is a full pass on a CPU)
NEW_TOKENS = 8  # then it writes this many of its own
DEFAULT_TEXT = "My cat sleeps on the warm sofa all day. Meanwhile, the stock market fell sharply."


def step_figures(run: rh.HybridRun, key: tuple, shown: int, head: int) -> dict:
    """The pictures after token `shown`: built once per run at its last token, patched per token."""
    layer = run.board_layer
    position = run.board_position(layer)
    alpha, beta = run.alpha[:, position], run.beta[:, position]  # (T, Hv)
    limit, cache_limit = run.board_range(), rh.cache_range(run)
    full = run.full_attention_bytes()
    board_title = f"Layer {layer + 1}, head {head + 1}: its board after token {shown}"
    fade_title = f"Layer {layer + 1}: fade and write strength per head, tokens 1–{shown}"
    cache_title = f"Layer {run.cache_layer + 1}'s cache (keys of its first KV head): {counted(shown, 'row')}"
    memory_title = f"Memory held after {counted(shown, 'token')}: boards against caches"
    parts = {
        "board": Stepped(
            base=lambda: fr.board_figure(run.boards[-1, head], limit, board_title),
            patch=lambda base, t: fr.board_step(base, run.boards[t - 1, head], board_title),
            base_key=(key, head),
        ),
        "fade": Stepped(
            base=lambda: fr.fade_write_figure(alpha, beta, run.steps, fade_title),
            patch=lambda base, t: fr.fade_write_step(base, alpha, beta, t, fade_title),
            base_key=key,  # the same for every head
        ),
        "cache": Stepped(
            base=lambda: fr.cache_figure(run.cache_keys, run.steps, cache_limit, cache_title),
            patch=lambda base, t: fr.cache_step(base, run.cache_keys, t, cache_title),
            base_key=key,  # the same for every head
        ),
        "memory": Stepped(
            base=lambda: fr.memory_figure(run.state_bytes, run.cache_bytes, full, run.steps, memory_title),
            patch=lambda base, t: fr.memory_step(
                base, run.state_bytes, run.cache_bytes, full, t, memory_title
            ),
            base_key=key,
        ),
    }
    return stepped_figures("real_hybrid", (key, head), shown, parts)


@st.fragment
def stepper(run: rh.HybridRun, key: tuple, head: int, label) -> None:
    """Step controls and everything that moves with them: a Step click reruns only this part."""
    total = run.steps
    t = step_controls("rh_step", total, unit="token", before_start="the whole run")
    if t == 0:  # before the first Step: the whole run, so a reader who never clicks sees every token
        t = total
    where = "your text" if t <= run.prompt_length else "its own writing"
    st.markdown(
        f"Token {t} of {total} ({where}): **{code_span(label(run.tokens_in[t - 1]))}** · its likeliest "
        f"next token: **{code_span(label(run.tokens_out[t - 1]))}**"
    )
    memory = rh.memory_at(run, t)
    c = st.columns(3)
    c[0].metric(f"boards ({counted(len(run.layer_map.boards), 'layer')})", format_bytes(memory.boards))
    c[1].metric(
        f"attention caches ({counted(len(run.layer_map.caches), 'layer')})",
        format_bytes(memory.cache),
        delta=format_bytes(memory.growth) if memory.growth is not None else None,
        delta_color="off",
    )
    c[2].metric(
        f"if all {len(run.layer_map.kinds)} layers were attention", format_bytes(memory.full_attention)
    )

    figures = step_figures(run, key, t, head)
    charts_side_by_side(("", figures["board"], "rh_board"), ("", figures["cache"], "rh_cache"))
    st.caption(
        f"The board has {run.boards.shape[2]} × {run.boards.shape[3]} numbers at token 1 and at token "
        f"{total} alike; colours keep one scale (±{run.board_range():.2f}) over the run, so a change of "
        f"colour is a change of the board. The cache holds {counted(int(run.cache_rows[t - 1]), 'row')} after "
        f"token {t}, one per token read, and keeps every one."
    )
    show_figure(figures["fade"], key="rh_fade")
    fade, write = rh.hardest_fade(run, run.board_layer, t), rh.hardest_write(run, run.board_layer, t)
    st.markdown(
        f"**What to see:** up to token {t}, layer {run.board_layer + 1} forgets hardest in head "
        f"{fade.head + 1} at token {fade.token + 1} ({code_span(label(run.tokens_in[fade.token]))}): α = "
        f"{fade.alpha_text}, so that head's board keeps {rh.share_text(fade.value)} of what it held; at that rate half "
        f"of it would be gone after {rh.half_life_text(fade.value)}. It writes hardest in head {write.head + 1} at token "
        f"{write.token + 1} ({code_span(label(run.tokens_in[write.token]))}): β = {write.value:.2f}."
    )
    show_figure(figures["memory"], key="rh_memory")
    crossover = rh.crossover_tokens(run)
    when = (
        f" The caches catch up with the boards near {crossover:,.0f} tokens; beyond that they hold more, and keep growing."
        if crossover
        else ""
    )
    st.caption(
        f"From the live tensors after token {t}: the boards hold {format_bytes(memory.boards)} whatever the "
        f"length; the caches {format_bytes(memory.cache)}, growing by "
        f"{format_bytes(int(run.cache_bytes[0]))} a token; with attention in every layer the cache would be "
        f"{format_bytes(memory.full_attention)}.{when}"
    )


lesson_header("real_hybrid")
problem(
    "Every model this course has stepped so far is tiny and was trained here, on the course's own text. "
    "A fair question: does a model that people really use keep its memory the same way, and do the "
    "fade and write strengths it learned look anything like the ideas of the board lessons?"
)
st.markdown(
    "**Qwen3.5** (Qwen team, 2026) is a released family of language models built as a hybrid. Three "
    "layers in every four are **Gated DeltaNet**: a fixed board per head that erases, writes and fades "
    f"by **one rate per head** at each token ({lesson_ref('forgetting')}). The fourth is **gated "
    "attention**: ordinary attention with its growing cache, whose output is multiplied by a learned "
    "gate between 0 and 1 before it joins the rest. Kimi K3 uses the same three-to-one idea with other "
    f"parts ({lesson_ref('kimi_k3')}): KDA, which fades each key channel at its own rate, and MLA, which "
    "caches one short summary per token. This page runs a released Qwen3.5 in the course's own code, "
    "one token at a time, and shows its real boards, fades and caches."
)

loaded = choose_checkpoint("rh")
if loaded is None:
    st.markdown(
        "**What this page shows once the weights are here:**\n"
        "- the released layer map, read from the model's config: which layers hold a board, which a cache;\n"
        "- one layer's real board for one head, as a picture that stays the same size however long the text;\n"
        "- for every head, the real fade α and write strength β the trained model picks at every token;\n"
        "- the attention layers' caches growing a row per token;\n"
        "- the bytes of the boards (constant) against the bytes of the caches (growing), beside what a "
        "model of the same width with attention in every layer would hold."
    )
else:
    config = loaded.config
    layer_map = rh.LayerMap(config.layer_types)
    st.subheader("The released layer map")
    c = st.columns(3)
    c[0].metric("layers", len(layer_map.kinds))
    c[1].metric("Gated DeltaNet layers (boards)", len(layer_map.boards))
    c[2].metric("gated attention layers (caches)", len(layer_map.caches))
    show_figure(
        built_once(
            "rh_map", layer_map.kinds, lambda: fr.layer_map_figure(layer_map, "What each layer keeps")
        ),
        key="rh_map",
    )
    every = layer_map.interval
    pattern = (
        f"every {every}th layer is attention, the other {every - 1} of each {every} hold a board"
        if every
        else "the layers do not repeat one pattern"
    )
    st.caption(
        f"Read from `config.json` in {code_span(loaded.name)} (`layer_types`): {pattern}. Each board layer keeps "
        f"{config.linear_num_value_heads} boards of {config.linear_key_head_dim} × {config.linear_value_head_dim} "
        f"numbers; each attention layer caches {config.num_key_value_heads} keys and values of "
        f"{config.head_dim} numbers per token. {loaded.model.num_params():,} numbers in all, running on this "
        "server's processor."
    )

    st.subheader("Step it on your text")
    text = prompt_input("rh_prompt", DEFAULT_TEXT, max_chars=300)
    ids = loaded.tokenizer.encode(text) or loaded.tokenizer.encode("\n")
    if len(ids) > MAX_PROMPT:
        st.info(
            f"Your text is {len(ids)} tokens; each token is a full pass of the model on a processor, so this "
            f"page steps the first {MAX_PROMPT} of them."
        )
        ids = ids[:MAX_PROMPT]
    st.caption(
        f"The model reads your text one token at a time, then writes {NEW_TOKENS} tokens of its own, "
        "always its likeliest next one."
    )
    c = st.columns(2)
    layer = c[0].selectbox(
        "Board layer to look inside",
        layer_map.boards,
        format_func=lambda i: f"layer {i + 1}",
        key="rh_layer",
    )
    head = c[1].selectbox(
        "Head whose board is drawn",
        list(range(config.linear_num_value_heads)),
        format_func=lambda h: f"head {h + 1}",
        key="rh_head",
    )
    run = hybrid_run(loaded, tuple(ids), NEW_TOKENS, int(layer))
    key = (str(loaded.folder), tuple(ids), NEW_TOKENS, int(layer))
    stepper(run, key, int(head), loaded.tokenizer.label)

    switch = rh.marker_token(loaded.tokenizer, DEFAULT_TEXT, "Meanwhile", run)
    if text != DEFAULT_TEXT:
        at_switch = "Your text is not the default one, so there is no marked switch to compare with."
    elif switch is None:
        at_switch = f"This model's tokenizer cuts the default text into more than {MAX_PROMPT} tokens, so the switch falls after the part this page steps."
    else:
        at_switch = (
            f"At the switch (token {switch + 1}, {code_span(loaded.tokenizer.label(run.tokens_in[switch]))}) "
            f"layer {run.board_layer + 1}'s heads fade by α = {rh.alpha_text(rh.mean_alpha(run, run.board_layer, switch))} "
            f"on average, against {rh.alpha_text(rh.mean_alpha(run, run.board_layer))} over the whole run."
        )
    fade = rh.hardest_fade(run, run.board_layer, run.steps)
    notice(
        "The default text changes topic halfway (a cat, then the stock market). Step to the switch: "
        "do this layer's fades α drop there?",
        f"{at_switch} Its hardest fade of the run is head {fade.head + 1} at token {fade.token + 1} "
        f"(α = {fade.alpha_text}). A trained model picks its own moments to forget, head by head: "
        "the picture shows where, rather than the one topic switch a person would mark.",
        key="rh_n1",
    )
    notice(
        "After 1,000 tokens, how much more memory would the caches hold than after 10? And the boards?",
        f"The caches grow by {format_bytes(int(run.cache_bytes[0]))} a token, so 990 more tokens add "
        f"{format_bytes(990 * int(run.cache_bytes[0]))}; the boards stay at {format_bytes(int(run.state_bytes[0]))}.",
        key="rh_n2",
    )

formula(
    r"S_t=\alpha_t\,(I-\beta_t\,k_t k_t^{\top})\,S_{t-1}+\beta_t\,k_t v_t^{\top},\qquad "
    r"\alpha_t=e^{g_t},\; g_t=-e^{A}\,\operatorname{softplus}(a_t+b_{dt}),\qquad \beta_t=\sigma(b_t)",
    caption="S_t: one head's board (K × V) after token t; k_t (L2-normalised) and v_t: the token's key and "
    "value; a_t and b_t: two numbers per head the layer computes from the token; A and b_dt: learned per head. "
    "The output is S_tᵀ q_t, normalised and multiplied by a learned gate.",
    key="rh_formula",
)
code(rh.run_hybrid, qwen35_layers.GatedDeltaNet.step, qwen35_layers.GatedAttention.forward, key="rh_code")
still_missing(
    "A real hybrid runs on a processor, one token at a time, and its boards stay the same size however "
    "long the text. How fast it writes is set by how many bytes each token must read — the weights, the "
    "boards and the caches — and by how fast the memory delivers them. Next: measure that on your own card."
)
next_lesson("real_hybrid")
