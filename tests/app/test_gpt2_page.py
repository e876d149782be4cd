"""Lesson 1 under AppTest: stepping re-reads the whole text, and the counters come from the model."""

from __future__ import annotations

import numpy as np
import pytest

from core.generation import positions_computed_formula
from core.tokenizer import encode
from tests.app import driver
from tests.app.driver import chart_spec as chart
from tests.app.driver import plotly_array as array

PAGE = driver.page_path("gpt2")
DEFAULT_PROMPT = "One day, Mia went to the "


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


@pytest.fixture(scope="module")
def page():
    return driver.fresh(PAGE)


def test_stepping_recomputes_the_whole_text(page):
    at = page
    assert "GPT-2" in at.title[0].value
    p = len(encode(DEFAULT_PROMPT))
    for _ in range(5):
        at.button(key="gpt2_t_step").click().run()
    driver.assert_clean(at, "five steps")
    assert at.session_state["gpt2_t"] == 5
    assert metric(at, "Positions run this step") == str(p + 4)
    expected = positions_computed_formula(p, 5, use_cache=False)
    assert metric(at, "Total positions run") == f"{expected:,}"
    assert metric(at, "Formula says") == f"{expected:,}"

    grid = chart(at, "gpt2_grid")["data"][0]
    assert grid["type"] == "heatmap" and grid["zmin"] == 0 and grid["zmax"] == 2
    z = array(grid["z"])
    stepped = ~np.isnan(z).all(axis=1)
    assert stepped.sum() == 5  # one filled row per step, the rest waiting
    ran = (np.nan_to_num(z[:5]) > 0).sum(axis=1)
    assert ran.tolist() == [p, p + 1, p + 2, p + 3, p + 4]  # each row re-reads the whole prefix

    at.button(key="gpt2_t_back").click().run()
    assert at.session_state["gpt2_t"] == 4
    at.button(key="gpt2_t_reset").click().run()
    assert at.session_state["gpt2_t"] == 0
    driver.assert_clean(at, "back and reset")


def test_long_prompt_is_cut_with_a_note(page):
    at = page
    at.text_input(key="gpt2_prompt").input("キャッシュ" * 26).run()  # 390 bytes > 256-byte window
    driver.assert_clean(at, "long prompt")
    assert any("context window" in w.value for w in at.warning)
    assert any("stops" in i.value for i in at.info)


@pytest.mark.slow
def test_a_curious_reader():
    at = driver.fresh(PAGE)
    assert driver.type_text(at) == 1
    assert driver.sweep_sliders(at) == 3
    assert driver.try_selectboxes(at) == 0
    assert driver.click_steps(at, times=20) == 1
    assert at.session_state["gpt2_t"] == 20
