"""Lesson 5 under AppTest: four panels per step on one colour axis; the rewrite replaces."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app import driver
from tests.app.driver import chart_spec as chart

PAGE = driver.page_path("deltanet")


def test_erase_write_panels_and_the_rewrite():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    driver.assert_clean(at, "first run")
    limits = set()
    for step in range(1, 8):
        at.button(key="dn_t_step").click().run()
        driver.assert_clean(at, f"step {step}")
        spec = chart(at, "dn_parts")
        assert [t["type"] for t in spec["data"]] == ["heatmap"] * 4
        axis = spec["layout"]["coloraxis"]
        limits.add((axis["cmin"], axis["cmax"]))
    assert len(limits) == 1, "the colour range must be fixed across steps"
    assert "apple → green" in driver.shown_title(at, spec)
    caption = " ".join(c.value for c in at.caption)
    assert "linear attention returns red 1.00" in caption  # the blend (β=1, added twice)
    assert "DeltaNet returns red 0.00" in caption  # replaced


@pytest.mark.slow
def test_a_curious_reader_cannot_break_it():
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    assert driver.sweep_sliders(at) == 3
    at.radio(key="dn_keys").set_value("orthogonal").run()
    assert driver.click_steps(at, times=20) == 1
    driver.assert_clean(at, "after 20 steps")
