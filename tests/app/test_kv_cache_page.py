"""The KV cache page under AppTest: one position per step, a cache row per byte, identical output, the calculator."""

from __future__ import annotations

import re

import numpy as np
import pytest

from core.models.gpt2 import GPT2
from core.plan import PlanInputs, parse, plan
from core.plan.config import SHIPPED_CONFIGS
from core.roofline import DEFAULT_CARD
from core.specs import SPECS
from core.tokenizer import encode
from tests.app import driver, story
from tests.app.driver import chart_spec as chart
from tests.app.driver import plotly_array as array
from tests.app.test_gpt2_page import metric

PAGE = driver.page_path("kv_cache")
DEFAULT_PROMPT = "The cache "


def engineer_page():
    """The page at Engineer depth: the live check in words, the model's guesses, the attention picture,
    the whole-run charts and the calculator."""
    return story.rendered("kv_cache", "engineer", "en", timeout=120)


@pytest.fixture(scope="module")
def page():
    return engineer_page()


def test_cache_grows_one_row_per_byte(page):
    at = page
    assert "KV cache" in at.title[0].value
    p = len(encode(DEFAULT_PROMPT))
    cfg = GPT2.load().config
    for step in range(1, 4):
        at.button(key="kv_t_step").click().run()
        driver.assert_clean(at, f"step {step}")
        rows = p + step - 1
        assert metric(at, "Rows in the cache") == str(rows)
        assert metric(at, "Positions run this step") == str(p if step == 1 else 1)
        assert metric(at, "Same output as without a cache?") == "yes"
        (check,) = [c.value for c in at.caption if c.value.startswith("Live check")]
        assert (
            "at the first step;" if step == 1 else f"chose the same byte at all {step} steps so far"
        ) in check
        # exactly equal scores are said so, not as "at most 0.0e+00"
        assert re.search(
            r"are exactly equal\.$|differ by at most \d\.\d × 10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+ \(float rounding: [^)]+\)\.$",
            check,
        ), check
        keys = chart(at, "kv_heatmaps")["data"][0]
        z = array(keys["z"])
        assert (~np.isnan(z).all(axis=1)).sum() == rows
        assert z.shape[1] == cfg.d_model // cfg.n_head
        assert keys["zmin"] == -keys["zmax"]
    zmax = chart(at, "kv_heatmaps")["data"][0]["zmax"]
    at.button(key="kv_t_step").click().run()
    assert chart(at, "kv_heatmaps")["data"][0]["zmax"] == zmax  # fixed colour range across steps
    attention = array(chart(at, "kv_attention")["data"][0]["z"])
    np.testing.assert_allclose(np.nansum(attention, axis=1), 1.0, atol=1e-5)


def test_the_untouched_page_shows_the_diagonal_and_says_what_to_look_at():
    """Without a click: the grid is a dozen rows, the prompt then one new position per row, and the
    heatmaps' caption names the rows the cache holds and the one the last step appended."""
    at = driver.fresh(PAGE)
    p = len(encode(DEFAULT_PROMPT))
    z = np.nan_to_num(array(chart(at, "kv_grid")["data"][0]["z"]))
    assert z.shape[0] >= 12
    assert np.flatnonzero(z[0]).tolist() == list(range(p))  # step 1 reads the prompt
    for row in range(1, z.shape[0]):
        assert np.flatnonzero(z[row]).tolist() == [p + row - 1]  # then only the newest position
    assert not (z == 1).any()  # nothing recomputed
    (grid_words,) = [c.value for c in at.caption if c.value.startswith("Each row is one step")]
    assert f"ran {p + z.shape[0] - 1:,} positions, **all new**" in grid_words and "diagonal" in grid_words
    rows = int(metric(at, "Rows in the cache"))
    (words,) = [c.value for c in at.caption if c.value.startswith("**Look at the bottom edge.**")]
    steps = at.slider(key="kv_n").value
    assert f"After step {steps} the cache holds {rows} rows" in words
    assert f"each of the {steps - 1} steps since appended **one row**" in words and f"row {rows - 1}" in words
    heat = chart(at, "kv_heatmaps")["layout"]
    assert [s["y0"] for s in heat["shapes"]] == [rows - 1.5] * 2  # the newest row is outlined


def test_layer_and_head_selectors(page):
    at = page
    at.selectbox(key="kv_layer").select(3).run()
    at.selectbox(key="kv_head").select(2).run()
    driver.assert_clean(at, "layer/head")
    assert chart(at, "kv_heatmaps")["data"][0]["type"] == "heatmap"


def test_calculator_shows_the_spill_point(page):
    at = page
    at.selectbox(key="kv_spec").select("llama3_8b").run()
    at.selectbox(key="kv_card").select(DEFAULT_CARD).run()
    at.selectbox(key="kv_precision").select("4-bit weights").run()
    driver.assert_clean(at, "calculator")
    # the planner's own number for the same model and card (core/plan/spill.py, issue 42): GGUF Q4_0 on the
    # whole card, the runtime's reserve beside the weights — one past its longest context, not the 67,671 a
    # flat 4.0 bits with no reserve gave
    llama = parse((SHIPPED_CONFIGS / "llama3_1_8b.json").read_text())
    longest = plan(llama, PlanInputs(card=DEFAULT_CARD, weight_format="q4_0", memory_share=1.0)).max_context
    assert metric(at, "Spills at (tokens)") == f"{longest + 1:,}" == "52,569"
    names = [trace.get("name", "") for trace in chart(at, "kv_speed")["data"]]
    assert any("spills" in name for name in names)
    at.selectbox(key="kv_precision").select("16-bit weights (bf16)").run()  # 16 GB of weights on 12 GB
    # Llama-3-8B was trained for 8K tokens: at the calculator's 32K the figures are a what-if, and it says so
    assert any(c.value.startswith("Llama-3-8B was trained for 8K tokens: at 32K") for c in at.caption)
    assert metric(at, "Spills at (tokens)") == "at once"
    advice = [w.value for w in at.warning if "do not fit" in w.value]
    assert advice and advice[0].endswith("try 8-bit weights.")  # the largest precision that fits 12 GB


def test_the_calculator_only_suggests_what_would_fit(page):
    at = page
    at.selectbox(key="kv_card").select(DEFAULT_CARD).run()
    at.selectbox(key="kv_precision").select("4-bit weights").run()
    at.selectbox(key="kv_spec").select("qwen3_next").run()  # 37 GiB at 4-bit: no precision fits 12 GB
    (advice,) = [w.value for w in at.warning if "do not fit" in w.value]
    assert "try a bigger card, such as the H100 SXM 80GB" in advice and "try 4-bit" not in advice
    at.selectbox(key="kv_spec").select("kimi_k3").run()  # 1.3 TiB at 4-bit: no card in the list
    (advice,) = [w.value for w in at.warning if "do not fit" in w.value]
    assert "no single card in this list holds them" in advice and "try" not in advice
    assert "(1.4 TiB)" in advice  # GGUF Q4_0: 4.5 bits a weight, as the planner counts it


def test_stepped_figures_patched_from_the_last_step_match_a_full_build():
    """The page builds each stepped picture once per run and patches it per step (speed); what the
    reader gets must equal the figure built and validated from scratch at that step."""
    import json

    import plotly.io as pio

    from core.figures import cache_pictures as fc
    from core.figures import recompute_grid as fg
    from core.figures.figure_dict import encoded
    from core.generation import Sampling, run_generation

    model = GPT2.load()
    run = run_generation(
        model, encode(DEFAULT_PROMPT), 16, use_cache=True, sampling=Sampling(temperature=0.0)
    )
    ids, p, n = run.prompt_ids + run.new_ids, len(run.prompt_ids), len(run.traces)
    final = run.traces[-1].layers[1]
    size = final.keys.shape[1]

    def spec(fig):  # a step is the patched dict; the reader gets it encoded (ui.charts.show_figure)
        return json.loads(pio.to_json(encoded(fig) if isinstance(fig, dict) else fig, validate=False))

    head = fc.HeadCache(final.keys, final.values, 1, ids)
    heat = fc.cache_heatmaps_figure(head, size).to_dict()
    grid = fg.recompute_grid_figure(run.traces, n, p, "grid").to_dict()
    attention = fc.attention_figure(final.attention, ids, size).to_dict()
    for t in range(n + 1):
        rows = run.traces[t - 1].position + 1 if t else 0
        assert spec(fc.cache_heatmaps_step(heat, head, rows)) == spec(fc.cache_heatmaps_figure(head, rows))
        assert spec(fg.recompute_grid_step(grid, run.traces, t, "grid")) == spec(
            fg.recompute_grid_figure(run.traces, t, p, "grid")
        )
        if t:
            weights = run.traces[t - 1].layers[1].attention
            assert spec(fc.attention_step(attention, weights, size)) == spec(
                fc.attention_figure(weights, ids, size)
            )


# -- the released-weights switch, with a tiny random GPT-2 in Hugging Face format (no network) ------


def test_real_checkpoint_cache_on_bpe_tokens(hf_folder, tmp_path, monkeypatch):
    from bench.hf_tiny_gpt2 import point_pages_at
    from core.models.hf_gpt2 import load_gpt2
    from core.units import format_bytes

    point_pages_at(monkeypatch, hf_folder, tmp_path)
    at = engineer_page()
    at.radio(key="kv_model").set_value(str(hf_folder)).run()
    at.button(key="kv_t_reset").click().run()
    driver.assert_clean(at, "switching to the checkpoint")
    loaded = load_gpt2(hf_folder)
    cfg, tok = loaded.config, loaded.tokenizer
    p = len(tok.encode(DEFAULT_PROMPT))
    per_token = 2 * cfg.n_layer * cfg.d_model * 4  # fp32 keys and values
    for step in range(1, 4):
        at.button(key="kv_t_step").click().run()
        driver.assert_clean(at, f"step {step}")
        rows = p + step - 1
        assert metric(at, "Rows in the cache") == str(rows)
        assert metric(at, "Cache held") == format_bytes(rows * per_token)
        assert metric(at, "Same output as without a cache?") == "yes"  # checked live on this model
        z = array(chart(at, "kv_heatmaps")["data"][0]["z"])
        assert (~np.isnan(z).all(axis=1)).sum() == rows and z.shape[1] == cfg.head_dim
    size = next(c.value for c in at.caption if c.value.startswith("Live cache size"))
    assert format_bytes(per_token) in size and format_bytes(per_token // 2) in size and "the same" in size
    attention = chart(at, "kv_attention")["data"][0]
    labels = [tok.label(i) for i in tok.encode(DEFAULT_PROMPT)]
    assert [x.split(": ", 1)[1] for x in attention["x"][:p]] == labels  # real BPE tokens on the axis
    assert chart(at, "kv_top5")["data"][0]["type"] == "bar"
    assert chart(at, "kv_ms")["layout"]["xaxis"]["title"]["text"] == "length of the text read (tokens)"
    assert any("each token becomes three vectors" in m.value for m in at.markdown)  # not "each byte"
    at.selectbox(key="kv_layer").select(1).run()
    at.selectbox(key="kv_head").select(3).run()
    driver.assert_clean(at, "layer/head on the checkpoint")


def test_story_opens_on_the_diagonal_with_the_cache_in_two_pictures():
    """Story's pictures are the cache growing a row per byte and the diagonal of positions run (the grid's
    rows from the figure's data: the prompt, then one new position each); the rest is the engineers'."""
    at = driver.fresh(PAGE)
    keys = [element.proto.id.rsplit("-", 1)[-1] for element in driver.charts(at)]
    assert keys == ["kv_heatmaps", "kv_grid"]
    p = len(encode(DEFAULT_PROMPT))
    z = np.nan_to_num(array(chart(at, "kv_grid")["data"][0]["z"]))
    assert z.shape[0] == 12
    assert [np.flatnonzero(row).tolist() for row in z] == [list(range(p))] + [
        [p + t - 1] for t in range(1, 12)
    ]
    deep = [element.proto.id.rsplit("-", 1)[-1] for element in driver.charts(engineer_page())]
    assert {"kv_top5", "kv_attention", "kv_work", "kv_ms", "kv_bytes", "kv_speed"} <= set(deep)


def test_step_one_says_a_diagonal_grows(page):
    at = page
    at.button(key="kv_t_reset").click().run()
    at.button(key="kv_t_step").click().run()
    (caption,) = [c.value for c in at.caption if c.value.startswith("Each row is one step")]
    p = len(encode(DEFAULT_PROMPT))
    assert f"read the {p}-byte prompt, **all new**, and kept it in the cache" in caption
    assert "diagonal grows" in caption and "One dark cell per row" not in caption
    at.button(key="kv_t_reset").click().run()


def test_the_two_percentages_say_what_they_are_of(page):
    """The calculator's slow-down (speed at a context ÷ the speed predicted for an empty context) and the
    published measurements (measured speed ÷ the planner's bound) are both percentages, and at the default
    32K one of each is 47%: each names what it is a share of, so the two never read alike."""
    from core.plan.calibration import calibration
    from core.roofline import predict, slowdown

    at = page
    at.selectbox(key="kv_spec").select("llama3_8b").run()
    at.selectbox(key="kv_card").select(DEFAULT_CARD).run()
    at.selectbox(key="kv_precision").select("4-bit weights").run()
    at.select_slider(key="kv_context").set_value(32768).run()
    from core.roofline import CARDS
    from ui.card_calculator import roofline_kwargs, setting

    spec, card = SPECS["llama3_8b"], CARDS[DEFAULT_CARD]
    home = setting(spec, card, "4-bit weights")  # the planner's weights and reserve (core/plan/spill.py)
    wbytes, room = home.bytes_per_weight, roofline_kwargs(home)
    ratio, empty = (
        slowdown(spec, card, 32768, wbytes, **room),
        predict(spec, 0, card, wbytes, **room).tokens_per_s,
    )
    texts = story.running_text(at.main)
    (predicted,) = [t for t in texts if t.startswith("Predicted at 32K tokens")]
    assert f"{ratio:.0%} of the {empty:,.1f} tokens/s predicted for an empty context" in predicted
    (measured,) = [t for t in texts if t.startswith("Upper bound from bytes read")]
    assert "shares of the bound the planner works out for that setting (measured speed ÷ bound)" in measured
    assert "empty context" not in predicted.split("of the")[0]  # the share's referent follows it at once
    shares = [f"{r.share:.0%}" for r in calibration()]
    # issue 40 found both at 47 %; counted as the planner counts Q4_0 (issue 42) the slow-down is 50 %: any
    # sentence with either number still says what it is a share of
    for text in texts:
        for number in {f"{ratio:.0%}", *shares}:
            if number in text:
                assert "empty context" in text or "of the bound" in text or "shares of" in text, text
