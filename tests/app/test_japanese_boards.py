"""The primer, linear attention and DeltaNet in Japanese, driven through their widgets: every state a
reader can reach (sliders, picks, Step clicks, answers, formulas and code opened) renders with no
exception and no English sentence left (tests/app/japanese.py), and the charts' titles, axes and
panel titles are Japanese."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.i18n import use_language
from tests.app.driver import assert_clean, chart_spec, page_path, shown_title
from tests.app.japanese import japanese, japanese_words, no_english, open_toggles

pytestmark = pytest.mark.slow


def japanese_engineer(slug: str, timeout: float = 300) -> AppTest:
    """A page opened in Japanese at Engineer depth (`?lang=ja&depth=engineer`): everything Story shows and
    the rest — code, the full captions — so a walk through its widgets reaches every string. The Story
    page is checked on its own first (`japanese(slug)`)."""
    no_english(japanese(slug, timeout=timeout), f"{slug} at Story depth")
    at = AppTest.from_file(page_path(slug), default_timeout=timeout)
    at.query_params["lang"] = "ja"
    at.query_params["depth"] = "engineer"
    at.run()
    assert_clean(at, f"first run of {slug} in Japanese at Engineer depth")
    return at


def test_primer_reads_in_japanese_through_its_widgets():
    with use_language("ja"):  # the widgets' format functions run here too
        at = japanese_engineer("primer")
        no_english(at, "first run")
        at.slider(key="pr_sweet").set_value(0.0).run()
        at.slider(key="pr_b_dir").set_value(110).run()  # b at right angles to a
        at.selectbox(key="pr_query").set_value("snow").run()
        at.radio(key="pr_row").set_value("sky").run()
        no_english(at, "arrows moved, another query")
        at.selectbox(key="pr_pair1").set_value(at.selectbox(key="pr_pair1").options[2]).run()
        at.radio(key="pr_read").set_value("snow").run()  # a key that was not written
        at.slider(key="pr_n").set_value(1).run()
        open_toggles(
            at, "pr_q1_reveal", "pr_q2_reveal", "pr_f1", "pr_f2", "pr_f3", "pr_f4", "pr_f5", "pr_code"
        )
        no_english(at, "other pairs, one pair on the board, answers, formulas and code open")


def test_linear_attention_reads_in_japanese_through_its_widgets():
    with use_language("ja"):
        at = japanese_engineer("linear_attention")
        no_english(at, "first run")
        for _step in range(3):
            at.button(key="la_t_step").click().run()
        no_english(at, "after three steps")
        at.slider(key="la_d").set_value(4).run()
        at.slider(key="la_n").set_value(16).run()  # colours past the board's columns; softmax misses keys
        at.button(key="la_t_step").click().run()
        no_english(at, "a small board, many pairs")
        for _step in range(8):
            at.button(key="la_t_step").click().run()
        no_english(at, "a colour without a column of its own")
        at.radio(key="la_keys").set_value("orthogonal").run()
        at.slider(key="la_T").set_value(8).run()
        open_toggles(at, "la_q1_reveal", "la_q2_reveal", "la_formula", "la_code")
        no_english(at, "orthogonal keys, answers, formula and code open")


def test_deltanet_reads_in_japanese_through_its_widgets():
    with use_language("ja"):
        at = japanese_engineer("deltanet")
        no_english(at, "first run: the rewrite")
        for _step in range(2):
            at.button(key="dn_t_step").click().run()
        no_english(at, "the first tokens, nothing to erase yet")
        at.radio(key="dn_keys").set_value("random").run()
        at.slider(key="dn_beta").set_value(0.5).run()
        at.slider(key="dn_n").set_value(30).run()
        no_english(at, "random keys, half strength, many pairs")
        open_toggles(at, "dn_q1_reveal", "dn_q2_reveal", "dn_formula", "dn_code")
        no_english(at, "answers, formula and code open")


def test_board_charts_speak_japanese():
    at = japanese_engineer("linear_attention")
    memory = chart_spec(at, "la_memory")
    assert japanese_words(shown_title(at, memory))
    assert japanese_words(memory["layout"]["xaxis"]["title"]["text"])
    assert japanese_words(memory["layout"]["yaxis"]["title"]["text"])
    assert all(japanese_words(trace["name"]) for trace in memory["data"])
    at = japanese_engineer("deltanet")
    parts = chart_spec(at, "dn_parts")
    panel_titles = [a["text"] for a in parts["layout"]["annotations"]]
    assert len(panel_titles) == 4 and all(japanese_words(t) for t in panel_titles)
    assert japanese_words(parts["layout"]["yaxis"]["title"]["text"])
    curves = chart_spec(at, "dn_curves")
    assert japanese_words(shown_title(at, curves))
    at = japanese_engineer("primer")
    dot = chart_spec(at, "pr_dot")
    assert japanese_words(shown_title(at, dot))
    assert japanese_words(dot["layout"]["xaxis"]["title"]["text"])
