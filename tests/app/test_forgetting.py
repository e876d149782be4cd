"""Forgetting under AppTest: three boards step together; KDA keeps the fact, Gated DeltaNet fades it."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import board as bd
from tests.app import driver, story
from tests.app.driver import chart_spec as chart

PAGE = driver.page_path("forgetting")


def chart_keys(at: AppTest) -> set[str]:
    """The keys of the charts on the page (Streamlit ends a chart's element id in "-key")."""
    return {element.proto.id.rsplit("-", 1)[-1] for element in driver.charts(at)}


def fact_strength(at: AppTest) -> dict[str, float]:
    spec = chart(at, "fg_strength")
    return {trace["name"]: trace["y"][0] for trace in spec["data"]}


def test_kda_keeps_the_fact():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    driver.assert_clean(at, "first run")
    s = fact_strength(at)
    assert s["Kimi Delta Attention"] == pytest.approx(1.0, abs=1e-4)
    assert s["Gated DeltaNet"] == pytest.approx(0.1, abs=1e-4)
    for _ in range(6):
        at.button(key="fg_t_step").click().run()
    driver.assert_clean(at, "stepping")
    assert [t["type"] for t in chart(at, "fg_boards")["data"]] == ["heatmap"] * 3
    at.slider(key="fg_alpha_fact").set_value(0.5).run()
    assert fact_strength(at)["Kimi Delta Attention"] == pytest.approx(0.5, abs=1e-4)


def test_it_opens_after_the_topic_switch_where_the_boards_differ():
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["depth"] = "engineer"  # the fill maps and their caption are the engineers'
    at.run()
    driver.assert_clean(at, "first run")
    assert at.session_state["fg_t"] == 0  # no Step pressed yet
    spec = chart(at, "fg_boards")
    boards = [driver.plotly_array(trace["z"]) for trace in spec["data"]]  # three (d, d_v) boards
    assert len(boards) == 3
    gaps = [np.linalg.norm(a - b) for i, a in enumerate(boards) for b in boards[i + 1 :]]
    assert min(gaps) > 0.5, f"the three boards of the opening view must differ, gaps {gaps}"
    ts = bd.topic_switch(8, 2, 4, 4)
    opened = int(driver.shown_title(at, spec).split("after ")[1].split(" ")[0])
    assert opened > ts.switch  # after the switch token, not a typed index before it
    assert f"token {opened}, after the switch" in driver.step_status(at)
    caption = " ".join(c.value for c in at.caption)
    assert "differ in channels 0 and 1 only" in caption  # the fill maps, read from their data


@pytest.mark.slow
def test_a_curious_reader_cannot_break_it():
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    assert driver.sweep_sliders(at) == 5
    at.radio(key="fg_when").set_value("every").run()
    at.radio(key="fg_keys").set_value("orthogonal").run()
    assert driver.click_steps(at, times=20) == 1
    driver.assert_clean(at, "after 20 steps")


def test_story_shows_the_idea_and_engineer_the_rest():
    """Story: the rates, the stepped boards and what is left, each with a caption; the fill maps, the board
    distances and the trained-recall pointer only at Engineer depth (and only computed there)."""
    plain = story.rendered("forgetting", "story", "en")
    keys = chart_keys(plain)
    assert {"fg_rates", "fg_boards", "fg_strength"} <= keys
    assert not {"fg_fill_gated", "fg_fill_kda"} & keys
    texts = story.running_text(plain.main)
    assert not any("How far apart they are" in t for t in texts)
    assert not any("Small models trained on associative recall" in t for t in texts)
    deep = story.rendered("forgetting", "engineer", "en")
    assert {"fg_fill_gated", "fg_fill_kda"} <= chart_keys(deep)
    texts = story.running_text(deep.main)
    assert any("How far apart they are" in t for t in texts)
