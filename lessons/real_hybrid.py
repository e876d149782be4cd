"""A real hybrid: Qwen3.5, a released 3 : 1 model, stepped token by token in the course's own code."""

from __future__ import annotations

import streamlit as st

from core import real_hybrid as rh
from core.figures import real_hybrid as fr
from core.i18n import _
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
    board_title = _("Layer {layer}, head {head}: its board after token {t}").format(
        layer=layer + 1, head=head + 1, t=shown
    )
    fade_title = _("Layer {layer}: fade and write strength per head, tokens 1–{t}").format(
        layer=layer + 1, t=shown
    )
    cache_title = _("Layer {layer}'s cache (keys of its first KV head): {rows}").format(
        layer=run.cache_layer + 1, rows=counted(shown, "row")
    )
    memory_title = _("Memory held after {tokens}: boards against caches").format(
        tokens=counted(shown, "token")
    )
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
    t = step_controls("rh_step", total, unit=_("token"), before_start=_("the whole run"))
    if t == 0:  # before the first Step: the whole run, so a reader who never clicks sees every token
        t = total
    where = _("your text") if t <= run.prompt_length else _("its own writing")
    st.markdown(
        _("Token {t} of {total} ({where}): **{token}** · its likeliest next token: **{next}**").format(
            t=t,
            total=total,
            where=where,
            token=code_span(label(run.tokens_in[t - 1])),
            next=code_span(label(run.tokens_out[t - 1])),
        )
    )
    memory = rh.memory_at(run, t)
    c = st.columns(3)
    c[0].metric(
        _("boards ({layers})").format(layers=counted(len(run.layer_map.boards), "layer")),
        format_bytes(memory.boards),
    )
    c[1].metric(
        _("attention caches ({layers})").format(layers=counted(len(run.layer_map.caches), "layer")),
        format_bytes(memory.cache),
        delta=format_bytes(memory.growth) if memory.growth is not None else None,
        delta_color="off",
    )
    c[2].metric(
        _("if all {n} layers were attention").format(n=len(run.layer_map.kinds)),
        format_bytes(memory.full_attention),
    )

    figures = step_figures(run, key, t, head)
    charts_side_by_side(("", figures["board"], "rh_board"), ("", figures["cache"], "rh_cache"))
    st.caption(
        _(
            "The board has {k} × {v} numbers at token 1 and at token {total} alike; colours keep one scale "
            "(±{limit}) over the run, so a change of colour is a change of the board. The cache holds {rows} "
            "after token {t}, one per token read, and keeps every one."
        ).format(
            k=run.boards.shape[2],
            v=run.boards.shape[3],
            total=total,
            limit=f"{run.board_range():.2f}",
            rows=counted(int(run.cache_rows[t - 1]), "row"),
            t=t,
        )
    )
    show_figure(figures["fade"], key="rh_fade")
    fade, write = rh.hardest_fade(run, run.board_layer, t), rh.hardest_write(run, run.board_layer, t)
    st.markdown(
        _(
            "**What to see:** up to token {t}, layer {layer} forgets hardest in head {fade_head} at token "
            "{fade_token} ({fade_label}): α = {alpha}, so that head's board keeps {share} of what it held; at that "
            "rate half of it would be gone after {half_life}. It writes hardest in head {write_head} at token "
            "{write_token} ({write_label}): β = {beta}."
        ).format(
            t=t,
            layer=run.board_layer + 1,
            fade_head=fade.head + 1,
            fade_token=fade.token + 1,
            fade_label=code_span(label(run.tokens_in[fade.token])),
            alpha=fade.alpha_text,
            share=rh.share_text(fade.value),
            half_life=rh.half_life_text(fade.value),
            write_head=write.head + 1,
            write_token=write.token + 1,
            write_label=code_span(label(run.tokens_in[write.token])),
            beta=f"{write.value:.2f}",
        )
    )
    show_figure(figures["memory"], key="rh_memory")
    crossover = rh.crossover_tokens(run)
    when = (
        _(
            " The caches catch up with the boards near {n} tokens; beyond that they hold more, and keep growing."
        ).format(n=f"{crossover:,.0f}")
        if crossover
        else ""
    )
    st.caption(
        _(
            "From the live tensors after token {t}: the boards hold {boards} whatever the length; the caches "
            "{cache}, growing by {growth} a token; with attention in every layer the cache would be {full}.{when}"
        ).format(
            t=t,
            boards=format_bytes(memory.boards),
            cache=format_bytes(memory.cache),
            growth=format_bytes(int(run.cache_bytes[0])),
            full=format_bytes(memory.full_attention),
            when=when,
        )
    )


lesson_header("real_hybrid")
problem(
    _(
        "Every model this course has stepped so far is tiny and was trained here, on the course's own text. "
        "A fair question: does a model that people really use keep its memory the same way, and do the "
        "fade and write strengths it learned look anything like the ideas of the board lessons?"
    )
)
st.markdown(
    _(
        "**Qwen3.5** (Qwen team, 2026) is a released family of language models built as a hybrid. Three "
        "layers in every four are **Gated DeltaNet**: a fixed board per head that erases, writes and fades "
        "by **one rate per head** at each token ({forgetting}). The fourth is **gated attention**: ordinary "
        "attention with its growing cache, whose output is multiplied by a learned gate between 0 and 1 before "
        "it joins the rest. Kimi K3 uses the same three-to-one idea with other parts ({kimi_k3}): KDA, which "
        "fades each key channel at its own rate, and MLA, which caches one short summary per token. This page "
        "runs a released Qwen3.5 in the course's own code, one token at a time, and shows its real boards, "
        "fades and caches."
    ).format(forgetting=lesson_ref("forgetting"), kimi_k3=lesson_ref("kimi_k3"))
)

loaded = choose_checkpoint("rh")
if loaded is None:
    st.markdown(
        _(
            "**What this page shows once the weights are here:**\n"
            "- the released layer map, read from the model's config: which layers hold a board, which a cache;\n"
            "- one layer's real board for one head, as a picture that stays the same size however long the text;\n"
            "- for every head, the real fade α and write strength β the trained model picks at every token;\n"
            "- the attention layers' caches growing a row per token;\n"
            "- the bytes of the boards (constant) against the bytes of the caches (growing), beside what a "
            "model of the same width with attention in every layer would hold."
        )
    )
else:
    config = loaded.config
    layer_map = rh.LayerMap(config.layer_types)
    st.subheader(_("The released layer map"))
    c = st.columns(3)
    c[0].metric(_("layers"), len(layer_map.kinds))
    c[1].metric(_("Gated DeltaNet layers (boards)"), len(layer_map.boards))
    c[2].metric(_("gated attention layers (caches)"), len(layer_map.caches))
    show_figure(
        built_once(
            "rh_map", layer_map.kinds, lambda: fr.layer_map_figure(layer_map, _("What each layer keeps"))
        ),
        key="rh_map",
    )
    every = layer_map.interval
    pattern = (
        _("every {every}th layer is attention, the other {others} of each {every} hold a board").format(
            every=every, others=every - 1
        )
        if every
        else _("the layers do not repeat one pattern")
    )
    st.caption(
        _(
            "Read from `config.json` in {name} (`layer_types`): {pattern}. Each board layer keeps {heads} boards "
            "of {k} × {v} numbers; each attention layer caches {kv_heads} keys and values of {head_dim} numbers "
            "per token. {params} numbers in all, running on this server's processor."
        ).format(
            name=code_span(loaded.name),
            pattern=pattern,
            heads=config.linear_num_value_heads,
            k=config.linear_key_head_dim,
            v=config.linear_value_head_dim,
            kv_heads=config.num_key_value_heads,
            head_dim=config.head_dim,
            params=f"{loaded.model.num_params():,}",
        )
    )

    st.subheader(_("Step it on your text"))
    text = prompt_input("rh_prompt", DEFAULT_TEXT, max_chars=300)
    ids = loaded.tokenizer.encode(text) or loaded.tokenizer.encode("\n")
    if len(ids) > MAX_PROMPT:
        st.info(
            _(
                "Your text is {n} tokens; each token is a full pass of the model on a processor, so this page "
                "steps the first {most} of them."
            ).format(n=len(ids), most=MAX_PROMPT)
        )
        ids = ids[:MAX_PROMPT]
    st.caption(
        _(
            "The model reads your text one token at a time, then writes {n} tokens of its own, always its "
            "likeliest next one."
        ).format(n=NEW_TOKENS)
    )
    c = st.columns(2)
    layer = c[0].selectbox(
        _("Board layer to look inside"),
        layer_map.boards,
        format_func={
            i: _("layer {n}").format(n=i + 1) for i in layer_map.boards
        }.get,  # in this run's language
        key="rh_layer",
    )
    head = c[1].selectbox(
        _("Head whose board is drawn"),
        list(range(config.linear_num_value_heads)),
        format_func={h: _("head {n}").format(n=h + 1) for h in range(config.linear_num_value_heads)}.get,
        key="rh_head",
    )
    run = hybrid_run(loaded, tuple(ids), NEW_TOKENS, int(layer))
    key = (str(loaded.folder), tuple(ids), NEW_TOKENS, int(layer))
    stepper(run, key, int(head), loaded.tokenizer.label)

    switch = rh.marker_token(loaded.tokenizer, DEFAULT_TEXT, "Meanwhile", run)
    if text != DEFAULT_TEXT:
        at_switch = _("Your text is not the default one, so there is no marked switch to compare with.")
    elif switch is None:
        at_switch = _(
            "This model's tokenizer cuts the default text into more than {most} tokens, so the switch falls after "
            "the part this page steps."
        ).format(most=MAX_PROMPT)
    else:
        at_switch = _(
            "At the switch (token {t}, {token}) layer {layer}'s heads fade by α = {alpha} on average, against "
            "{mean} over the whole run."
        ).format(
            t=switch + 1,
            token=code_span(loaded.tokenizer.label(run.tokens_in[switch])),
            layer=run.board_layer + 1,
            alpha=rh.alpha_text(rh.mean_alpha(run, run.board_layer, switch)),
            mean=rh.alpha_text(rh.mean_alpha(run, run.board_layer)),
        )
    fade = rh.hardest_fade(run, run.board_layer, run.steps)
    notice(
        _(
            "The default text changes topic halfway (a cat, then the stock market). Step to the switch: "
            "do this layer's fades α drop there?"
        ),
        _(
            "{at_switch} Its hardest fade of the run is head {head} at token {t} (α = {alpha}). A trained model "
            "picks its own moments to forget, head by head: the picture shows where, rather than the one topic "
            "switch a person would mark."
        ).format(at_switch=at_switch, head=fade.head + 1, t=fade.token + 1, alpha=fade.alpha_text),
        key="rh_n1",
    )
    notice(
        _("After 1,000 tokens, how much more memory would the caches hold than after 10? And the boards?"),
        _(
            "The caches grow by {growth} a token, so 990 more tokens add {more}; the boards stay at {boards}."
        ).format(
            growth=format_bytes(int(run.cache_bytes[0])),
            more=format_bytes(990 * int(run.cache_bytes[0])),
            boards=format_bytes(int(run.state_bytes[0])),
        ),
        key="rh_n2",
    )

formula(
    r"S_t=\alpha_t\,(I-\beta_t\,k_t k_t^{\top})\,S_{t-1}+\beta_t\,k_t v_t^{\top},\qquad "
    r"\alpha_t=e^{g_t},\; g_t=-e^{A}\,\operatorname{softplus}(a_t+b_{dt}),\qquad \beta_t=\sigma(b_t)",
    caption=_(
        "S_t: one head's board (K × V) after token t; k_t (L2-normalised) and v_t: the token's key and "
        "value; a_t and b_t: two numbers per head the layer computes from the token; A and b_dt: learned per head. "
        "The output is S_tᵀ q_t, normalised and multiplied by a learned gate."
    ),
    key="rh_formula",
)
code(rh.run_hybrid, qwen35_layers.GatedDeltaNet.step, qwen35_layers.GatedAttention.forward, key="rh_code")
still_missing(
    _(
        "A real hybrid runs on a processor, one token at a time, and its boards stay the same size however "
        "long the text. How fast it writes is set by how many bytes each token must read — the weights, the "
        "boards and the caches — and by how fast the memory delivers them. Next: measure that on your own card."
    )
)
next_lesson("real_hybrid")
