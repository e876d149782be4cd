"""DeltaNet under AppTest: four panels per step on one colour axis; the rewrite replaces."""

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


def _engineer(page: str = PAGE) -> AppTest:
    at = AppTest.from_file(page, default_timeout=180)
    at.query_params["depth"] = "engineer"
    at.run()
    driver.assert_clean(at, "first run at Engineer depth")
    return at


def test_section_2_says_which_keys_it_shares_with_the_earlier_lessons():
    """Issue 40, item 8a: with its default orthogonal keys section 2 shares only the seed with linear
    attention and collisions (they picture random keys), and says so; with random keys it pictures the
    very keys they do — the same board, so the same share recalled, read off both pages."""
    from ui.course import lesson_ref

    lessons = lesson_ref("linear_attention", "collisions")
    at = _engineer()
    assert at.radio(key="dn_keys").value == "orthogonal"
    (said,) = [c.value for c in at.caption if lessons in c.value and "draw 1" in c.value]
    assert "the same seed" in said and "same keys" not in said
    at.radio(key="dn_keys").set_value("random").run()
    (said,) = [c.value for c in at.caption if lessons in c.value and "draw 1" in c.value]
    assert "the same keys" in said
    linear_here = driver.metric_value(at, "keys recalled: linear → DeltaNet").split(" → ")[0]
    collisions = AppTest.from_file(driver.page_path("collisions"), default_timeout=180).run()
    assert collisions.radio(key="co_keys").value == "random"  # what that page pictures by default
    assert collisions.slider(key="co_n").value == at.slider(key="dn_n").value
    assert collisions.slider(key="co_d").value == at.slider(key="dn_d").value
    assert driver.metric_value(collisions, "keys recalled, this draw") == linear_here
