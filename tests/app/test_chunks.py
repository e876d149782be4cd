"""Chunks under AppTest: the live equality check and the speed measurement."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.mechanisms import rule_keys
from core.ops import timing_record as chunk_timing
from tests.app import driver, story
from tests.app.driver import chart_spec as chart

PAGE = driver.page_path("chunks")


def test_equality_check_and_speed():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    driver.assert_clean(at, "first run")
    assert at.success and "equals step-by-step" in at.success[0].value
    diff = driver.small_number(next(m.value for m in at.metric if m.label == "largest output difference"))
    assert diff < 1e-5
    waits = next(m.value for m in at.metric if m.label.startswith("waits in line, chunks"))
    assert waits == "4"  # 32 tokens in chunks of 8
    shipped = chunk_timing.load()
    assert shipped is not None
    before = " ".join(c.value for c in at.caption)
    assert f"A stored recording, not a measurement of this machine: measured on {shipped.date}" in before
    assert f"(recorded {shipped.date})" in driver.shown_title(at, chart(at, "ch_speed"))
    at.select_slider(key="ch_speed_T").set_value(64).run()
    at.slider(key="ch_repeats").set_value(1).run()
    at.button(key="ch_measure").click().run()
    driver.assert_clean(at, "measuring")
    speed = chart(at, "ch_speed")
    assert list(speed["data"][0]["x"]) == ["step by step", "C = 4", "C = 8", "C = 16", "C = 32", "C = 64"]
    assert "recorded" not in driver.shown_title(at, speed)
    assert any(c.value.startswith("Measured here just now") for c in at.caption)


@pytest.mark.slow
@pytest.mark.parametrize("rule", rule_keys())  # every registered rule, a new one included
def test_every_rule_and_precision(rule: str):
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    at.selectbox(key="ch_rule").set_value(rule).run()
    for dtype in ("fp32", "fp64"):
        at.radio(key="ch_dtype").set_value(dtype).run()
        driver.assert_clean(at, f"{rule} {dtype}")
        assert at.success, f"{rule} {dtype}: chunked and step-by-step disagree"
    if rule == rule_keys()[-1]:
        assert driver.sweep_sliders(at) == 6
        driver.assert_clean(at, "slider sweep")


def test_story_shows_the_timeline_and_engineer_adds_the_hand_over_chart():
    """Story: the timeline and the speed bars, each with a one-line caption; the hand-overs-per-form chart,
    the `core/ops` sentence and the run's sizes only at Engineer depth."""
    plain = story.rendered("chunks", "story", "en")
    keys = {element.proto.id.rsplit("-", 1)[-1] for element in driver.charts(plain)}
    assert {"ch_timeline", "ch_speed"} <= keys and "ch_waits" not in keys
    assert not story.forbidden(story.running_text(plain.main))
    deep = story.rendered("chunks", "engineer", "en")
    keys = {element.proto.id.rsplit("-", 1)[-1] for element in driver.charts(deep)}
    assert "ch_waits" in keys
    texts = story.running_text(deep.main)
    assert any("`core/ops`" in t for t in texts) and any("size 32 and 2 heads" in t for t in texts)
    from core.prefill import words as prefill_words  # the committed CPU prefill run, at Engineer depth only

    source, run = prefill_words.latest()
    assert prefill_words.prefill_sentence(run, source) in texts
    assert not any("Prefill measured" in t for t in story.running_text(plain.main))
