"""Forgetting, Kimi K3 and Experts in Japanese, driven through their widgets: every state a reader can
reach (sliders, radios, Step clicks past the reader's text into the model's own writing, another MoE
layer, answers, formulas and code opened) renders with no exception and no English sentence left
(tests/app/japanese.py), and the charts' titles, axes, legends and hover text are Japanese."""

from __future__ import annotations

import pytest

from core.i18n import use_language
from tests.app.driver import chart_spec, shown_title
from tests.app.japanese import japanese, japanese_words, no_english, open_toggles

pytestmark = pytest.mark.slow


def _engineer(at):
    """The same page at Engineer depth (everything Story shows and the rest), as `?depth=engineer` opens it."""
    at.query_params["depth"] = "engineer"
    at.run()
    return at


def _step(at, key: str, times: int) -> None:
    for _ in range(times):
        at.button(key=key).click().run()


def test_forgetting_reads_in_japanese_through_its_widgets():
    with use_language("ja"):  # the radios' format functions run here too
        at = japanese("forgetting", timeout=300)
        no_english(at, "Story, first run")
        _engineer(at)
        no_english(at, "first run: the token where the boards differ most")
        _step(at, "fg_t_step", 6)  # through the fact and topic A, onto the topic switch
        no_english(at, "stepped onto the topic switch")
        at.slider(key="fg_alpha_topic").set_value(0.5).run()  # KDA's topics apart from Gated DeltaNet's α
        at.radio(key="fg_keys").set_value("orthogonal").run()
        no_english(at, "orthogonal keys, KDA's topic rate apart")
        at.slider(key="fg_alpha").set_value(1.0).run()
        at.slider(key="fg_alpha_topic").set_value(1.0).run()  # no fade anywhere: the maps agree
        no_english(at, "no fade at all")
        at.radio(key="fg_when").set_value("every").run()
        at.slider(key="fg_alpha").set_value(0.5).run()
        at.slider(key="fg_na").set_value(2).run()
        at.slider(key="fg_nb").set_value(6).run()
        _step(at, "fg_t_step", 3)
        no_english(at, "fading at every token, other stream lengths")
        open_toggles(at, "fg_q1_reveal", "fg_q2_reveal", "fg_formula", "fg_code")
        no_english(at, "answers, formula and code open")


def test_kimi_k3_reads_in_japanese_through_its_widgets():
    with use_language("ja"):
        at = japanese("kimi_k3", timeout=300)
        no_english(at, "Story, first run")
        _engineer(at)
        no_english(at, "first run: the whole run")
        _step(at, "k3_step_step", 2)
        no_english(at, "the first bytes of the reader's text")
        at.text_input(key="k3_prompt").set_value("Hi").run()
        _step(at, "k3_step_step", 5)  # past the two bytes typed: the model's own writing
        no_english(at, "stepping through the model's own writing")
        at.text_input(key="k3_prompt").set_value("x" * 60).run()  # longer than mini-K3 reads: cut
        no_english(at, "a text that was cut")
        open_toggles(at, "k3_n1_reveal", "k3_n2_reveal", "k3_n3_reveal", "k3_formula", "k3_code")
        no_english(at, "answers, formula and code open")


def test_experts_reads_in_japanese_through_its_widgets():
    with use_language("ja"):
        at = japanese("experts", timeout=300)
        no_english(at, "Story, first run")
        _engineer(at)
        no_english(at, "first run")
        _step(at, "ex_step_step", 3)
        no_english(at, "three bytes on")
        layers = at.select_slider(key="ex_layer").options
        at.select_slider(key="ex_layer").set_value(layers[-1]).run()
        no_english(at, "the last MoE layer")
        at.text_input(key="ex_prompt").set_value("aaaaaaaa").run()  # one letter: most experts idle
        no_english(at, "one repeated letter")
        open_toggles(at, "ex_n1_reveal", "ex_n2_reveal", "ex_formula", "ex_code")
        no_english(at, "answers, formula and code open")


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
