"""One trained recall model reading the reader's list: its answers and its memories' pictures, built once."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.figures.recall import answer_figure, board_figure, cache_figure
from core.figures.style import label_of
from core.i18n import _, language
from core.recall import results as rr
from core.recall.models import RecallModel
from core.recall.reader import ReaderRecall, memory_colour_ranges, recall_from_tokens
from core.recall.task import parse_recall_text
from ui.charts import ReadyChart, ready_chart

ASSETS = rr.RESULTS.parent


@st.cache_resource(show_spinner=False)
def load_model(checkpoint: str):
    """One trained model per process, with its fixed colour range per layer for boards and caches."""
    model = RecallModel.load(ASSETS / checkpoint)
    return model, model.meta, memory_colour_ranges(model)


@dataclass(frozen=True)
class Readout:
    """One trained model's answers to one list, with its pictures (built once per checkpoint and text)."""

    result: ReaderRecall  # answers, memories (one per layer), tokens
    memory_bytes: int
    zmax: tuple[float, ...]  # per layer
    confidence: ReadyChart
    memory_figures: tuple[ReadyChart, ...]


def read_list(checkpoint: str, text: str) -> Readout:
    """Run the trained model on the reader's list once; reruns and other readers reuse it."""
    return _read_list(checkpoint, text, language())


@st.cache_resource(show_spinner=False, max_entries=64)
def _read_list(checkpoint: str, text: str, lang: str) -> Readout:
    """`read_list` for one language (the figures' titles are in it, so each language has its own copy)."""
    parsed = parse_recall_text(text)
    model, _meta, zmax = load_model(checkpoint)
    result = recall_from_tokens(model, parsed.tokens, parsed.query_positions, parsed.answers)
    figures = []
    for i, memory in enumerate(result.memories):
        label = label_of(memory.kind)
        if memory.state is not None:
            fig = board_figure(
                memory.state,
                zmax[i],
                _("layer {layer} ({label}): fixed board").format(layer=memory.index + 1, label=label),
            )
        else:
            fig = cache_figure(
                memory.keys,
                result.tokens,
                zmax[i],
                _("layer {layer} ({label}): key cache, a row per token").format(
                    layer=memory.index + 1, label=label
                ),
            )
        figures.append(ready_chart(fig))
    confidence = answer_figure(
        [a.key for a in result.answers], [a.expected_probability for a in result.answers]
    )
    return Readout(
        result, model.memory_bytes(len(parsed.tokens)), zmax, ready_chart(confidence), tuple(figures)
    )
