"""The Experts page: K3's experts from core/specs and mini-K3's router live on the reader's text."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from core.specs import SPECS
from core.tokenizer import encode
from tests.app import driver, story
from tests.app.driver import READER_TEXT, assert_clean, page_path, step_status
from tests.app.driver import chart_spec as _spec
from tests.app.driver import metric_value as _metric
from tests.app.driver import plotly_array as _array
from tests.app.test_kimi_k3 import needs_mini_k3
from ui.course import next_available, number

PAGE = page_path("experts")
pytestmark = needs_mini_k3


at = story.page_fixture("experts", timeout=300)  # Engineer depth: everything (Story's part: tested below)


def test_k3_counts_come_from_specs(at):
    assert at.title[0].value.startswith(f"{number('experts')} · Experts")
    counts = {"experts per MoE layer": "898", "routed / shared": "896 / 2", "awake per token": "18"}
    assert {label: _metric(at, label) for label in counts} == counts
    bars = _array(_spec(at, "ex_bytes")["data"][0]["x"])
    assert bars[0] > 10 * bars[1]  # dense of the same size reads far more per token
    # the bf16 figure is labelled a what-if, and the released format (MXFP4 routed experts) reads less
    labels = _spec(at, "ex_bytes")["data"][0]["y"]
    assert len(bars) == 3 and "what-if" in labels[1] and "MXFP4" in labels[2] and bars[2] < bars[1]


def test_router_heatmap_is_the_real_routing(at):
    at.text_input(key="ex_prompt").input(READER_TEXT).run()
    assert_clean(at, "typing")
    n = len(encode(READER_TEXT))
    for end in ("min", "max"):
        slider = at.select_slider(key="ex_layer")
        slider.set_value(slider.options[0] if end == "min" else slider.options[-1]).run()
        assert_clean(at, f"layer slider {end}")
        z = _array(_spec(at, "ex_router")["data"][0]["z"])
        assert z.shape == (n, 16)
        assert ((z > 0).sum(axis=1) == 2).all()  # exactly top-2 routed experts per byte
        np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-3)  # renormalised × scaling factor 1.0
        load = _array(_spec(at, "ex_load")["data"][0]["y"])
        assert load.sum() == 2 * n


def test_stepping_through_bytes(at):
    # the grid shows byte 1 from the start, the counter says so, and the first Step moves to byte 2
    status = step_status(at)
    n = int(status.removesuffix("**").rsplit(" ", 1)[1])
    assert status == f"**byte 1 of {n}**" and n > 21
    at.button(key="ex_step_back").click().run()
    assert at.session_state["ex_step"] == 1  # nothing before byte 1
    for i in range(20):
        at.button(key="ex_step_step").click().run()
        assert_clean(at, f"step {i + 1}")
    assert at.session_state["ex_step"] == 21
    assert step_status(at) == f"**byte 21 of {n}**"
    assert any(m.value.startswith("Byte 21: ") for m in at.markdown)
    grid = _spec(at, "ex_mini_grid")["data"]
    picked = [trace for trace in grid if trace["name"].startswith("routed, picked")][0]
    assert len(_array(picked["x"])) == 2
    for key in ("ex_formula", "ex_code", "ex_n1_reveal", "ex_n2_reveal"):
        at.toggle(key=key).set_value(True).run()
        assert_clean(at, f"toggle {key}")


def test_expert_grid_patched_per_byte_matches_a_full_build():
    """The page validates mini-K3's expert grid once and patches each byte's picks into it (speed);
    the result must equal the grid built from scratch."""
    import plotly.io as pio

    from core.figures import expert_grid
    from core.figures.figure_dict import encoded

    def spec(fig):  # a step is the patched dict; the reader gets it encoded (ui.charts.show_figure)
        return json.loads(pio.to_json(encoded(fig) if isinstance(fig, dict) else fig, validate=False))

    for routed, shared, top_k in ((32, 1, 4), (16, 2, 2)):
        base = expert_grid.expert_grid_figure(routed, shared, top_k, [], "who is awake").to_dict()
        for picked in ([], [0, 5, 7, 15], [3, 1]):
            title = f"byte 3: {picked}"
            expected = expert_grid.expert_grid_figure(routed, shared, top_k, picked, title)
            assert spec(expert_grid.expert_grid_step(base, routed, shared, picked, title)) == spec(expected)


@pytest.mark.parametrize("routed, shared, picked", [(896, 2, [0, 1, 895]), (16, 1, [3, 4]), (256, 1, [])])
def test_expert_grid_draws_every_expert_once_with_the_shared_ones_apart(routed, shared, picked):
    """Every expert is one dot; the shared ones sit in their own row above the routed ones, a cell
    apart (on a phone two neighbouring shared squares merged into one block)."""
    from core.figures import expert_grid

    asleep, shared_dots, woken = expert_grid.expert_grid_figure(routed, shared, 2, picked, "t").data
    cells = {(x, y) for trace in (asleep, shared_dots, woken) for x, y in zip(trace.x, trace.y, strict=True)}
    assert len(asleep.x) + len(shared_dots.x) + len(woken.x) == len(cells) == routed + shared
    assert len(shared_dots.x) == shared and len(woken.x) == len(picked)
    assert max(shared_dots.y) < min(min(asleep.y), min(woken.y, default=np.inf)) - 1  # an empty row between
    assert all(np.diff(sorted(shared_dots.x)) >= 2)
    assert asleep.name == f"asleep ({routed - len(picked)})"


def test_k3_grid_opens_on_a_token_with_its_routed_experts_lit(at):
    """A reader who never clicks sees a token's top-k routed experts lit beside the shared ones."""
    moe = SPECS["kimi_k3"].moe
    grid = {trace["name"]: trace for trace in _spec(at, "ex_k3_grid")["data"]}
    picked = next(t for name, t in grid.items() if name.startswith("routed, picked"))
    shared = next(t for name, t in grid.items() if name.startswith("shared"))
    asleep = next(t for name, t in grid.items() if name.startswith("asleep"))
    assert len(_array(picked["x"])) == moe.top_k and len(_array(shared["x"])) == moe.shared
    assert len(_array(asleep["x"])) == moe.experts - moe.top_k


def _layer_caption(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Busiest in layer"))


def test_busiest_caption_names_every_tied_expert(at):
    """The caption names all experts that share the top load (it once named only the first)."""
    at.text_input(key="ex_prompt").input(READER_TEXT).run()
    for layer in at.select_slider(key="ex_layer").options:
        at.select_slider(key="ex_layer").set_value(layer).run()
        assert_clean(at, f"layer {layer}")
        caption = _layer_caption(at)
        load = _array(_spec(at, "ex_load")["data"][0]["y"])
        top = [str(e) for e in np.flatnonzero(load == load.max())]
        named = caption.split(":", 1)[1].split(", with")[0]
        assert sorted(re.findall(r"\d+", named), key=int) == top, caption
        assert f"with {int(load.max())} of the" in caption


def test_even_share_is_a_legend_entry_not_a_label_over_the_bars(at):
    spec = _spec(at, "ex_load")
    assert not spec["layout"].get("annotations")
    even = next(trace for trace in spec["data"] if trace["name"].startswith("even share"))
    load = _array(spec["data"][0]["y"])
    assert _array(even["y"]).tolist() == [load.mean()] * 2
    assert spec["layout"]["legend"]["y"] < 0  # below the axis, never over a bar
    assert f"({load.mean():.1f} bytes each)" in even["name"]


def test_latent_moe_order(at):
    """K3's latent MoE: down projection → routed experts → weighted sum → RMSNorm → up projection."""
    text = "\n".join(e.value for e in (*at.markdown, *at.caption) if isinstance(e.value, str))
    order = re.search(r"down projection.*routed experts run.*weighted sum is normalised.*up projection", text)
    assert order, "the latent MoE order is down → experts → sum → RMSNorm → up"
    assert "a down projection, then an RMSNorm" not in text
    at.toggle(key="ex_formula").set_value(True).run()
    latex = at.latex[0].value
    assert latex.index("RMSNorm") < latex.index("\\sum") < latex.index("W_{\\downarrow}x")  # norm of the sum


def test_router_heatmap_counts_bytes_from_1_like_the_step_counter(at):
    """The Step counter says "byte 1 of n"; the heatmap's first row is byte 1 too, not byte 0."""
    at.text_input(key="ex_prompt").input("Hi there").run()
    assert_clean(at, "typing")
    rows = list(_spec(at, "ex_router")["data"][0]["y"])
    assert rows[0] == "1:H" and rows[-1] == f"{len(rows)}:e"


def test_story_keeps_the_two_expert_grids():
    """Story: K3's grid and mini-K3's stepped grid, each with its one-line caption; the router heatmap, the
    load, the parameter and byte charts only at Engineer depth."""
    plain = story.rendered("experts", "story", "en", timeout=300)
    keys = driver.chart_keys(plain)
    assert {"ex_k3_grid", "ex_mini_grid"} <= keys
    assert not {"ex_router", "ex_load", "ex_params", "ex_bytes"} & keys
    captions = [c.value for c in plain.caption]
    assert captions.count(_GRID_CAPTION) == 2
    assert not story.forbidden(story.running_text(plain.main))
    plain.button(key="ex_step_step").click().run()
    assert_clean(plain, "a Step in Story")
    assert step_status(plain).startswith("**byte 2 of")


_GRID_CAPTION = "One square per expert: orange = woken for this token, dark grey = shared (always on), light grey = asleep."


def test_what_is_still_missing_names_the_next_lesson_from_the_outline():
    """The bridge names the lesson that really comes next (ui.course), at both depths; the GPU page is an
    Engineer's pointer, never called "next"."""
    after = next_available("experts")
    for depth in ("story", "engineer"):
        page = story.rendered("experts", depth, "en", timeout=300)
        texts = [m.value for m in page.markdown]
        bridge = texts[texts.index("**:material/arrow_forward: What is still missing**") + 1]
        assert bridge.endswith(f"Next: {after.title}."), bridge
        assert "own GPU" not in bridge
