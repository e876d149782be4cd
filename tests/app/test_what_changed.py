"""What changed under AppTest: the story picture and table follow core's numbers.

Story (the default) shows the two pictures, each with a one-line caption, and the rules table; Engineer adds
the width's numbers, the memory and work tables and the code (ui/depth.py), so the tests that read those
open the page at Engineer depth."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.roofline import Width, hybrid_memory_bytes, mechanism_macs_per_token, mechanism_memory_bytes
from core.specs import SPECS
from core.units import format_bytes, format_context, format_count
from tests.app import driver
from tests.app.story import running_text
from ui.course import number

PAGE = "what_changed"  # a lesson slug: driver.fresh finds its page file in ui/course.py


def charts(at) -> list[dict]:
    return driver.chart_specs(at)


def engineer_page() -> AppTest:
    at = AppTest.from_file(driver.page_path(PAGE), default_timeout=120)
    at.query_params["depth"] = "engineer"
    at.run()
    driver.assert_clean(at, "first run at Engineer depth")
    return at


def test_story_picture_and_table():
    at = engineer_page()
    assert at.title[0].value.endswith(" · What changed")  # its number follows ui/course.py
    story, memory = charts(at)
    width = Width.of(SPECS["llama3_8b"])
    labels = story["data"][0]["y"]
    assert [label.replace("<br>", "").split(" · ")[1] for label in labels] == [
        "recompute",
        "keep everything",
        "add",
        "rewrite",
        "forget",
        "forget per channel",
        "share the work",
    ]
    assert story["data"][0]["text"][1] == format_bytes(mechanism_memory_bytes("attention", 131072, width))
    # the work panel counts in words too: its "B" would read as the memory panel's bytes
    assert story["data"][1]["text"][:2] == [
        format_count(mechanism_macs_per_token(key, 131072, width)) for key in ("no_cache", "attention")
    ]
    rules, table, work = at.table[0].value, at.table[1].value, at.table[2].value
    assert list(table.columns) == ["stage", "memory at 1K", "memory at 128K", "memory at 1M"]
    assert list(work.columns) == ["stage"] + [f"multiply-adds per token at {c}" for c in ("1K", "128K", "1M")]
    # counts in words, not "144,397T": T and B would read as units (B is bytes one table above)
    no_cache_1m = format_count(mechanism_macs_per_token("no_cache", 1048576, width))
    assert work.iloc[0]["multiply-adds per token at 1M"] == no_cache_1m and no_cache_1m.endswith(" trillion")
    prose = " ".join(m.value for m in at.markdown)
    assert format_count(mechanism_macs_per_token("no_cache", 131072, width)) + " multiply-adds" in prose
    assert list(rules["what it does"])[2:6] == ["add", "rewrite", "forget", "forget per channel"]
    # each stage's lesson, numbered by ui/course.py (a lesson inserted before one renumbers it)
    stage_lessons = "gpt2 kv_cache linear_attention deltanet forgetting forgetting kimi_k3".split()
    assert list(rules["lesson"]) == [number(slug) for slug in stage_lessons]
    assert list(table["stage"]) == list(rules["stage"])
    assert table.iloc[-1]["memory at 1M"] == format_bytes(hybrid_memory_bytes(1048576, width))
    board = format_bytes(mechanism_memory_bytes("kda", 1, width))
    assert set(table.iloc[2:6]["memory at 1K"]) == {board} == set(table.iloc[2:6]["memory at 1M"])
    assert memory["layout"]["yaxis"]["type"] == "log"


def test_width_and_context_controls():
    at = driver.fresh(PAGE)
    at.selectbox(key="wc_width").select("GPT-2 small's width").run()
    driver.assert_clean(at, "GPT-2 width")
    width = Width.of(SPECS["gpt2"])
    for context in (1024, 1048576):
        at.select_slider(key="wc_context").set_value(format_context(context)).run()
        driver.assert_clean(at, f"context {context}")
        story = charts(at)[0]
        assert format_context(context) in driver.shown_title(at, story)
        assert story["data"][0]["text"][1] == format_bytes(
            mechanism_memory_bytes("attention", context, width)
        )


def test_a_curious_reader_breaks_nothing():
    at = engineer_page()
    assert driver.sweep_sliders(at) == 1
    assert driver.try_selectboxes(at) == 1
    for key in ("wc_notice_same_size_reveal", "wc_notice_mix_reveal", "wc_formula", "wc_code"):
        at.toggle(key=key).set_value(True).run()
        driver.assert_clean(at, f"toggle {key}")
    assert at.latex and at.code
    assert any("Neither" in m.value for m in at.markdown)


def test_no_cache_is_named_a_baseline_and_the_hybrid_counts_come_from_k3():
    """GPT-2's own 2019 sampler kept past keys and values: the no-cache row is a teaching baseline,
    not GPT-2's behaviour; the real hybrid's layer counts are Kimi K3's config, not "three to one"."""
    at = driver.fresh(PAGE)
    rules = at.table[0].value
    no_cache = rules.iloc[0]["stage"]
    assert no_cache.startswith("No cache") and "GPT-2" not in no_cache
    labels = charts(at)[0]["data"][0]["y"]
    assert not any("GPT-2" in label for label in labels)
    captions = " ".join(c.value for c in at.caption)
    assert "teaching baseline" in captions and "GPT-2-style" not in captions
    assert "2019 code already kept past keys and values" in captions
    k3 = SPECS["kimi_k3"]
    prose = " ".join(m.value for m in at.markdown)
    counts = f"{k3.num_linear_layers} KDA + {k3.num_full_attention_layers} full attention in its {k3.num_layers} layers"
    assert counts in prose
    assert "three board layers for every one" not in prose


def test_story_keeps_the_pictures_and_the_rules_and_leaves_the_numbers_to_engineers():
    story = driver.fresh(PAGE)
    assert len(charts(story)) == 2 and len(story.table) == 1  # the rules; memory and work are for engineers
    assert list(story.table[0].value.columns) == ["lesson", "stage", "what it does", "rule"]
    captions = [c.value for c in story.caption]
    # one caption under each picture: what to look at, its colours, and what a step along a log axis is
    assert any(c.startswith("One bar per stage") and "about 1,000× more" in c for c in captions)
    assert any(
        c.startswith("Blue: the cache") and "Each step up the side is 10× more memory." in c for c in captions
    )
    assert not any("(GQA)" in c for c in captions)  # the width in numbers is an engineer's detail
    engineer = engineer_page()
    assert len(engineer.table) == 3 and any("(GQA)" in c.value for c in engineer.caption)
    assert any(m.value.endswith("Memory and work of every stage") for m in engineer.markdown)
    shown = running_text(engineer.main)
    assert all(text in shown for text in running_text(story.main))


def test_the_memory_caption_follows_the_charts_ticks_at_either_width():
    at = driver.fresh(PAGE)
    at.selectbox(key="wc_width").select("GPT-2 small's width").run()
    driver.assert_clean(at, "GPT-2 width")
    ticks = charts(at)[1]["layout"]["yaxis"]["tickvals"]
    caption = next(c.value for c in at.caption if c.value.startswith("Blue: the cache"))
    ratios = {round(b / a, 6) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert (f"Each step up the side is {ticks[1] / ticks[0]:g}× more memory." in caption) == (
        len(ratios) == 1
    )
