"""Figures drawn from the specs (the speed-vs-context chart, the Kimi K3 layer map) and the AttnRes heatmap's
source labels speak Japanese to a Japanese reader, every word a chart can show, and keep the English they
always had in English."""

from __future__ import annotations

from core.figures.layer_map import k3_layer_map
from core.figures.specs import speed_vs_context_figure
from core.i18n import use_language
from core.models import mini_k3_trace
from core.roofline import CARDS
from core.specs import SPECS
from tests.app.japanese import chart_text, english_in, japanese_words


def test_charts_from_specs_are_japanese():
    k3 = SPECS["kimi_k3"]
    card = next(iter(CARDS.values()))
    with use_language("ja"):
        figures = [
            speed_vs_context_figure(SPECS["llama3_8b"], card, [1024, 8192, 131072, 1048576]),
            speed_vs_context_figure(k3, card, [1024, 8192]),  # does not fit: the annotation says so
            k3_layer_map(k3),
        ]
    for fig in figures:
        words = chart_text(fig.to_plotly_json())
        assert [w for w in words if english_in(w)] == [], words
        assert any(japanese_words(w) for w in words)


def test_the_english_layer_map_keeps_its_english():
    with use_language("en"):
        assert k3_layer_map(SPECS["kimi_k3"]).layout.xaxis.title.text == "place in its block of layers"


def test_the_attn_res_sources_are_named_in_japanese_and_kept_in_english():
    with use_language("en"):
        assert mini_k3_trace.source_labels(4, 3) == [
            "embedding",
            "block 1: layers 1–3",
            "block 2: layers 4–4",
        ]
    with use_language("ja"):
        assert mini_k3_trace.source_labels(4, 3)[0] == "埋め込み"
