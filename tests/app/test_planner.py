"""The planner page: its numbers are core/plan's, a link restores every input, and no input breaks it.

Most tests read the figures an engineer reads (metrics, the table, the assumptions), so `_page` opens the
page at Engineer depth (ui/depth.py); the Story tests at the end open it as a beginner does."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Widget

from core.plan import PlanInputs, parse, plan
from core.plan.config import SHIPPED_CONFIGS
from core.plan.export import pack_config, to_query
from core.plan.headline import headline, quoted_plan, reads_words
from core.units import format_bytes
from tests.app import driver
from ui.planner import memory_caption, shipped
from ui.text import plain

PAGE = "planner"


def _page(params: dict[str, str] | None = None, depth: str = "engineer") -> AppTest:
    at = AppTest.from_file(driver.page_path(PAGE), default_timeout=120)
    at.query_params["depth"] = depth
    for key, value in (params or {}).items():
        at.query_params[key] = value
    at.run()
    driver.assert_clean(at, f"planner with {params} at {depth} depth")
    return at


def _shipped(name: str):
    return parse((SHIPPED_CONFIGS / f"{name}.json").read_text())


def test_default_page_shows_core_numbers():
    at = _page()
    expected = plan(_shipped("llama3_1_8b"), PlanInputs())
    assert driver.metric_value(at, "Weights") == format_bytes(expected.weights)
    assert driver.metric_value(at, "KV cache") == format_bytes(expected.kv)
    assert driver.metric_value(at, "Fixed state") == format_bytes(expected.state)
    # the first view makes the page's point: it fits, with a speed, and at 128K the cache outweighs the weights
    assert expected.fits and expected.kv > expected.weights and not at.warning
    assert driver.metric_value(at, "Decode ceiling") == f"{expected.decode_tokens_per_s:,.0f} tokens/s"
    assert at.query_params["config"] == ["llama3_1_8b"] or at.query_params["config"] == "llama3_1_8b"


def test_a_link_restores_every_input():
    inputs = PlanInputs(262144, 16, "fp8", "fp8", 0.8, 2, "h100_80gb", "transformers", "bf16")
    at = _page({**to_query(inputs), "config": "qwen3_next_80b_a3b"})
    assert at.selectbox(key="plan_shipped").value == "qwen3_next_80b_a3b"
    assert at.select_slider(key="plan_context").value == 262144
    assert at.number_input(key="plan_batch").value == 16
    assert at.selectbox(key="plan_weights").value == "fp8"
    assert at.selectbox(key="plan_cache").value == "fp8"
    assert at.slider(key="plan_share").value == pytest.approx(0.8)
    assert at.number_input(key="plan_gpus").value == 2
    assert at.selectbox(key="plan_card").value == "h100_80gb"
    assert at.selectbox(key="plan_layout").value == "transformers"
    assert at.selectbox(key="plan_state").value == "bf16"
    expected = plan(_shipped("qwen3_next_80b_a3b"), inputs)
    assert driver.metric_value(at, "KV cache") == format_bytes(expected.kv)
    assert driver.metric_value(at, "Fixed state") == format_bytes(expected.state)
    assert any("(?context=262144&batch=16" in m.value for m in at.markdown)


def test_a_link_carries_a_pasted_config():
    text = (SHIPPED_CONFIGS / "kimi_linear_48b_a3b.json").read_text()
    at = _page({"configz": pack_config(text), "card": "h200"})
    assert at.radio(key="plan_source").value == "Paste config.json"
    assert at.text_area(key="plan_paste").value == text
    expected = plan(parse(text), PlanInputs(card="h200"))
    assert driver.metric_value(at, "Fixed state") == format_bytes(expected.state)


def test_a_broken_link_falls_back_to_defaults():
    at = _page({"batch": "lots", "card": "../../etc", "configz": "%%%", "context": "-1", "memory_share": "7"})
    assert at.number_input(key="plan_batch").value == 1
    assert at.selectbox(key="plan_card").value == PlanInputs().card
    assert at.select_slider(key="plan_context").value == PlanInputs().context


@pytest.mark.parametrize(
    "text, words",
    [
        ("{ not json", "not valid JSON"),
        ('{"model_type": "rwkv7"}', "unknown model_type"),
        ('{"model_type": "deepseek_v3", "hidden_size": 7168}', "missing field"),
        ("[]", "JSON object"),
        ('{"model_type": "gpt2"}' + " " * (5 * 2**20), "a few kB"),
        ("\x00\x01 🌍 こんにちは", "not valid JSON"),
    ],
    ids=["malformed", "unknown", "missing", "array", "5MB", "binary"],
)
def test_pasted_configs_that_cannot_be_planned_get_one_line(text, words):
    at = _page()
    at.radio(key="plan_source").set_value("Paste config.json").run()
    at.text_area(key="plan_paste").input(text).run()
    driver.assert_clean(at, f"pasting {words}")
    assert any(words in e.value for e in at.error), [e.value for e in at.error]


def test_every_shipped_config_card_format_and_layout_runs():
    at = _page()
    for name in shipped():
        at.selectbox(key="plan_shipped").set_value(name).run()
        driver.assert_clean(at, f"config {name}")
    for key, options in driver.planner_selects():
        for option in options:
            at.selectbox(key=key).set_value(option).run()
            driver.assert_clean(at, f"{key} = {option}")


def test_number_inputs_at_their_ends():
    at = _page()
    at.selectbox(key="plan_shipped").set_value("kimi_k3").run()
    for key in ("plan_batch", "plan_gpus"):
        widget = at.number_input(key=key)
        for value in (widget.min, widget.max):
            at.number_input(key=key).set_value(value).run()
            driver.assert_clean(at, f"{key} = {value}")


def test_pasting_a_real_config_plans_it():
    data = json.loads((SHIPPED_CONFIGS / "kimi_k3.json").read_text())
    at = _page()
    at.radio(key="plan_source").set_value("Paste config.json").run()
    at.text_area(key="plan_paste").input(json.dumps(data)).run()
    driver.assert_clean(at, "pasting Kimi K3")
    expected = plan(parse(data), PlanInputs())
    assert driver.metric_value(at, "Fixed state") == format_bytes(expected.state)
    assert not at.error


def test_every_source_without_a_config_says_what_to_do():
    at = _page()
    for source in ("Paste config.json", "Upload config.json"):
        at.radio(key="plan_source").set_value(source).run()
        driver.assert_clean(at, f"source {source}")
        assert at.info and "config.json" in at.info[0].value


@pytest.mark.parametrize("slug", ["chunks", "forgetting", "kimi_k3", "experts", "planner"])
def test_go_deeper_is_engineer_only_and_there(slug):
    """The "go deeper" sections are inline Engineer sections now (ui/depth.py): a heading with the
    engineers' icon and text under it at Engineer depth, nothing in Story."""
    heading = re.compile(r"^#### :material/engineering: Go deeper")
    story = driver.fresh(slug)
    assert not any(heading.match(m.value) for m in story.markdown)
    at = AppTest.from_file(driver.page_path(slug), default_timeout=120)
    at.query_params["depth"] = "engineer"
    at.run()
    driver.assert_clean(at, f"{slug} at Engineer depth")
    texts = [m.value for m in at.markdown]
    starts = [i for i, text in enumerate(texts) if heading.match(text)]
    assert len(starts) == 1, f"{slug}: {len(starts)} go-deeper headings"
    assert texts[starts[0] + 1 :], "the go-deeper section has no text"


def test_what_if_figures_say_so_beside_the_headline():
    at = _page()
    at.selectbox(key="plan_shipped").set_value("gpt2").run()
    at.select_slider(key="plan_context").set_value(131072).run()
    driver.assert_clean(at, "GPT-2 at 128K")
    assert driver.metric_value(at, "Longest context") == "1K (trained)"
    assert any(w.value.startswith("GPT-2 small was trained for at most 1,024 tokens") for w in at.warning)
    at.selectbox(key="plan_shipped").set_value("llama3_1_8b").run()
    at.number_input(key="plan_gpus").set_value(3).run()
    assert any("3 GPUs cannot split Llama-3.1-8B's 32 attention heads" in w.value for w in at.warning)
    at.number_input(key="plan_gpus").set_value(4).run()
    assert not any("cannot split" in w.value for w in at.warning)


def test_the_fixed_state_format_changes_a_hybrids_state_and_not_a_dense_models():
    at = _page({"config": "qwen3_next_80b_a3b", "batch": "8"})
    fp32 = plan(_shipped("qwen3_next_80b_a3b"), PlanInputs(batch=8))
    assert driver.metric_value(at, "Fixed state") == format_bytes(fp32.state)
    at.selectbox(key="plan_state").set_value("bf16").run()
    bf16 = plan(_shipped("qwen3_next_80b_a3b"), PlanInputs(batch=8, state_format="bf16"))
    assert driver.metric_value(at, "Fixed state") == format_bytes(bf16.state) != format_bytes(fp32.state)
    assert any("BF16 (vLLM's default for Gated DeltaNet)" in m.value for m in at.markdown)  # the assumption
    assert "state_format=bf16" in next(m.value for m in at.markdown if "(?context=" in m.value)
    at.selectbox(key="plan_shipped").set_value("llama3_1_8b").run()
    assert driver.metric_value(at, "Fixed state") == format_bytes(0)


# -- the first view: a model and a card, one sentence, one picture; the rest under "More settings" ------

FIRST_VIEW_KEYS = {"plan_source", "plan_shipped", "plan_card"}
EXPERT_KEYS = {
    "plan_context", "plan_batch", "plan_weights", "plan_cache", "plan_state", "plan_gpus", "plan_share", "plan_layout",
}  # fmt: skip


def _in_order(node):
    for child in getattr(node, "children", {}).values():
        yield child
        yield from _in_order(child)


def _first_view(at: AppTest) -> list:
    """Every element above the "More settings" expander, in page order."""
    seen = []
    for node in _in_order(at.main):
        if type(node).__name__ == "Expander" and node.label == "More settings":
            return seen
        seen.append(node)
    raise AssertionError("the page has no More settings expander")


def _sentence(model, inputs: PlanInputs) -> str:
    return f"**{plain(headline(model, inputs))}**"


def test_the_first_view_is_a_model_a_card_one_sentence_and_one_picture():
    at = _page()
    first = _first_view(at)
    assert {node.key for node in first if isinstance(node, Widget)} == FIRST_VIEW_KEYS
    assert len([node for node in first if driver.is_chart(node)]) == 1
    sentence = _sentence(_shipped("llama3_1_8b"), PlanInputs())
    assert sentence in [node.value for node in first if type(node).__name__ == "Markdown"]
    assert "but the model was trained for 131,072" in sentence  # memory holds more than the trained window
    more = next(e for e in at.expander if e.label == "More settings")
    assert not more.proto.expanded
    kinds = ("select_slider", "number_input", "selectbox", "slider")
    assert {w.key for kind in kinds for w in getattr(more, kind)} == EXPERT_KEYS


def test_the_sentence_follows_the_card_and_names_the_all_reduces_only_past_one_gpu():
    llama = _shipped("llama3_1_8b")
    at = _page()
    at.selectbox(key="plan_card").set_value("rtx4090").run()
    first = [node.value for node in _first_view(at) if type(node).__name__ == "Markdown"]
    assert _sentence(llama, PlanInputs(card="rtx4090")) in first
    assert "(trained for 131,072)" in _sentence(llama, PlanInputs(card="rtx4090"))
    # the picture shows the conversation the sentence speaks of: the longest that fits, not the asked 128K
    longest = plan(llama, PlanInputs(card="rtx4090")).max_context
    assert (
        f"**Llama-3.1-8B: 1 × {longest:,} tokens (trained for 131,072) on 1 × RTX 4090 24GB — fits**" in first
    )
    shown = [m.value for m in at.markdown] + [c.value for c in at.caption]
    assert not any("all-reduce" in text for text in shown)
    at.number_input(key="plan_gpus").set_value(2).run()
    driver.assert_clean(at, "two RTX 4090s")
    two = _sentence(llama, PlanInputs(card="rtx4090", gpus=2))
    assert "all-reduces" in two and two in [m.value for m in at.markdown]
    assert any("all-reduces" in c.value for c in at.caption)  # beside the decode ceiling


def test_a_config_without_a_trained_window_says_so_on_the_page():
    data = json.loads((SHIPPED_CONFIGS / "llama3_1_8b.json").read_text())
    del data["max_position_embeddings"]
    at = _page()
    at.radio(key="plan_source").set_value("Paste config.json").run()
    at.text_area(key="plan_paste").input(json.dumps(data)).run()
    driver.assert_clean(at, "a config without max_position_embeddings")
    assert _sentence(parse(data), PlanInputs()) in [m.value for m in at.markdown]
    assert any("trained window unknown" in m.value for m in at.markdown)
    assert any(s.value.endswith("(trained window unknown) on 1 × H100 SXM 80GB") for s in at.subheader)


# -- two depths (issue 40): Story answers in a sentence, two pictures and what a step reads; Engineer adds the rest --


def _model_and_quoted(name: str, inputs: PlanInputs):
    model = _shipped(name)
    return model, quoted_plan(model, plan(model, inputs))


def test_story_answers_and_leaves_every_figure_to_engineers():
    story = _page(depth="story")
    assert not story.metric and not story.table, "the figures and their table are for engineers"
    assert not any("Assumptions" in m.value for m in story.markdown)
    assert [key for key in ("plan_memory", "plan_speed") if driver.chart_spec(story, key)] == [
        "plan_memory",
        "plan_speed",
    ]
    assert len(driver.charts(story)) == 2
    model, quoted = _model_and_quoted("llama3_1_8b", PlanInputs())
    assert plain(reads_words(model, quoted)) in [m.value for m in story.markdown]
    captions = [c.value for c in story.caption]
    assert memory_caption(quoted) in captions and any(
        c.startswith("The blue line is the fastest") for c in captions
    )
    assert any("What is still missing" in m.value for m in story.markdown)
    engineer = _page()
    assert driver.metric_value(engineer, "Weights") == format_bytes(quoted.weights)
    assert engineer.table and any("Assumptions" in m.value for m in engineer.markdown)
    assert any(m.value.endswith("Every figure at your settings") for m in engineer.markdown)
    shown = {m.value for m in engineer.markdown} | {c.value for c in engineer.caption}
    assert {m.value for m in story.markdown if "(?context=" not in m.value} <= shown


@pytest.mark.parametrize(
    "name, inputs",
    [
        ("kimi_k3", PlanInputs(32768, 16, "mxfp4_experts", gpus=16, card="h200")),
        ("qwen3_next_80b_a3b", PlanInputs(4096, 8, "fp8", card="h200")),
        ("gpt2", PlanInputs(context=1024, card="rtx4090")),
    ],
    ids=["moe", "hybrid", "tied"],
)
def test_the_page_says_what_a_step_reads_with_core_numbers(name, inputs):
    at = _page({**to_query(inputs), "config": name}, depth="story")
    model, quoted = _model_and_quoted(name, inputs)
    assert quoted.fits
    sentence = plain(reads_words(model, quoted))
    assert sentence in [m.value for m in at.markdown]
    reads = quoted.step_reads
    assert format_bytes(reads.total) in sentence and format_bytes(reads.weights) in sentence
    assert (format_bytes(reads.idle_experts) in sentence) == (reads.idle_experts > 0)
    # the bar's caption names the fixed state only where the model keeps one
    assert ("purple" in memory_caption(quoted)) == (quoted.state > 0)


def test_the_address_keeps_the_engineer_depth():
    """Writing the plan into the address must not drop `?depth=engineer` (a copied address opens the
    depth it was read at); the link the page shows is the same at both depths."""
    engineer, story = _page(), _page(depth="story")
    assert engineer.query_params["depth"] in ("engineer", ["engineer"])
    assert "depth" not in story.query_params
    links = [next(m.value for m in at.markdown if "(?context=" in m.value) for at in (engineer, story)]
    assert links[0] == links[1] and "depth=" not in links[0]


def test_the_speed_caption_reads_its_ticks_off_the_chart():
    at = _page(depth="story")
    spec = driver.chart_spec(at, "plan_speed")
    ticks = spec["layout"]["xaxis"]["tickvals"]
    caption = next(c.value for c in at.caption if c.value.startswith("The blue line"))
    assert f"Each tick to the right is {ticks[1] / ticks[0]:g}× longer." in caption
    assert "it falls" in caption and "Red crosses" in caption  # Llama-3.1-8B at 1M does not fit one H100
