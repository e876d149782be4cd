"""Lesson 3 under AppTest: the regrouping is exact, the board steps with a fixed colour range."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core import board as bd
from tests.app import driver

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "03_linear_attention.py")


def chart(at: AppTest, key: str) -> dict:
    """The plotly spec of the chart drawn with `key`."""
    for element in at.get("plotly_chart"):
        if element.proto.id.endswith(f"-{key}"):
            return json.loads(element.proto.spec)
    raise AssertionError(f"no chart with key {key!r}")


def metric(at: AppTest, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def test_regrouping_and_board_stepping():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    driver.assert_clean(at, "first run")
    assert at.title[0].value.startswith("3 ·")
    assert float(metric(at, "largest difference")) < 1e-12
    rg = bd.regroup(4, 3, 3, 0)
    assert metric(at, "multiply-adds, (QKᵀ)V") == f"{rg.left_ops:,}"
    ranges = set()
    for step in range(1, 4):
        at.button(key="la_t_step").click().run()
        driver.assert_clean(at, f"step {step}")
        spec = chart(at, "la_board")
        assert [t["type"] for t in spec["data"]] == ["heatmap", "heatmap"]  # this key, the board
        axis = spec["layout"]["coloraxis"]
        ranges.add((axis["cmin"], axis["cmax"]))
        assert f"after token {step}" in spec["layout"]["title"]["text"]
    assert len(ranges) == 1, "the board's colour range must not change between steps"
    run = bd.write_stream(bd.word_stream(12), "linear", d=8, keys="random")
    price = chart(at, "la_price")
    assert f"{run.recall().accuracy:.0%} recalled" in price["layout"]["annotations"][1]["text"]


@pytest.mark.slow
def test_a_curious_reader_cannot_break_it():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    driver.sweep_sliders(at)
    at.radio(key="la_keys").set_value("orthogonal").run()
    driver.assert_clean(at, "orthogonal keys")
    assert driver.click_steps(at, times=20) == 1
    assert at.session_state["la_t"] == at.slider(key="la_n").value  # clamped at the end of the stream
    at.button(key="la_t_reset").click().run()
    assert at.session_state["la_t"] == 0
