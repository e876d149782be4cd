"""The map under AppTest: headline numbers, the story table, the memory chart, every widget."""

from __future__ import annotations

from core.glossary import get
from core.specs import SPECS
from core.units import format_bytes, format_context, format_params
from tests.app import driver, story
from ui.course import LESSONS, number

PAGE = "map"  # a lesson slug: driver.fresh finds its page file in ui/course.py


def engineer_page():
    """The map at Engineer depth (the counted parameters, the code, the details behind each number)."""
    return story.rendered(PAGE, "engineer", "en")


def test_headline_numbers_come_from_specs():
    at = engineer_page()
    assert at.title[0].value.startswith("0 · Map")
    values = [m.value for m in at.metric]
    assert values == ["124M parameters", "2.8T parameters", "22,580"]
    assert any(f"{SPECS['gpt2'].total_params():,}" in c.value for c in at.caption)


def test_story_table_and_memory_chart():
    at = driver.fresh(PAGE)
    story = at.table[0].value
    assert list(story.columns) == ["lesson", "stage", "what it fixed", "what it left"]
    story_slugs = (
        "gpt2 kv_cache linear_attention collisions deltanet chunks forgetting kimi_k3 experts".split()
    )
    assert list(story["lesson"]) == [number(slug) for slug in story_slugs]  # numbered by ui/course.py
    # "Go to a lesson": every lesson after the map, in course order, numbered from the course outline
    # (plain text off the router; a lesson whose page is not written yet says so)
    (go_to,) = [e for e in at.expander if e.label == "Go to a lesson"]
    links = [m.value for m in go_to.markdown]
    assert [link.split(" · ")[0] for link in links] == [f"- {item.number}" for item in LESSONS[1:]]
    assert links[-1] == f"- {LESSONS[-1].number} · Glossary — every word in one plain sentence"
    charts = driver.chart_specs(at)
    assert len(charts) == 1
    bars = charts[0]["data"][0]
    assert bars["x"] == [spec.kv_cache_bytes_per_token() / 1024 for spec in SPECS.values()]
    assert charts[0]["layout"]["xaxis"]["title"]["text"] == "per token (KiB)"
    assert bars["orientation"] == "h"  # names read across, also on a phone


def test_precision_and_context_controls():
    at = driver.fresh(PAGE)
    at.radio(key="map_precision").set_value("8-bit (fp8)").run()
    driver.assert_clean(at, "8-bit cache")
    bars = driver.chart_specs(at)[0]["data"][0]
    assert bars["x"][0] == SPECS["gpt2"].kv_cache_bytes_per_token(1) / 1024 == 18.0
    for context in (1024, 1048576):
        at.select_slider(key="map_context").set_value(format_context(context)).run()
        driver.assert_clean(at, f"context {context}")
        table = at.dataframe[0].value
        assert driver.pinned_columns(at.dataframe[0]) == ["model"]  # the row's name stays in view on a phone
        column = f"memory at {format_context(context)}"
        k3_row = table[table["model"] == "Kimi K3"].iloc[0]
        assert k3_row[column] == format_bytes(SPECS["kimi_k3"].cache_bytes(context, 1))
        # rows past a model's trained length are named as what-if numbers, from each spec's context
        note = " ".join(c.value for c in at.caption)
        short = [spec for spec in SPECS.values() if spec.context < context]
        assert ("Trained on shorter texts" in note) == bool(short)
        for spec in short:
            assert f"{spec.name} ({format_context(spec.context)})" in note
    assert [spec.name for spec in SPECS.values() if spec.context < 1048576] == [
        "GPT-2 small", "Llama-3-8B", "DeepSeek-V3", "Kimi K2", "Qwen3-Next-80B-A3B"
    ]  # fmt: skip


def test_a_curious_reader_breaks_nothing():
    at = engineer_page()
    assert driver.sweep_sliders(at) == 1
    assert driver.try_selectboxes(at) == 0
    for key in ("map_notice_size_reveal", "map_formula", "map_code"):
        at.toggle(key=key).set_value(True).run()
        driver.assert_clean(at, f"toggle {key}")
    assert at.latex and at.code


def test_the_words_box_opens_and_explains_the_map_jargon():
    """The map is the first page: every word it uses is defined in its box, which is open (a closed box
    left parameters, heads, KiB, MLA, KDA … unexplained for a reader who did not open it)."""
    at = driver.fresh(PAGE)
    (words,) = [e for e in at.expander if e.label.startswith("Words you will meet")]
    assert words.proto.expanded
    shown = " ".join(m.value for m in words.markdown)
    jargon = "parameter layer head gib mha gqa mla fp32 short_conv kda channel".split()
    for key in jargon:
        assert f"**{get(key).name}**" in shown, key


def test_k3_active_parameters_come_from_the_one_spec_function():
    k3 = SPECS["kimi_k3"]
    active = format_params(k3.active_params())
    at = engineer_page()
    table = at.dataframe[0].value
    assert table[table["model"] == "Kimi K3"].iloc[0]["active per token"] == active
    engineers = " ".join(c.value for c in at.caption)
    assert f"The course uses the count, {active}, from here on" in engineers


def test_gpt2_without_a_cache_is_a_baseline_and_the_hybrid_counts_come_from_k3():
    """GPT-2's own 2019 code kept past keys and values: the map calls 'no cache' the course's starting
    point, not GPT-2's behaviour; the K3 row prints its layer counts from the config."""
    at = driver.fresh(PAGE)
    story = at.table[0].value.set_index("stage")
    gpt2_left = story.loc["GPT-2, plain (2019)", "what it left"]
    assert "no cache" in gpt2_left and "GPT-2's own 2019 code kept one" in gpt2_left
    text = " ".join(m.value for m in at.markdown)
    assert "a plain GPT-2 that re-reads" not in text and "not how GPT-2's own code ran" in text
    k3 = SPECS["kimi_k3"]
    k3_fixed = story.loc["Kimi K3", "what it fixed"]
    assert f"({k3.num_linear_layers} + {k3.num_full_attention_layers} of {k3.num_layers})" in k3_fixed
    assert "Three layers" not in k3_fixed


def test_the_wide_table_says_it_scrolls_sideways():
    """A phone shows three of its columns: a line above the table says how many there are to scroll to."""
    at = driver.fresh(PAGE)
    columns = len(at.dataframe[0].value.columns)
    assert columns > 3
    assert f"Scroll sideways for all {columns} columns →" in [c.value for c in at.caption]


def test_story_keeps_the_headline_and_engineer_adds_the_details():
    """Story states K3's fixed state in one number; Engineer adds what it is made of, the precisions and the
    article's full title, computed from the same spec."""
    k3 = SPECS["kimi_k3"]
    plain = " ".join(story.running_text(driver.fresh(PAGE).main))
    deep = " ".join(story.running_text(engineer_page().main))
    fixed = f"plus a fixed {format_bytes(k3.state_bytes())} that never grows"
    assert fixed in plain and fixed in deep
    parts = f"{format_bytes(k3.recurrent_state_bytes())} of boards"
    assert parts not in plain and parts in deep
    assert "short-convolution" not in plain and "Beginner-Friendly Walkthrough" in deep
