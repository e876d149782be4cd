"""The batch sweep of a context run: tokens/s in total and per sequence against batch, the largest batch that
fits, the sentence computed from it, and its operations per step beside its bytes (ui.gpu.floors)."""

from __future__ import annotations

import streamlit as st

from core.figures.gpu import batch_figure
from core.gpu.output.batch_words import batch_sentence
from core.gpu.output.device_name import shown_device
from core.gpu.output.report import batch_floor_rows
from core.gpu.suites.batch_bench import FIT_SHARE, BatchResult
from core.i18n import _
from ui.charts import show_figure
from ui.gpu.floors import floors_table
from ui.gpu.words import reader_line


def batch_results(result: BatchResult | None, budgeted: bool = False) -> None:
    """The batch sweep of the same run: tokens/s in total and per sequence against batch, the largest
    batch that fits marked, and one sentence computed from it. Nothing for a run without one (older
    stored runs, a run stopped before it)."""
    if result is None:
        return
    st.markdown(_("##### Many conversations at once: speed against batch"))
    if result.pair == "released":
        st.markdown(_released_intro(result))
    else:
        st.markdown(
            _(
                "Every curve above writes one conversation at a time (*batch 1*). A server writes many at once: one "
                "step reads the weights once for all of them, but each conversation — a *sequence* — keeps its own "
                "memory: full attention its KV cache, which grows with the depth, the fixed-state model its board of "
                "the same size at any depth. This run decoded batches of {batches} sequences at depth "
                "{depth:,}: more sequences per step means more tokens per second in total, until their memory "
                "is most of what a step reads, or no longer fits."
            ).format(batches=_batches_words(result), depth=result.depth)
        )
    show_figure(
        batch_figure(
            result,
            _("Measured on {device} at depth {depth:,}: tokens/s against batch").format(
                device=shown_device(result.device), depth=result.depth
            ),
        ),
        key="gpu_batch_fig",
    )
    sentence = batch_sentence(result)
    if sentence:
        st.markdown(sentence)
    skipped = [
        _("{model} at batch {batch} ({note})").format(
            model=_(s.model), batch=p.batch, note=reader_line(p.note)
        )
        for s in result.series
        for p in s.points
        if not p.fits
    ]
    if skipped:
        st.caption(_("Not timed: {runs}.").format(runs=_("; ").join(skipped)))
    budget = _(
        " The budget slider pretends only for the context sweep above; this one fits the whole memory."
    )
    st.caption(
        _(
            "Top: all sequences together; bottom: each one. Above the chart: the most sequences of each model "
            "that fit beside the weights in {share:.0%} of the free memory (the rest is kept for the "
            "allocator), drawn as a dotted line where that lies within the chart."
        ).format(share=FIT_SHARE)
        + (budget if budgeted else "")
    )
    if result.stopped:
        st.caption(_("The batch sweep stopped early: the batches timed before it stopped are shown."))
    floors_table(batch_floor_rows(result), [p for s in result.series for p in s.points if p.fits])


def _released_intro(result: BatchResult) -> str:
    """The released pair's paragraph: the two models, and how far this machine cut them down."""
    text = _(
        "Every curve above writes one conversation at a time (*batch 1*). A server writes many at once: one step "
        "reads the weights once for all of them, but each conversation — a *sequence* — keeps its own memory. Two "
        "models of the same width, random weights in the shapes of their released configs: Qwen3-8B keeps keys "
        "and values in every layer; Qwen3.5-9B, a 3:1 hybrid, in one layer of four, and a board of the same size "
        "at any depth in the other three. This run decoded batches of {batches} sequences at depth {depth:,}."
    ).format(batches=_batches_words(result), depth=result.depth)
    first = result.series[0] if result.series else None
    if first is None or first.layers is None or first.layers >= (first.released_layers or 0):
        return text
    if first.width == first.released_width:
        cut = _(
            "To fit this machine each kept {layers} of its layers (vocabulary {vocab:,}); every layer's shapes "
            "are as released."
        ).format(layers=first.layers, vocab=first.vocab or 0)
    else:
        cut = _(
            "These are miniatures: {layers} layers each, every width divided by {n} ({width} wide), the counts of "
            "heads as released."
        ).format(layers=first.layers, n=(first.released_width or 0) // (first.width or 1), width=first.width)
    return f"{text} {cut}"


def _batches_words(result: BatchResult) -> str:
    """'1, 4, 16 and 64': the batches the sweep asked for."""
    batches = [str(b) for b in sorted({p.batch for s in result.series for p in s.points})]
    if len(batches) < 2:
        return "".join(batches)
    return _("{first} and {last}").format(first=_(", ").join(batches[:-1]), last=batches[-1])
