"""Forgetting, Kimi K3 and Experts in Japanese: the charts' titles, axes, legends and hover text are
Japanese, and the English pages keep their English. The walks through their widgets are table rows
(tests/app/japanese_walks.py, run by tests/app/test_pages.py)."""

from __future__ import annotations

import pytest

from core.i18n import use_language
from tests.app.driver import chart_spec, shown_title
from tests.app.japanese import japanese, japanese_words

pytestmark = pytest.mark.slow


def _engineer(at):
    """The same page at Engineer depth (everything Story shows and the rest), as `?depth=engineer` opens it."""
    at.query_params["depth"] = "engineer"
    at.run()
    return at


def test_k3_charts_speak_japanese():
    at = _engineer(japanese("kimi_k3", timeout=300))
    layer_map = chart_spec(at, "k3_map")
    assert japanese_words(shown_title(at, layer_map))
    assert japanese_words(layer_map["layout"]["xaxis"]["title"]["text"])
    assert all(japanese_words(t) for t in layer_map["layout"]["yaxis"]["ticktext"])
    memory = chart_spec(at, "k3_memory")
    assert all(japanese_words(trace["name"]) for trace in memory["data"])
    assert japanese_words(memory["layout"]["yaxis"]["title"]["text"])
    attn_res = chart_spec(at, "k3_attn_res")
    assert japanese_words(attn_res["data"][0]["hovertemplate"])
    at = _engineer(japanese("experts", timeout=300))
    router = chart_spec(at, "ex_router")
    assert japanese_words(shown_title(at, router))
    assert japanese_words(router["layout"]["xaxis"]["title"]["text"])
    load = chart_spec(at, "ex_load")
    assert all(japanese_words(trace["name"]) for trace in load["data"])
    at = japanese("forgetting", timeout=300)
    rates = chart_spec(at, "fg_rates")
    assert japanese_words(shown_title(at, rates))


def test_english_pages_keep_their_english():
    """The same functions in English give the English they always gave (the source strings)."""
    from core import k3
    from core.figures.layer_map import k3_layer_map
    from core.specs import SPECS

    with use_language("en"):
        assert k3.source_labels(4, 3) == ["embedding", "block 1: layers 1–3", "block 2: layers 4–4"]
        fig = k3_layer_map(SPECS["kimi_k3"])
        assert fig.layout.xaxis.title.text == "place in its block of layers"
    with use_language("ja"):
        assert k3.source_labels(4, 3)[0] == "埋め込み"
