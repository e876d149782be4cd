"""Lesson 4 under AppTest: live recall numbers, curves, the marked place for the trained panel."""

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
