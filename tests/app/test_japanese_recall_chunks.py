"""The collisions and chunks lessons in Japanese, driven through their widgets: every state a reader
can reach (the trained-recall panel's toggle, models and widths, a bad list, a random list; the
chunk checks in both precisions and a live measurement) renders with no exception and no English
sentence left (tests/app/japanese.py), and the charts' titles and axes are Japanese."""

from __future__ import annotations

import pytest

from core.i18n import use_language
from tests.app.driver import chart_spec, shown_title
from tests.app.japanese import japanese, japanese_words, no_english
from tests.app.test_japanese_boards import japanese_engineer

pytestmark = pytest.mark.slow


def test_collisions_reads_in_japanese_through_its_widgets():
    # the widgets' format functions run here too: they must name the options in Japanese
    with use_language("ja"):
        at = japanese_engineer("collisions")
        no_english(at, "first run")
        at.radio(key="co_keys").set_value("orthogonal").run()
        at.slider(key="co_n").set_value(40).run()
        no_english(at, "orthogonal keys, n past d")
        for toggle in ("co_q1_reveal", "co_q2_reveal", "co_formula", "co_tr_curves"):
            at.toggle(key=toggle).set_value(True).run()
        no_english(at, "answers, formula and training curves open")
        for mixer in ("attention", "hybrid", "kda"):
            at.selectbox(key="co_tr_mixer").set_value(mixer).run()
            no_english(at, f"trained model {mixer}")
        at.radio(key="co_tr_width").set_value(32).run()
        no_english(at, "the widest trained model")
        at.button(key="co_tr_fill").click().run()
        no_english(at, "a random list")
        at.text_input(key="co_tr_text").set_value("a:1 b:2 ? a z:").run()
        no_english(at, "a list the panel cannot read")
        assert at.error and japanese_words(at.error[0].value)


def test_collisions_charts_speak_japanese():
    at = japanese("collisions", timeout=300)
    curves = chart_spec(at, "co_curves")
    assert japanese_words(shown_title(at, curves))
    assert japanese_words(curves["layout"]["xaxis"]["title"]["text"])
    accuracy = chart_spec(at, "co_tr_accuracy_chart")
    assert japanese_words(accuracy["layout"]["xaxis"]["title"]["text"])
    assert japanese_words(accuracy["layout"]["yaxis"]["title"]["text"])


def test_chunks_reads_in_japanese_through_its_widgets():
    # the widgets' format functions run here too: they must name the options in Japanese
    with use_language("ja"):
        at = japanese_engineer("chunks")
        no_english(at, "first run")
        timeline = chart_spec(at, "ch_timeline")
        assert japanese_words(shown_title(at, timeline))
        assert all(japanese_words(t) for t in timeline["layout"]["yaxis"]["ticktext"])
        waits = chart_spec(at, "ch_waits")
        assert waits["data"][0]["x"][0] == "1ステップずつ"
        assert japanese_words(waits["layout"]["yaxis"]["title"]["text"])
        at.radio(key="ch_dtype").set_value("fp64").run()
        at.select_slider(key="ch_C").set_value(64).run()
        for toggle in ("ch_q1_reveal", "ch_q2_reveal", "ch_formula"):
            at.toggle(key=toggle).set_value(True).run()
        no_english(at, "fp64, one chunk, answers and formula open")
        at.select_slider(key="ch_speed_T").set_value(64).run()
        at.slider(key="ch_repeats").set_value(1).run()
        at.button(key="ch_measure").click().run()
        no_english(at, "measured here")
        speed = chart_spec(at, "ch_speed")
        assert japanese_words(shown_title(at, speed)) and japanese_words(
            speed["layout"]["yaxis"]["title"]["text"]
        )
