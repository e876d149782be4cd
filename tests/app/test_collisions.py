"""Collisions under AppTest: live recall numbers, curves, the marked place for the trained panel."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core import board as bd
from tests.app import driver
from tests.app.driver import chart_spec as chart

PAGE = driver.page_path("collisions")


def test_recall_numbers_come_from_the_board():
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    driver.assert_clean(at, "first run")
    expected = bd.write_stream(bd.word_stream(12), "linear", d=8, keys="random").recall().accuracy
    assert next(m.value for m in at.metric if m.label == "keys recalled, this draw") == f"{expected:.0%}"
    curves = chart(at, "co_curves")
    assert len(curves["data"]) == 3 and all(t["type"] == "scatter" for t in curves["data"])
    assert any(h.value == "3 · Trained models show the same gap" for h in at.header)
    at.slider(key="co_n").set_value(4).run()
    at.radio(key="co_keys").set_value("orthogonal").run()
    driver.assert_clean(at, "orthogonal, n < d")
    assert next(m.value for m in at.metric if m.label == "keys recalled, this draw") == "100%"


@pytest.mark.slow
def test_sliders_to_both_ends():
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    assert driver.sweep_sliders(at) == 3
    driver.assert_clean(at, "slider sweep")
    assert chart(at, "co_blur")["data"][0]["type"] == "heatmap"


def test_what_is_training_comes_before_the_trained_chart_and_story_stays_plain():
    """Issue 40, item 6: where a reader first meets a trained model's result, a plain "What is training?"
    box comes first, defining loss and learning rate (and saying what a seed is); Story shows no seeds,
    learning rates or loss curves of its own, which Engineer keeps; the curve caption's numbers are the
    curves' own."""
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    driver.assert_clean(at, "Story")
    labels = [e.label for e in at.expander]
    (box,) = [e for e in at.expander if e.label.startswith("What is training?")]
    text = " ".join(m.value for m in box.markdown)
    for word in ("**loss**", "**learning rate**", "**seed**"):
        assert word in text
    assert labels.index(box.label) > labels.index(next(x for x in labels if x.startswith("New words")))
    outside = " ".join(m.value for m in [*at.markdown, *at.caption] if m.value not in text)
    for engineers in ("learning rate", "seed", "arXiv", "loss curve"):
        assert engineers not in outside.replace(text, ""), engineers
    assert not [t for t in at.toggle if t.key == "co_tr_curves"]
    ns = bd.pair_counts(8, 17)
    full = bd.last_full_recall(ns, bd.recall_curve("linear", 8, ns, bd.DRAWS, keys="orthogonal"))
    assert any(f"recalls every pair up to n = {full}, then falls" in c.value for c in at.caption)
    engineer = AppTest.from_file(PAGE, default_timeout=180)
    engineer.query_params["depth"] = "engineer"
    engineer.run()
    driver.assert_clean(engineer, "Engineer")
    assert engineer.toggle(key="co_tr_curves").value is False  # the loss curves, behind their toggle
    assert any("learning rates" in c.value and "seeds" in c.value for c in engineer.caption)
