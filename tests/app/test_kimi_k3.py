"""Lesson 8 page: the real K3 map and memory from core/specs, and mini-K3 stepping live."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.models.mini_k3 import CHECKPOINT, MiniK3Config
from core.units import format_bytes
from tests.app import driver
from tests.app.driver import READER_TEXT, assert_clean, fresh, page_path
from tests.app.driver import chart_spec as _spec
from tests.app.driver import metric_value as _metric
from tests.app.driver import plotly_array as _array

PAGE = page_path("kimi_k3")
needs_mini_k3 = pytest.mark.skipif(not CHECKPOINT.exists(), reason="mini-K3 checkpoint not built")
pytestmark = needs_mini_k3


@pytest.fixture(scope="module")
def at() -> AppTest:
    return fresh(PAGE, timeout=300)


def test_page_shows_the_real_k3_from_specs(at):
    assert at.title[0].value.startswith("8 · Kimi K3")
    assert _metric(at, "layers") == "93"
    assert _metric(at, "KDA layers") == "69"
    assert _metric(at, "MLA layers") == "24"
    assert _metric(at, "AttnRes blocks") == "8"
    names = [trace["name"] for trace in _spec(at, "k3_map")["data"]]
    assert any("(69)" in n for n in names) and any("(24)" in n for n in names)
    memory = _spec(at, "k3_memory")["data"]
    twin = _array(memory[-1]["y"])
    hybrid = _array(memory[0]["y"]) + _array(memory[1]["y"])
    assert len(twin) == 2 and (twin > 3 * hybrid).all()


def test_stepping_grows_only_the_cache(at):
    per_token = MiniK3Config().latent_bytes_per_token()
    boards_before = _metric(at, "KDA boards")
    for i in range(20):
        at.button(key="k3_step_step").click().run()
        assert_clean(at, f"step {i + 1}")
    assert at.session_state["k3_step"] == 20
    assert _metric(at, "MLA caches") == format_bytes(3 * 20 * per_token)
    assert _metric(at, "KDA boards") == boards_before
    heat = _array(_spec(at, "k3_attn_res")["data"][0]["z"])
    assert heat.shape == (2 * 9 + 1, 4)  # every sub-layer mix + the output × (embedding + 3 blocks)
    np.testing.assert_allclose(np.nansum(heat, axis=1), 1.0, atol=1e-3)
    assert driver.shown_title(at, _spec(at, "k3_layer_memory")) == "Memory per layer after 20 tokens"
    woke = [m.value for m in at.markdown if m.value.startswith("Experts this byte woke")]
    assert len(woke) == 1 and re.search(r"layer \d+ → experts \d+ and \d+", woke[0]), woke
    at.button(key="k3_step_back").click().run()
    assert at.session_state["k3_step"] == 19
    at.button(key="k3_step_reset").click().run()
    assert at.session_state["k3_step"] == 0
    at.button(key="k3_step_step").click().run()
    assert driver.shown_title(at, _spec(at, "k3_layer_memory")) == "Memory per layer after 1 token"
    assert_clean(at, "back and reset")


def test_reader_text_with_emoji_and_toggles(at):
    at.text_input(key="k3_prompt").input(READER_TEXT).run()
    assert_clean(at, "typing")
    at.text_input(key="k3_prompt").input("").run()
    assert_clean(at, "empty prompt")
    for key in ("k3_formula", "k3_code", "k3_n1_reveal", "k3_n2_reveal", "k3_n3_reveal"):
        at.toggle(key=key).set_value(True).run()
        assert_clean(at, f"toggle {key}")
    assert at.latex and at.code


def test_stepped_figures_patched_from_the_last_step_match_a_full_build():
    """The page builds each stepped picture once per run and patches it per byte (speed); what the
    reader gets must equal the figure built and validated from scratch at that byte."""
    import plotly.io as pio

    from core.figures import k3 as fk
    from core.k3 import live_run
    from core.models.mini_k3 import MiniK3

    run = live_run(MiniK3.load(), list(b"Board and cache."), new_tokens=3)
    n = len(run.tokens_in)

    def spec(fig):
        return json.loads(pio.to_json(fig, validate=False))

    pairs = [
        (fk.layer_memory_figure, fk.layer_memory_step),
        (fk.memory_over_time_figure, fk.memory_over_time_step),
        (fk.attn_res_figure, fk.attn_res_step),
    ]
    for build, patch in pairs:
        base = build(run, n).to_dict()
        for step in range(1, n + 1):
            assert spec(patch(base, run, step)) == spec(build(run, step)), (build.__name__, step)
