"""The Kimi K3 page: the real K3 map and memory from core/specs, and mini-K3 stepping live."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from core.models.mini_k3 import MiniK3Config
from core.specs import SPECS
from core.units import format_bytes
from tests.app import driver, story
from tests.app.driver import READER_TEXT, assert_clean, page_path
from tests.app.driver import chart_spec as _spec
from tests.app.driver import metric_value as _metric
from tests.app.driver import plotly_array as _array
from ui.course import number

PAGE = page_path("kimi_k3")
needs_mini_k3 = pytest.mark.usefixtures("mini_k3_checkpoint")  # shipped: fails if missing, never skips
pytestmark = needs_mini_k3


at = story.page_fixture("kimi_k3", timeout=300)  # Engineer depth: everything (Story's part: tested below)


def test_page_shows_the_real_k3_from_specs(at):
    assert at.title[0].value.startswith(f"{number('kimi_k3')} · Kimi K3")
    counts = {"layers": "93", "KDA layers": "69", "MLA layers": "24", "AttnRes blocks": "8"}
    assert {label: _metric(at, label) for label in counts} == counts
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

    from core.figures import attn_res_heatmap, k3_memory
    from core.figures.figure_dict import encoded
    from core.models.mini_k3 import MiniK3
    from core.models.mini_k3_trace import live_run

    run = live_run(MiniK3.load(), list(b"Board and cache."), new_tokens=3)
    n = len(run.tokens_in)

    def spec(fig):  # a step is the patched dict; the reader gets it encoded (ui.charts.show_figure)
        return json.loads(pio.to_json(encoded(fig) if isinstance(fig, dict) else fig, validate=False))

    pairs = [
        (k3_memory.layer_memory_figure, k3_memory.layer_memory_step),
        (k3_memory.memory_over_time_figure, k3_memory.memory_over_time_step),
        (attn_res_heatmap.attn_res_figure, attn_res_heatmap.attn_res_step),
    ]
    for build, patch in pairs:
        base = build(run, n).to_dict()
        for step in range(1, n + 1):
            assert spec(patch(base, run, step)) == spec(build(run, step)), (build.__name__, step)


def test_layer_map_is_one_row_per_attn_res_block_with_every_layer_numbered(at):
    """On a phone a 93-cell strip blurred; rows of one AttnRes block keep cells readable and show
    the 3 : 1 schedule as whole columns of MLA."""
    k3 = SPECS["kimi_k3"]
    size = k3.attn_res_block_size
    bars = [trace for trace in _spec(at, "k3_map")["data"] if trace["type"] == "bar"]
    numbers = sorted(int(t) for trace in bars for t in trace["text"])
    assert numbers == list(range(1, k3.num_layers + 1))  # every layer once, labelled with its number
    kinds = k3.layer_kinds()
    for trace in bars:
        for label, column, base in zip(trace["text"], _array(trace["x"]), _array(trace["base"]), strict=True):
            layer = int(label) - 1
            assert column == layer % size + 1 and round(base + 0.45) == layer // size
    mla = next(trace for trace in bars if "MLA" in trace["name"])
    assert {kinds[int(t) - 1] for t in mla["text"]} == {"mla"}
    axis = _spec(at, "k3_map")["layout"]["yaxis"]
    assert (
        len(axis["ticktext"]) == len(range(0, k3.num_layers, size)) and axis["ticktext"][0] == "layers 1–12"
    )


def test_per_layer_bars_keep_their_byte_labels_upright(at):
    """Flat "8.0 KiB" labels are wider than a bar on a phone and plotly dropped them; upright they fit."""
    for trace in _spec(at, "k3_layer_memory")["data"]:
        assert trace["textangle"] == -90 and trace["textposition"] == "outside"
        assert len(trace["text"]) == len(_array(trace["y"])) and all("B" in t for t in trace["text"])


def test_attn_res_takeaway_quotes_the_heatmap_shown(at):
    """The one-line takeaway under the heatmap names a cell of it, with its weight, at every byte."""
    for _ in range(5):
        at.button(key="k3_step_step").click().run()
        assert_clean(at, "stepping")
        spec = _spec(at, "k3_attn_res")["data"][0]
        z = _array(spec["z"])
        lines = [m.value for m in at.markdown if m.value.startswith("**What to see:**")]
        assert len(lines) == 1, lines
        found = re.search(
            r"for this byte, \*\*(.+?)\*\* leans .* \*\*([0-9.]+)\*\* of its mix to the \*\*(.+?)\*\*"
            r".*over its (\d+) sources would give each ([0-9.]+)",
            lines[0],
        )
        assert found, lines[0]
        mix, weight, source, n, even = found.groups()
        row, col = list(spec["y"]).index(mix), list(spec["x"]).index(source)
        assert f"{z[row, col]:.2f}" == weight
        assert int(n) == int(np.sum(~np.isnan(z[row]))) and even == f"{1 / int(n):.2f}"
        leans = [np.nanmax(r) - 1 / np.sum(~np.isnan(r)) for r in z if np.sum(~np.isnan(r)) > 1]
        assert z[row, col] - 1 / int(n) == pytest.approx(max(leans), abs=1e-6)  # the most lopsided row


def test_story_keeps_the_layer_map_and_the_attn_res_heatmap():
    """Story carries the page's two ideas, one picture each (the layer map, the AttnRes heatmap), each with a
    caption; the memory charts, the step time and the experts line are built only at Engineer depth."""
    plain = story.rendered("kimi_k3", "story", "en", timeout=300)
    keys = driver.chart_keys(plain)
    assert {"k3_map", "k3_attn_res"} <= keys
    assert not {"k3_memory", "k3_layer_memory", "k3_memory_time"} & keys
    assert not [m for m in plain.metric if m.label == "this step took"]
    assert not [m for m in plain.markdown if m.value.startswith("Experts this byte woke")]
    assert not story.forbidden(story.running_text(plain.main))
    for _ in range(3):
        plain.button(key="k3_step_step").click().run()
        assert_clean(plain, "stepping in Story")
    assert "k3_layer_memory" not in driver.chart_keys(plain)


def test_attn_res_heatmap_labels_count_from_1_like_the_step_counter(at):
    """The Step counter says "byte 1" for the first byte; the heatmap's layers and blocks count from 1 too."""
    spec = _spec(at, "k3_attn_res")["data"][0]
    assert list(spec["y"])[0] == "layer 1 before KDA"
    assert list(spec["x"])[:2] == ["embedding", "block 1: layers 1–3"]
