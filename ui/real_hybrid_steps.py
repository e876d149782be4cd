"""The stepped view of the A real hybrid lesson: Step controls, the board, fade / write and memory
pictures with their captions, patched per token (ui/stepped.py). The cache picture, the layer's
extremes and the engineer's caption are drawn at Engineer depth only."""

from __future__ import annotations

import streamlit as st

from core.figures import real_hybrid as fr
from core.i18n import _
from core.models import qwen35_trace as rh
from core.units import counted, format_bytes
from ui.charts import charts_side_by_side, show_figure
from ui.depth import engineer
from ui.stepped import Stepped, step_controls, stepped_figures
from ui.text import code_span


def step_figures(run: rh.HybridRun, key: tuple, shown: int, head: int) -> dict:
    """The pictures after token `shown`: built once per run at its last token, patched per token. The
    cache picture is drawn at Engineer depth only, so Story neither builds nor patches it."""
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
        "memory": Stepped(
            base=lambda: fr.memory_figure(run.state_bytes, run.cache_bytes, full, run.steps, memory_title),
            patch=lambda base, t: fr.memory_step(
                base, run.state_bytes, run.cache_bytes, full, t, memory_title
            ),
            base_key=key,
        ),
    }
    if engineer():
        parts["cache"] = Stepped(
            base=lambda: fr.cache_figure(run.cache_keys, run.steps, cache_limit, cache_title),
            patch=lambda base, t: fr.cache_step(base, run.cache_keys, t, cache_title),
            base_key=key,  # the same for every head
        )
    return stepped_figures("real_hybrid", (key, head), shown, parts)


def board_pictures(run: rh.HybridRun, figures: dict, t: int) -> None:
    """One head's board (Story); beside it at Engineer depth the attention cache, with their caption."""
    total = run.steps
    if engineer():
        charts_side_by_side(("", figures["board"], "rh_board"), ("", figures["cache"], "rh_cache"))
    else:
        show_figure(figures["board"], key="rh_board")
    st.caption(
        _(
            "One head's board after token {t}: red = positive numbers, blue = negative, white = near zero. "
            "It keeps its {k} × {v} numbers however long the text."
        ).format(t=t, k=run.boards.shape[2], v=run.boards.shape[3])
    )
    if not engineer():
        return
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


def extremes(run: rh.HybridRun, t: int, label) -> None:
    """Engineer depth: the layer's hardest fade and strongest write up to token t, with a half-life."""
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


def memory_words(run: rh.HybridRun, memory: rh.MemoryAt, t: int) -> None:
    """The memory picture's caption, and what the boards' bytes are made of (they add up to the metric)."""
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
            "After token {t}: dashed = the boards, {boards} whatever the length; solid = the caches, {cache}, "
            "{growth} more per token; dotted = attention in every layer, {full}.{when}"
        ).format(
            t=t,
            boards=format_bytes(memory.boards),
            cache=format_bytes(memory.cache),
            growth=format_bytes(int(run.cache_bytes[0])),
            full=format_bytes(memory.full_attention),
            when=when,
        )
    )
    config_heads, k, v = run.boards.shape[1:]
    layers = len(run.layer_map.boards)
    st.markdown(
        _(
            "**What the boards hold.** Each of the {layers} board layers keeps {heads} boards of {k} × {v} numbers "
            "({board}) and a short window of the last inputs its small convolution mixes in ({window}): "
            "{layers} × ({board} + {window}) = {total}."
        ).format(
            layers=layers,
            heads=config_heads,
            k=k,
            v=v,
            board=format_bytes(run.board_bytes),
            window=format_bytes(run.window_bytes),
            total=format_bytes(layers * (run.board_bytes + run.window_bytes)),
        )
    )


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
    board_pictures(run, figures, t)
    show_figure(figures["fade"], key="rh_fade")
    st.caption(
        _(
            "One column per token, one row per head. Top, the fade α: dark = the head keeps its board, light = it "
            "forgets. Bottom, the write strength β: dark = it writes strongly."
        )
    )
    if engineer():
        extremes(run, t, label)
    show_figure(figures["memory"], key="rh_memory")
    memory_words(run, memory, t)
