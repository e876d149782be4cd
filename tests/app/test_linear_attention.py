"""Linear attention under AppTest: the regrouping is exact, the board steps with a fixed colour range."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import board as bd
from core.units import format_count
from tests.app import driver
from tests.app.driver import chart_spec as chart
from tests.app.driver import metric_value as metric
from ui.course import number

PAGE = driver.page_path("linear_attention")


def test_regrouping_and_board_stepping():
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["depth"] = "engineer"  # the counts in full and the seed are Engineer's
    at.run()
    driver.assert_clean(at, "first run")
    assert at.title[0].value.startswith(f"{number('linear_attention')} ·")
    assert driver.small_number(metric(at, "largest difference")) < 1e-12
    rg = bd.regroup(4, 3, 3, 0)
    assert metric(at, "multiply-adds, (QKᵀ)V") == f"{rg.left_ops:,}"
    # the two routes as drawn: the same numbers, and the board is d_k × d_v whatever T is
    left, right = (driver.plotly_array(chart(at, key)["data"][0]["z"]) for key in ("la_left", "la_right"))
    np.testing.assert_allclose(left, right, atol=1e-12)
    assert left.shape == (4, 3) and driver.plotly_array(
        chart(at, "la_small_board")["data"][0]["z"]
    ).shape == (3, 3)
    assert driver.plotly_array(chart(at, "la_scores")["data"][0]["z"]).shape == (4, 4)
    assert driver.shown_title(at, chart(at, "la_right")) == "Q (Kᵀ V)"
    # the counts at 100,000 tokens, in words: 100,000² · 128 · 2 and 100,000 · 128² · 2
    assert any(
        "2.6 trillion multiply-adds, the right 3.3 billion (781× fewer)" in c.value for c in at.caption
    )
    ranges = set()
    for step in range(1, 4):
        at.button(key="la_t_step").click().run()
        driver.assert_clean(at, f"step {step}")
        spec = chart(at, "la_board")
        assert [t["type"] for t in spec["data"]] == ["heatmap", "heatmap"]  # this key, the board
        axis = spec["layout"]["coloraxis"]
        ranges.add((axis["cmin"], axis["cmax"]))
        assert f"after token {step}" in driver.shown_title(at, spec)
    assert len(ranges) == 1, "the board's colour range must not change between steps"
    run = bd.write_stream(bd.word_stream(12), "linear", d=8, keys="random")
    price = chart(at, "la_price")
    assert price["layout"]["annotations"][1]["text"] == f"board:<br>{run.recall().accuracy:.0%}"
    # an outline around the right value of each of the 8 keys whose colour owns a column, in both panels
    outlines = [shape for shape in price["layout"]["shapes"] if shape["type"] == "rect"]
    assert len(outlines) == 2 * 8
    assert all(shape["x1"] - shape["x0"] < 1 and shape["y1"] - shape["y0"] < 1 for shape in outlines)
    # token 9 (rose → pink): pink came after the 8 columns ran out, and the caption says so
    for _ in range(6):
        at.button(key="la_t_step").click().run()
    assert any("pink came after the board's 8 columns ran out" in c.value for c in at.caption)
    assert not any("in pink's column" in c.value for c in at.caption)


@pytest.mark.slow
def test_a_curious_reader_cannot_break_it():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert driver.sweep_sliders(at) == 3
    at.radio(key="la_keys").set_value("orthogonal").run()
    driver.assert_clean(at, "orthogonal keys")
    assert driver.click_steps(at, times=20) == 1
    assert at.session_state["la_t"] == at.slider(key="la_n").value  # clamped at the end of the stream
    at.button(key="la_t_reset").click().run()
    assert at.session_state["la_t"] == 0


def test_story_keeps_one_draw_and_the_plain_ratio():
    """Story draws one fixed set of random numbers (no seed box) and says the regrouping's saving as one
    computed ratio; Engineer adds the seed, the counts and the same counts in FLOPs (two per multiply-add)."""
    story = AppTest.from_file(PAGE, default_timeout=120).run()
    driver.assert_clean(story, "Story")
    assert not [w for w in story.number_input if w.key == "la_seed"]
    left, right = bd.regroup_ops(100_000, 128, 128)
    assert any(f"{left / right:,.0f}× fewer multiply-adds" in c.value for c in story.caption)
    assert not any("FLOPs" in c.value for c in story.caption)
    engineer = AppTest.from_file(PAGE, default_timeout=120)
    engineer.query_params["depth"] = "engineer"
    engineer.run()
    assert engineer.number_input(key="la_seed").value == 0
    flops = next(c.value for c in engineer.caption if "FLOPs" in c.value)
    assert format_count(2 * left) in flops and format_count(2 * right) in flops
