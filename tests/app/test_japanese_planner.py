"""The planner in Japanese, driven through its widgets: every model, card, format and layout, several
GPUs, long contexts, big batches, a pasted config (good and broken) and the empty sources render with
no exception and no English sentence left (tests/app/japanese.py); the charts' titles and axes, the
sentence, the table and the link are Japanese; and the CLI (`python -m core.plan`) stays English.

The page opens at Engineer depth (ui/depth.py), where it shows everything: the Story's text is part of it."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.i18n import use_language
from core.plan import CACHE_FORMATS, CARDS, STATE_FORMATS, WEIGHT_FORMATS, PlanInputs, parse, plan
from core.plan.__main__ import main
from core.plan.config import SHIPPED_CONFIGS
from core.plan.headline import headline, quoted_plan, reads_words
from core.plan.memory import LAYOUTS
from tests.app.driver import assert_clean, chart_spec, page_path, shown_title
from tests.app.japanese import japanese_words, no_english
from ui.planner import shipped

pytestmark = pytest.mark.slow


def _planner(depth: str = "engineer") -> AppTest:
    """The planner in Japanese at `depth`, as the link `?lang=ja&depth=…` opens it."""
    at = AppTest.from_file(page_path("planner"), default_timeout=300)
    at.query_params["lang"] = "ja"
    at.query_params["depth"] = depth
    at.run()
    assert_clean(at, f"the planner in Japanese at {depth} depth")
    return at


def test_the_planner_reads_in_japanese_through_every_choice():
    with use_language("ja"):  # the widgets' format functions run here too
        at = _planner()
        no_english(at, "first run")
        for name in shipped():
            at.selectbox(key="plan_shipped").set_value(name).run()
            no_english(at, f"config {name}")
        at.selectbox(key="plan_shipped").set_value("kimi_k3").run()  # MLA, experts, a fixed state
        for key, options in (
            ("plan_card", CARDS),
            ("plan_weights", WEIGHT_FORMATS),
            ("plan_cache", CACHE_FORMATS),
            ("plan_layout", LAYOUTS),
            ("plan_state", STATE_FORMATS),
        ):
            for option in options:
                at.selectbox(key=key).set_value(option).run()
                no_english(at, f"{key} = {option}")
        # what-ifs: past the trained window, GPUs that cannot split the heads, a Mac over its share
        at.selectbox(key="plan_shipped").set_value("gpt2").run()
        at.select_slider(key="plan_context").set_value(2**20).run()
        no_english(at, "GPT-2 at 1M")
        assert any(japanese_words(w.value) for w in at.warning)
        at.selectbox(key="plan_shipped").set_value("llama3_1_8b").run()
        for gpus in (2, 3, 1024):
            at.number_input(key="plan_gpus").set_value(gpus).run()
            no_english(at, f"{gpus} GPUs")
        at.number_input(key="plan_gpus").set_value(1).run()
        at.selectbox(key="plan_card").set_value("m4_max_128gb").run()
        at.slider(key="plan_share").set_value(0.95).run()
        at.number_input(key="plan_batch").set_value(1_000_000).run()
        no_english(at, "a Mac, a million sequences")


@pytest.mark.parametrize(
    "text",
    ["{ not json", '{"model_type": "rwkv7"}', '{"model_type": "deepseek_v3", "hidden_size": 7168}', "[]"],
    ids=["malformed", "unknown", "missing", "array"],
)
def test_a_config_that_cannot_be_planned_says_why_in_japanese(text):
    with use_language("ja"):
        at = _planner()
        at.radio(key="plan_source").set_value("Paste config.json").run()
        no_english(at, "nothing pasted yet")
        assert at.info and japanese_words(at.info[0].value)
        at.text_area(key="plan_paste").input(text).run()
        no_english(at, f"pasted {text!r}")
        assert at.error and all(japanese_words(e.value) for e in at.error)


def test_a_pasted_config_and_the_upload_read_in_japanese():
    data = json.loads((SHIPPED_CONFIGS / "qwen3_next_80b_a3b.json").read_text())
    del data["max_position_embeddings"]  # the trained window unknown, said in Japanese
    with use_language("ja"):
        at = _planner()
        at.radio(key="plan_source").set_value("Paste config.json").run()
        at.text_area(key="plan_paste").input(json.dumps(data)).run()
        no_english(at, "a pasted hybrid without a trained window")
        at.radio(key="plan_source").set_value("Upload config.json").run()
        no_english(at, "the upload, nothing uploaded")
        assert at.info and japanese_words(at.info[0].value)


def test_the_planners_sentence_charts_table_and_link_are_japanese():
    with use_language("ja"):
        at = _planner()
        at.number_input(key="plan_gpus").set_value(2).run()
        assert_clean(at, "two GPUs")
        model = parse((SHIPPED_CONFIGS / "llama3_1_8b.json").read_text())
        sentence = headline(model, PlanInputs(gpus=2))
        assert japanese_words(sentence) and f"**{sentence}**" in [m.value for m in at.markdown]
        for key in ("plan_memory", "plan_speed"):
            spec = chart_spec(at, key)
            assert japanese_words(shown_title(at, spec)), key
            assert japanese_words(spec["layout"]["xaxis"]["title"]["text"]), key
            assert all(japanese_words(trace["name"]) for trace in spec["data"]), key
        assert japanese_words(chart_spec(at, "plan_speed")["layout"]["yaxis"]["title"]["text"])
        table = at.table[0].value
        assert list(table.columns) == ["項目", "値"]
        assert all(japanese_words(q) for q in table["項目"])
        link = next(m.value for m in at.markdown if "(?context=" in m.value)
        assert "lang=ja" in link  # the shared link opens the plan in the language it was read in


def test_the_story_reads_in_japanese_with_what_a_step_reads():
    with use_language("ja"):
        at = _planner("story")
        no_english(at, "Story")
        model = parse((SHIPPED_CONFIGS / "llama3_1_8b.json").read_text())
        words = reads_words(model, quoted_plan(model, plan(model, PlanInputs())))
        assert japanese_words(words) and words in [m.value for m in at.markdown]
        assert all(japanese_words(c.value) for c in at.caption)


def test_the_cli_and_the_english_page_stay_english(capsys):
    with use_language("ja"):  # whatever the caller's language, the CLI prints English
        assert main(["--config", "llama3_1_8b", "--gpus", "3"]) == 0
    out = capsys.readouterr().out
    assert not japanese_words(out)
    assert out.startswith("Llama-3.1-8B on 3 × H100 SXM 80GB:")
    with use_language("ja"):
        japanese_plan = plan(parse((SHIPPED_CONFIGS / "gpt2.json").read_text()), PlanInputs(context=2**20))
    english_plan = plan(parse((SHIPPED_CONFIGS / "gpt2.json").read_text()), PlanInputs(context=2**20))
    assert all(japanese_words(text) for text in japanese_plan.assumptions + japanese_plan.cautions)
    assert not any(japanese_words(text) for text in english_plan.assumptions + english_plan.cautions)
