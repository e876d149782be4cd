"""A real hybrid: Qwen3.5's 3 : 1 layers stepped token by token in the course's own code — the shipped
miniature trained here (no download), or the released Qwen3.5 when its weights are on the machine."""

from __future__ import annotations

import streamlit as st

from core.figures import real_hybrid as fr
from core.i18n import _
from core.models import qwen35_layers
from core.models import qwen35_trace as rh
from core.units import counted, format_bytes
from ui.charts import ready_chart, show_figure
from ui.course import lesson_ref
from ui.depth import engineer
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, prompt_input, still_missing
from ui.models.qwen35 import choose_checkpoint, hybrid_run, is_miniature
from ui.real_hybrid_steps import stepper
from ui.stepped import built_once
from ui.text import code_span

# Per tokenizer unit: how much of the reader's text the model steps through (each step is a full pass on
# a CPU), then how many of its own it writes. The miniature reads bytes and is tiny; a release reads BPE
# tokens and is 0.8B parameters.
MAX_PROMPT = {"byte": 160, "token": 40}
NEW_TOKENS = {"byte": 24, "token": 8}
DEFAULT_TEXT = "My cat sleeps on the warm sofa all day. Meanwhile, the stock market fell sharply."
MARKER = "Meanwhile"  # where the default text changes topic
TOP_HEADS = 3  # heads named in the topic-change sentence


def limits(tokenizer) -> tuple[int, int]:
    """(most of the reader's text stepped, tokens the model then writes) for this tokenizer's unit."""
    return MAX_PROMPT[tokenizer.unit], NEW_TOKENS[tokenizer.unit]


def at_switch(loaded, run: rh.HybridRun, text: str, most: int) -> str:
    """The board layer's mean fade at the switch token against the whole run (the first notice's answer)."""
    switch = rh.marker_token(loaded.tokenizer, DEFAULT_TEXT, MARKER, run)
    if text != DEFAULT_TEXT:
        return _("Your text is not the default one, so there is no marked switch to compare with.")
    if switch is None:
        return _(
            "This model's tokenizer cuts the default text into more than {most} tokens, so the switch falls after "
            "the part this page steps."
        ).format(most=most)
    return _(
        "At the switch (token {t}, {token}) layer {layer}'s heads fade by α = {alpha} on average, against "
        "{mean} over the whole run."
    ).format(
        t=switch + 1,
        token=code_span(loaded.tokenizer.label(run.tokens_in[switch])),
        layer=run.board_layer + 1,
        alpha=rh.alpha_text(rh.mean_alpha(run, run.board_layer, switch)),
        mean=rh.alpha_text(rh.mean_alpha(run, run.board_layer)),
    )


def model_paragraph(loaded) -> None:
    """Which model runs, said plainly; its files, recipe and record at Engineer depth."""
    if not is_miniature(loaded):
        st.markdown(
            _(
                "This page runs **{name}**, released weights, in the course's own code. The miniature trained "
                "here is one click away in the switch above."
            ).format(name=loaded.name)
        )
        return
    if engineer():
        record = loaded.model.meta.get("training", {})
        st.markdown(
            _(
                "The miniature is {folder} (`config.json` + `model.safetensors`, fp32, {size}), read through "
                "the same config and tensor checks as a released folder and run by the same classes "
                "(`core/models/qwen35.py`, `core/models/qwen35_layers.py`); only the tokenizer differs: one token "
                "per UTF-8 byte, no `tokenizer.json`. Built by `{command}` ({recipe}: {steps} AdamW steps, batch "
                "{batch} × {seq} bytes, seed {seed}, one thread, {minutes} min here); held-out loss {loss:.3f} "
                "nats/byte. Its model card: {card}."
            ).format(
                folder=code_span(f"assets/{loaded.folder.name}/"),
                size=format_bytes((loaded.folder / "model.safetensors").stat().st_size),
                command="python -m core.train qwen35_mini",
                recipe=code_span("core/train/recipes/qwen35_mini.py"),
                steps=record.get("train_steps"),
                batch=record.get("batch_size"),
                seq=record.get("seq_len"),
                seed=record.get("seed"),
                minutes=record.get("train_minutes"),
                loss=float(record.get("heldout_loss", float("nan"))),
                card=code_span(f"assets/{loaded.folder.name}/MODEL_CARD.md"),
            )
        )


def layer_map_section(loaded) -> rh.LayerMap:
    """The layer map, read from the model's config: counts, one bar per layer."""
    config = loaded.config
    layer_map = rh.LayerMap(config.layer_types)
    st.subheader(_("The layer map"))
    c = st.columns(3)
    c[0].metric(_("layers"), len(layer_map.kinds))
    c[1].metric(_("Gated DeltaNet layers (boards)"), len(layer_map.boards))
    c[2].metric(_("gated attention layers (caches)"), len(layer_map.caches))
    show_figure(
        built_once(
            "rh_map",
            layer_map.kinds,
            lambda: ready_chart(fr.layer_map_figure(layer_map, _("What each layer keeps"))),
        ),
        key="rh_map",
    )
    st.caption(
        _(
            "One numbered cell per layer, from the input up: striped cells keep a fixed board, plain cells a "
            "cache that grows with every token."
        )
    )
    if engineer():
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
                "Read from `config.json` in {name} (`layer_types`): {pattern}. Each board layer keeps {heads} "
                "boards of {k} × {v} numbers; each attention layer caches {kv_heads} keys and values of "
                "{head_dim} numbers per token. {params} numbers in all, running on this server's processor."
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
    return layer_map


def topic_change(loaded, run: rh.HybridRun, text: str, label) -> str:
    """What the heads do where the default text changes topic, computed from the run: which fade harder."""
    if text != DEFAULT_TEXT:
        return _("Your text is not the default one, so there is no marked topic change to look at.")
    span = rh.marker_span(loaded.tokenizer, DEFAULT_TEXT, MARKER, run)
    if span is None:
        return _(
            "This model's tokenizer cuts the default text into more tokens than this page steps, so the "
            "topic change falls after the part it reads."
        )
    start, stop = span
    fades = rh.fades_at(run, start, stop)
    harder = [f for f in fades if f.drop > 0]
    where = _("The default text turns from a cat to the stock market at {word} (tokens {a}–{b}).").format(
        word=code_span("".join(label(t) for t in run.tokens_in[start:stop])), a=start + 1, b=stop
    )
    if not harder:
        return (
            where
            + " "
            + _("There no head fades harder than it did over the cat part: this model forgets elsewhere.")
        )
    named = [
        _("layer {layer}, head {head} (α {before} before, {during} there)").format(
            layer=f.layer + 1, head=f.head + 1, during=rh.alpha_text(f.during), before=rh.alpha_text(f.before)
        )
        for f in harder[:TOP_HEADS]
    ]
    return (
        where
        + " "
        + _(
            "There {n} of the model's {total} heads fade harder than over the cat part; most: {heads}."
        ).format(n=len(harder), total=len(fades), heads=_("; ").join(named))
    )


lesson_header("real_hybrid")
problem(
    _(
        "Every model this course has stepped so far was built for one lesson. Does the design of a model "
        "people really use keep its memory the same way, and do its learned fades and write strengths behave "
        "like the ideas of the board lessons?"
    )
)
st.markdown(
    _(
        "**Qwen3.5** (Qwen team, 2026) is a released family of hybrid language models. Three layers in every "
        "four are **Gated DeltaNet**: a fixed board per head that erases, writes and fades by **one rate per "
        "head** at each token ({forgetting}). The fourth is **gated attention**: ordinary attention with its "
        "growing cache, its output multiplied by a learned gate between 0 and 1."
    ).format(forgetting=lesson_ref("forgetting"))
)
if engineer():
    st.markdown(
        _(
            "Kimi K3 uses the same three-to-one idea with other parts ({kimi_k3}): KDA, which fades each key "
            "channel at its own rate, and MLA, which caches one short summary per token."
        ).format(kimi_k3=lesson_ref("kimi_k3"))
    )
st.markdown(
    _(
        "With nothing to download, this page runs a **miniature built exactly like Qwen3.5** — the same "
        "layers in the same three-to-one order, only far smaller — and **trained here** on the course's own "
        "text, one byte at a time. When the released Qwen3.5 0.8B is on this machine, it takes the "
        "miniature's place."
    )
)

loaded = choose_checkpoint("rh")
if loaded is not None:
    model_paragraph(loaded)
    layer_map = layer_map_section(loaded)
    config = loaded.config
    unit = loaded.tokenizer.unit
    most, new_tokens = limits(loaded.tokenizer)

    st.subheader(_("Step it on your text"))
    text = prompt_input("rh_prompt", DEFAULT_TEXT, max_chars=300)
    ids = loaded.tokenizer.encode(text) or loaded.tokenizer.encode("\n")
    if len(ids) > most:
        st.info(
            _(
                "Your text is {n}; each one is a full pass of the model on a processor, so this page steps the "
                "first {most}."
            ).format(n=counted(len(ids), unit), most=most)
        )
        ids = ids[:most]
    st.caption(
        _(
            "The model reads your text one {unit} at a time, then writes {n} of its own, always its likeliest "
            "next one."
        ).format(unit=_(unit), n=new_tokens)
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
    run = hybrid_run(loaded, tuple(ids), new_tokens, int(layer))
    key = (str(loaded.folder), tuple(ids), new_tokens, int(layer))
    stepper(run, key, int(head), loaded.tokenizer.label)

    label = loaded.tokenizer.label
    hardest = _(", ").join(
        _("{token} (token {t})").format(token=code_span(label(run.tokens_in[t])), t=t + 1)
        for t in rh.hardest_tokens(run, TOP_HEADS)
    )
    st.markdown(
        _(
            "**At the topic change.** {sentence} Across all heads, the run's hardest fades fall at {hardest}."
        ).format(sentence=topic_change(loaded, run, text, label), hardest=hardest)
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
        ).format(
            at_switch=at_switch(loaded, run, text, most),
            head=fade.head + 1,
            t=fade.token + 1,
            alpha=fade.alpha_text,
        ),
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
