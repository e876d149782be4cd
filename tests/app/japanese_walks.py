"""What a Japanese reader does on each page, as data: the walks `test_page_reads_in_japanese_through_its_widgets`
(tests/app/test_pages.py) takes, one row per page and one per state a page reaches only on another machine
(a finished GPU run, the reader's own checkpoints, released weights or none).

A row is a `Walk`: the page opens at Story depth as the link `?lang=ja` opens it (its title, then every
sentence and typography rule checked), takes its `story` moves, opens Engineer depth (everything Story
shows and more, read again) and takes its `moves`. A row with `opens="engineer"` starts at Engineer depth.
`setup(monkeypatch, tmp_path)` gives the page the machine a row needs and may return a clean-up.

Moves: `Step(key, n)` presses a button n times; `Set(kind, key, value)` sets a widget (`value` an
`Option(i)` to pick the i-th of its options as the page lists them); `Open(*keys)` switches toggles on
(answers, formulas, code); `Depth(depth)` opens the same page at another depth and reads it as a first run
is read (no English sentence, no English word in a table or chart, and the term table's typography:
`reads_japanese` in tests/app/japanese.py); `Check(when)` asserts the page still reads as Japanese (`reads_japanese`: no English, Japanese typography), `when`
naming the state in the failure message; `Expect(fn)`
asserts what only this page says (a Japanese sentence, a chart's Japanese axis, a number written the
Japanese way), and `Do(fn)` does what a widget cannot (wait for a run, pick by label).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from tests.app import driver
from tests.app.driver import chart_spec, shown_title
from tests.app.japanese import chart_text, english_in, japanese_words, shown_text

# -- moves --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    key: str
    times: int = 1


@dataclass(frozen=True)
class Option:
    index: int


@dataclass(frozen=True)
class Set:
    kind: str  # the AppTest element family: slider, select_slider, selectbox, radio, text_input, text_area, number_input
    key: str
    value: object


@dataclass(frozen=True)
class Open:
    keys: tuple[str, ...]

    def __init__(self, *keys: str) -> None:
        object.__setattr__(self, "keys", keys)


@dataclass(frozen=True)
class Check:
    when: str


@dataclass(frozen=True)
class Depth:
    depth: str


@dataclass(frozen=True)
class Expect:
    fact: Callable  # fact(at) asserts; its name says what


@dataclass(frozen=True)
class Do:
    action: Callable  # action(at)


@dataclass(frozen=True)
class Walk:
    page: str
    moves: tuple = ()
    story: tuple = ()  # moves at Story depth, before Engineer opens
    setup: Callable | None = None  # setup(monkeypatch, tmp_path) -> a clean-up or None
    opens: str = "story"


def walk(at, moves) -> None:
    """Take `moves` on the page `at` (an AppTest already run), asserting at every `Check`, `Depth` and `Expect`."""
    from tests.app.japanese import open_toggles, reads_japanese

    for move in moves:
        if isinstance(move, Check):
            reads_japanese(at, move.when)
        elif isinstance(move, Depth):
            at.query_params["depth"] = move.depth
            at.run()
            reads_japanese(at, f"{move.depth} depth")
        elif isinstance(move, Step):
            for _ in range(move.times):
                at.button(key=move.key).click().run()
        elif isinstance(move, Open):
            open_toggles(at, *move.keys)
        elif isinstance(move, Expect):
            driver.assert_clean(at, move.fact.__name__)
            move.fact(at)
        elif isinstance(move, Do):
            move.action(at)
        else:
            widget = getattr(at, move.kind)(key=move.key)
            value = list(widget.options)[move.value.index] if isinstance(move.value, Option) else move.value
            widget.set_value(value).run()


# -- what a page says in Japanese that only it says ---------------------------------------------------------


def _axis(spec: dict, axis: str) -> str:
    title = spec["layout"].get(axis, {}).get("title", {})
    return title.get("text", "") if isinstance(title, dict) else str(title)


def _all_japanese(texts) -> bool:
    texts = list(texts)
    return bool(texts) and all(japanese_words(t) for t in texts)


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def primer_dot_chart_is_japanese(at):
    dot = chart_spec(at, "pr_dot")
    assert japanese_words(shown_title(at, dot)) and japanese_words(_axis(dot, "xaxis"))


def board_chart_is_japanese(at):
    memory = chart_spec(at, "la_memory")
    assert japanese_words(shown_title(at, memory))
    assert japanese_words(_axis(memory, "xaxis")) and japanese_words(_axis(memory, "yaxis"))
    assert _all_japanese(trace["name"] for trace in memory["data"])


def deltanet_parts_and_curves_are_japanese(at):
    parts = chart_spec(at, "dn_parts")
    panel_titles = [a["text"] for a in parts["layout"]["annotations"]]
    assert len(panel_titles) == 4 and _all_japanese(panel_titles)
    assert japanese_words(_axis(parts, "yaxis"))
    assert japanese_words(shown_title(at, chart_spec(at, "dn_curves")))


def forgetting_rates_chart_is_japanese(at):
    assert japanese_words(shown_title(at, chart_spec(at, "fg_rates")))


def k3_charts_are_japanese(at):
    layer_map = chart_spec(at, "k3_map")
    assert japanese_words(shown_title(at, layer_map)) and japanese_words(_axis(layer_map, "xaxis"))
    assert _all_japanese(layer_map["layout"]["yaxis"]["ticktext"])
    memory = chart_spec(at, "k3_memory")
    assert _all_japanese(trace["name"] for trace in memory["data"]) and japanese_words(_axis(memory, "yaxis"))
    assert japanese_words(chart_spec(at, "k3_attn_res")["data"][0]["hovertemplate"])


def k3_planner_batch_link_is_japanese(at):
    assert "**→ バッチで重みを共有するしくみ：バッチ 16 でプランナーを開く**" in [
        m.value for m in at.markdown
    ]


def experts_charts_are_japanese(at):
    router = chart_spec(at, "ex_router")
    assert japanese_words(shown_title(at, router)) and japanese_words(_axis(router, "xaxis"))
    assert _all_japanese(trace["name"] for trace in chart_spec(at, "ex_load")["data"])


def gpt2_charts_are_japanese(at):
    grid = chart_spec(at, "gpt2_grid")
    assert japanese_words(grid["layout"]["title"]["text"]) or japanese_words(
        str(grid["layout"].get("meta", {}).get("title", ""))
    )
    assert japanese_words(_axis(grid, "xaxis")) and japanese_words(_axis(grid, "yaxis"))
    assert japanese_words(_axis(chart_spec(at, "gpt2_ms"), "xaxis"))


def kv_cache_charts_are_japanese(at):
    heatmaps = chart_spec(at, "kv_heatmaps")
    assert japanese_words(_axis(heatmaps, "yaxis"))
    assert _all_japanese(a["text"] for a in heatmaps["layout"]["annotations"])
    assert japanese_words(_axis(chart_spec(at, "kv_bytes"), "yaxis"))


def collisions_charts_are_japanese(at):
    curves = chart_spec(at, "co_curves")
    assert japanese_words(shown_title(at, curves)) and japanese_words(_axis(curves, "xaxis"))
    accuracy = chart_spec(at, "co_tr_accuracy_chart")
    assert japanese_words(_axis(accuracy, "xaxis")) and japanese_words(_axis(accuracy, "yaxis"))


def unreadable_list_says_why_in_japanese(at):
    assert at.error and japanese_words(at.error[0].value)


def chunks_charts_are_japanese(at):
    timeline = chart_spec(at, "ch_timeline")
    assert japanese_words(shown_title(at, timeline)) and _all_japanese(
        timeline["layout"]["yaxis"]["ticktext"]
    )
    waits = chart_spec(at, "ch_waits")
    assert waits["data"][0]["x"][0] == "1ステップずつ"
    assert japanese_words(_axis(waits, "yaxis"))


def chunks_measured_speed_is_japanese(at):
    speed = chart_spec(at, "ch_speed")
    assert japanese_words(shown_title(at, speed)) and japanese_words(_axis(speed, "yaxis"))


def map_table_and_chart_are_japanese(at):
    story = at.table[0].value
    assert list(story.columns) == ["レッスン", "段階", "解決したこと", "残した課題"]
    assert _all_japanese(story["解決したこと"])
    spec = chart_spec(at, "map_memory_chart")
    assert shown_title(at, spec) == "新しいトークン1つがキャッシュに加えるメモリ"
    assert _axis(spec, "xaxis") == "1トークンあたり（KiB）"
    words = chart_text(spec)
    assert [w for w in words if english_in(w)] == [] and any("層すべてが増える" in w for w in words)


def map_precision_options_are_japanese(at):
    assert at.radio(key="map_precision").options == ["16ビット（bf16）", "8ビット（fp8）"]


def map_memory_column_names_the_context(label: str):
    def memory_column_names_the_context(at):
        assert at.dataframe[0].value.columns[1] == f"{label}でのメモリ"

    return memory_column_names_the_context


def map_words_give_english_once(at):
    (words,) = [e for e in at.expander if e.label.startswith("これから出会う用語")]
    shown = " ".join(m.value for m in words.markdown)
    assert "**トークン（token）**" in shown and "**KVキャッシュ**" in shown  # English once, where it helps


def what_changed_table_is_japanese(at):
    assert list(at.table[0].value.columns)[:3] == ["レッスン", "段階", "すること"]


def what_changed_width_option_is_japanese(at):
    assert "GPT-2 small の幅" in at.selectbox(key="wc_width").options


def what_changed_charts_are_japanese(at):
    story = chart_spec(at, "wc_story_chart")
    assert shown_title(at, story) == "1Mトークンでのすべての段階"
    subplot_titles = [a["text"] for a in story["layout"]["annotations"]]
    assert "1系列あたりに持つメモリ" in subplot_titles and "次のトークンのための計算" in subplot_titles
    memory = chart_spec(at, "wc_memory_chart")
    assert shown_title(at, memory) == "テキストが長くなるにつれて持つメモリ"
    assert _all_japanese(trace["name"] for trace in memory["data"])


def glossary_lists_every_word_in_reading_order(at):
    from core.glossary import TERMS, alphabetical
    from core.i18n import use_language

    assert "**バリュー（value）**" in _markdown(at)  # the glossary's own word, not another page's 値
    (listing,) = [m.value for m in at.markdown if m.value.startswith("- **")]
    assert listing.count("\n- ") + 1 == len(TERMS)  # every word, each on its own line
    with use_language("ja"):
        names = [f"**{t.shown_name()}**" for t in alphabetical()]
    positions = [listing.index(name) for name in names]
    assert positions == sorted(positions), "the page lists the words in reading order"


def glossary_finds(query: str, found: str):
    def finds_the_word(at):
        at.text_input(key="gl_find").set_value(query).run()
        driver.assert_clean(at, f"search {query}")
        assert found in _markdown(at), f"searching {query!r} finds {found}"

    finds_the_word.__name__ = f"search {query}"
    return finds_the_word


def glossary_quotes_what_found_nothing(at):
    assert at.info and "「zzzz」" in at.info[0].value


def _planner_model():
    from core.plan import parse
    from core.plan.config import SHIPPED_CONFIGS

    return parse((SHIPPED_CONFIGS / "llama3_1_8b.json").read_text())


def planner_story_says_what_a_step_reads(at):
    from core.plan import PlanInputs, plan
    from core.plan.headline import quoted_plan, reads_words

    model = _planner_model()
    words = reads_words(model, quoted_plan(model, plan(model, PlanInputs())))
    assert japanese_words(words) and words in [m.value for m in at.markdown]
    assert all(japanese_words(c.value) for c in at.caption)


def planner_sentence_charts_table_and_link_are_japanese(at):
    """At two GPUs: the headline, both charts, the table and the shared link."""
    from core.plan import PlanInputs
    from core.plan.headline import headline

    sentence = headline(_planner_model(), PlanInputs(gpus=2))
    assert japanese_words(sentence) and f"**{sentence}**" in [m.value for m in at.markdown]
    for key in ("plan_memory", "plan_speed"):
        spec = chart_spec(at, key)
        assert japanese_words(shown_title(at, spec)) and japanese_words(_axis(spec, "xaxis")), key
        assert _all_japanese(trace["name"] for trace in spec["data"]), key
    assert japanese_words(_axis(chart_spec(at, "plan_speed"), "yaxis"))
    table = at.table[0].value
    assert list(table.columns) == ["項目", "値"] and _all_japanese(table["項目"])
    link = next(m.value for m in at.markdown if "(?context=" in m.value)
    assert "lang=ja" in link  # the shared link opens the plan in the language it was read in


def planner_warns_in_japanese(at):
    assert any(japanese_words(w.value) for w in at.warning)


def info_is_japanese(at):
    assert at.info and japanese_words(at.info[0].value)


def errors_are_japanese(at):
    assert at.error and all(japanese_words(e.value) for e in at.error)


def _planner_every_choice() -> tuple:
    """Every shipped model, then every card, format and layout on Kimi K3 (MLA, experts, a fixed state);
    then what-ifs: past the trained window, GPUs that cannot split the heads, a Mac over its share."""
    from ui.planner import shipped

    moves: list = []
    for name in shipped():
        moves += [Set("selectbox", "plan_shipped", name), Check(f"config {name}")]
    moves.append(Set("selectbox", "plan_shipped", "kimi_k3"))
    for key, options in driver.planner_selects():
        for option in options:
            moves += [Set("selectbox", key, option), Check(f"{key} = {option}")]
    moves += [
        Set("selectbox", "plan_shipped", "gpt2"),
        Set("select_slider", "plan_context", 2**20),
        Check("GPT-2 at 1M"),
        Expect(planner_warns_in_japanese),
        Set("selectbox", "plan_shipped", "llama3_1_8b"),
    ]
    for gpus in (2, 3, 1024):
        moves += [Set("number_input", "plan_gpus", gpus), Check(f"{gpus} GPUs")]
    return (
        *moves,
        Set("number_input", "plan_gpus", 1),
        Set("selectbox", "plan_card", "m4_max_128gb"),
        Set("slider", "plan_share", 0.95),
        Set("number_input", "plan_batch", 1_000_000),
        Check("a Mac, a million sequences"),
    )


def _pasted_configs() -> tuple:
    """Configs that cannot be planned (each says why), then a hybrid without its trained window."""
    from core.plan.config import SHIPPED_CONFIGS

    moves: list = [
        Set("radio", "plan_source", "Paste config.json"),
        Check("nothing pasted yet"),
        Expect(info_is_japanese),
    ]
    for text in (
        "{ not json",
        '{"model_type": "rwkv7"}',
        '{"model_type": "deepseek_v3", "hidden_size": 7168}',
        "[]",
    ):
        moves += [
            Set("text_area", "plan_paste", text),
            Check(f"pasted {text!r}"),
            Expect(errors_are_japanese),
        ]
    data = json.loads((SHIPPED_CONFIGS / "qwen3_next_80b_a3b.json").read_text())
    del data["max_position_embeddings"]  # the trained window unknown, said in Japanese
    return (
        *moves,
        Set("text_area", "plan_paste", json.dumps(data)),
        Check("a pasted hybrid without a trained window"),
        Set("radio", "plan_source", "Upload config.json"),
        Check("the upload, nothing uploaded"),
        Expect(info_is_japanese),
    )


ENGINEERS = ":material/engineering:"  # the icon of every Engineer heading (ui.depth.engineer_section)
GO_DEEPER = "もっと詳しく（エンジニア向け）"
GO_DEEPER_PLANNER = "もっと詳しく：ハイブリッドを推論サーバーで動かす（黒板 + KVキャッシュ）"


def _engineers_sections(node, label: str, found: list) -> list:
    """The sections drawn under the inline Engineer heading `label` (ui.depth.engineer_section): the element
    right after the heading."""
    children = getattr(node, "children", None)
    if children is None:
        return found
    keys = sorted(children)
    for i, key in enumerate(keys):
        child = children[key]
        if getattr(child, "type", "") == "markdown" and child.value == f"#### {ENGINEERS} {label}":
            if i + 1 < len(keys):
                found.append(children[keys[i + 1]])
        else:
            _engineers_sections(child, label, found)
    return found


def go_deeper_hidden(label: str = GO_DEEPER):
    def go_deeper_is_not_at_story_depth(at):
        assert _engineers_sections(at.main, label, []) == []  # Engineer-only: Story never shows it

    return go_deeper_is_not_at_story_depth


def go_deeper_in_japanese(label: str = GO_DEEPER):
    def go_deeper_reads_in_japanese(at):
        sections = _engineers_sections(at.main, label, [])
        assert len(sections) == 1, f"no Engineer section '{label}'"
        text = shown_text(sections[0])
        assert len(text) > 2 and [s for t in text for s in english_in(t)] == []

    return go_deeper_reads_in_japanese


def real_hybrid_steps_in_japanese(at):
    assert any(m.value.startswith("**トークン 3") for m in at.markdown)  # the step status in Japanese


def real_hybrid_layer_is_japanese(at):
    assert at.selectbox(key="rh_layer").format_func(2) == "層 3"


def _japanese_only(text: str) -> bool:
    return japanese_words(text) and not english_in(text)


def real_hybrid_charts_are_japanese(at):
    board_spec = chart_spec(at, "rh_board")
    title = shown_title(at, board_spec)  # shown as bold text above the chart
    assert _japanese_only(title) and "黒板" in title
    assert _japanese_only(_axis(board_spec, "xaxis")) and _japanese_only(_axis(board_spec, "yaxis"))
    titles = [a["text"] for a in chart_spec(at, "rh_fade")["layout"]["annotations"]]
    assert "保持率 α（1 = すべて残す）" in titles and "書き込みの強さ β" in titles
    memory = chart_spec(at, "rh_memory")
    assert all(_japanese_only(trace["name"]) for trace in memory["data"])
    assert _japanese_only(_axis(memory, "yaxis"))


def real_hybrid_offers_the_download_in_japanese(at):
    info = " ".join(i.value for i in at.info)
    assert "約1.7 GB" in info and "python -m core.models.fetch qwen3.5-0.8b" in info


def _point_real_hybrid_at(monkeypatch, folder, cache_dir, offline: bool = True) -> None:
    """Offer `folder` (or nothing) as the page's Qwen3.5, with an empty Hugging Face cache."""
    import huggingface_hub.constants

    from core.models import fetch
    from ui.models.qwen35 import found_checkpoints

    if folder is None:
        monkeypatch.delenv(fetch.ENV_QWEN35, raising=False)
    else:
        monkeypatch.setenv(fetch.ENV_QWEN35, str(folder))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache_dir))
    monkeypatch.delenv("COURSE_PUBLIC", raising=False)
    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:  # online: the page offers its Download button
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    found_checkpoints.clear()


def tiny_qwen35(monkeypatch, tmp_path):
    """A tiny Qwen3.5 folder (random weights, the real layout) offered as the released model."""
    import pytest

    pytest.importorskip("transformers")
    from bench.hf_tiny_qwen35 import make_checkpoint

    _point_real_hybrid_at(monkeypatch, make_checkpoint(tmp_path / "tiny-qwen35"), tmp_path / "hf-cache")


def no_weights_online(monkeypatch, tmp_path):
    _point_real_hybrid_at(monkeypatch, None, tmp_path / "hf-cache", offline=False)


def public_mode(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_PUBLIC", "1")


# Your GPU after a measurement: the set-ups of the English tests (tests/app/test_your_gpu.py,
# test_gpu_checkpoint_page.py, test_gpu_checkpoint_qwen_page.py), on the trimmed tiny preset.


def _no_gpu(monkeypatch) -> None:
    from core.gpu.device import nvml
    from tests.core.gpu.fake_nvml import FakeNvml

    monkeypatch.setattr(nvml, "load_module", lambda: FakeNvml(init_error="LibraryNotFound"))


def small_and_quiet(monkeypatch, tmp_path, gpu: bool = False):
    """The trimmed tiny preset on one thread (a page benchmark takes a second or two), no NVIDIA GPU unless
    `gpu` (a fake card); the clean-up leaves no run, place in line or telemetry viewer to the next test."""
    from core.gpu.device import nvml
    from core.gpu.presets import PRESETS
    from core.gpu.serving import runner
    from tests.core.gpu.fake_nvml import FakeNvml

    tiny = PRESETS["tiny"]
    trimmed = dataclasses.replace(tiny, depths=(0, 512, 1024, 2048), repeats=2, n_steps=4, copy_bytes=1024**2)
    monkeypatch.setitem(PRESETS, "tiny", trimmed)
    monkeypatch.setattr(runner.RUNNER, "owner_ttl_s", 60.0)
    if gpu:
        monkeypatch.setattr(nvml, "load_module", lambda: FakeNvml())
    else:
        _no_gpu(monkeypatch)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)

    def clean_up():
        torch.set_num_threads(threads)
        driver.leave_no_gpu_run_behind()

    return clean_up


def out_of_memory_past_1024(monkeypatch, tmp_path):
    from core.gpu.serving import jobs

    def oom(series: str, depth: int) -> None:
        if series == "full attention" and depth >= 1024:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")

    monkeypatch.setattr(jobs, "OOM_HOOK", oom)
    return small_and_quiet(monkeypatch, tmp_path)


RELEASE = threading.Event()  # lets a held run go on (`run_held_until_stopped`, `stop_and_release`)


def run_held_until_stopped(monkeypatch, tmp_path):
    """A context run that waits (up to a minute) for `RELEASE` before it measures: time to press Stop."""
    from core.gpu.serving import jobs

    RELEASE.clear()
    real = jobs.context_benchmark
    monkeypatch.setattr(jobs, "context_benchmark", lambda **kw: (RELEASE.wait(60), real(**kw))[1])
    return small_and_quiet(monkeypatch, tmp_path)


def stored_run_with_batch_sweep(monkeypatch, tmp_path):
    from core.gpu.serving import last_run
    from tests.app.test_your_gpu import _stored_context
    from tests.core.gpu.output.test_batch_words import h200_like

    clean_up = small_and_quiet(monkeypatch, tmp_path)
    last_run.save(_stored_context("CPU (x86_64, 2 threads)"), batch=h200_like())
    return clean_up


def committed_gpu_run_stored(monkeypatch, tmp_path):
    """The committed H200 run stored as this machine's last run."""
    from core.gpu.output import committed_run
    from core.gpu.serving import last_run

    run = committed_run.load()
    assert run is not None
    clean_up = small_and_quiet(monkeypatch, tmp_path)
    last_run.save(run.context, run.moe)
    return clean_up


def quick_preset_tiny(monkeypatch, tmp_path):
    from core.gpu.serving import jobs

    monkeypatch.setattr(jobs, "QUICK_PRESET", "tiny")
    return small_and_quiet(monkeypatch, tmp_path)


def fake_nvidia_card(monkeypatch, tmp_path):
    return small_and_quiet(monkeypatch, tmp_path, gpu=True)


FOLDERS: dict[str, Path] = {}  # the reader's checkpoints by kind, while a walk runs (`readers_checkpoints`)


def readers_checkpoints(monkeypatch, tmp_path):
    """A tiny GPT-2 offered as the reader's own checkpoint, and a dense Qwen3 and a hybrid Qwen3.5 folder to
    type (transformers writes them)."""
    import pytest

    pytest.importorskip("transformers")
    from bench.hf_tiny_gpt2 import make_checkpoint as make_gpt2
    from bench.hf_tiny_gpt2 import point_pages_at
    from bench.hf_tiny_qwen3 import make_checkpoint as make_qwen3
    from bench.hf_tiny_qwen35 import make_checkpoint as make_qwen35

    clean_up = small_and_quiet(monkeypatch, tmp_path)
    point_pages_at(monkeypatch, make_gpt2(tmp_path / "tiny-gpt2", n_positions=64), tmp_path / "hf-cache")
    monkeypatch.setitem(
        FOLDERS, "dense", make_qwen3(tmp_path / "tiny-qwen3", vocab_size=320, max_position_embeddings=48)
    )
    monkeypatch.setitem(FOLDERS, "hybrid", make_qwen35(tmp_path / "tiny-qwen35", max_position_embeddings=48))
    return clean_up


def finish(at):
    """Wait for this reader's run, then redraw (as tests/app/test_your_gpu.py does)."""
    from core.gpu.serving import runner

    job = runner.RUNNER.job(at.session_state["gpu_owner"])
    if job is not None:
        assert job.wait(300)
    at.run()
    driver.assert_clean(at, "after the run")


def stop_and_release(at):
    """Press Stop on the held run, then let it go."""
    at.button(key="gpu_stop").click().run()
    RELEASE.set()
    finish(at)


def choose_the_smallest_budget(at):
    budget = at.select_slider(key="gpu_budget_tiny_ja")
    budget.set_value(budget.options[0]).run()


def host_ram_too_small_to_spill(at):
    import pytest

    from core.gpu.decode import spill

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spill, "host_available_bytes", lambda: spill.HOST_MARGIN_BYTES + 1)
        at.button(key="gpu_run_context").click().run()
        finish(at)
        assert (at.session_state["gpu_context"].series[0].oom_message or "").startswith("not run:")
        from tests.app.japanese import reads_japanese

        reads_japanese(at, "a spill that would pin too much host RAM")


def committed_charts_are_japanese(at):
    spec = chart_spec(at, "gpu_committed_context_fig")
    assert _all_japanese(_axis(spec, axis) for axis in ("yaxis", "xaxis2"))
    assert _all_japanese(trace["name"] for trace in spec["data"] if trace.get("name"))


def committed_story_charts_are_japanese(at):
    depth = chart_spec(at, "gpu_committed_depth_fig")
    assert _all_japanese(_axis(depth, axis) for axis in ("xaxis", "yaxis"))
    assert _all_japanese(t["name"] for t in depth["data"])
    moe = chart_spec(at, "gpu_committed_moe_story_fig")
    titles = [a["text"] for a in moe["layout"]["annotations"]]  # the two panels' titles
    assert len(titles) == 2 and _all_japanese(titles), titles
    assert all(japanese_words(x) for t in moe["data"] for x in t["x"])


def ran_out_of_memory_at_1024(at):
    assert at.session_state["gpu_context"].series[0].oom_depth == 1024
    spec = chart_spec(at, "gpu_this_fig")
    assert _all_japanese(_axis(spec, axis) for axis in ("yaxis", "yaxis2", "xaxis2"))


def moe_bars_are_japanese(at):
    assert len(at.session_state["gpu_moe"].rows) == 2
    assert _all_japanese(t["name"] for t in chart_spec(at, "gpu_moe_fig")["data"])


def the_cache_spilled(at):
    assert at.session_state["gpu_context"].series[0].spill_depth is not None


def the_run_stopped(at):
    assert at.session_state["gpu_context"].stopped


def batch_sweep_chart_is_japanese(at):
    assert at.session_state["gpu_batch"] is not None
    spec = chart_spec(at, "gpu_batch_fig")
    assert _all_japanese(t["name"] for t in spec["data"]) and japanese_words(_axis(spec, "xaxis2"))


def gpu_tables_have_japanese_headers(at):
    """CUDA-graph and eager columns, energy columns: a wide table, every header Japanese (or joules)."""
    tables = [t.value for t in at.table]
    assert any(
        len(t.columns) > 5 and all(japanese_words(str(c)) or "J" in str(c) for c in t.columns) for t in tables
    )


def measured_this_machine(at):
    assert at.session_state["gpu_context"].preset == "tiny" and at.session_state["gpu_batch"] is not None


def sample_the_fake_card(at):
    from core.gpu.device import telemetry

    at.button(key="gpu_tel_start").click().run()
    telemetry.HUB.sampler.sample_now()
    at.run()


def _run_checkpoint(at):
    from core.gpu.serving import runner

    at.button(key="gpu_run_checkpoint").click().run()
    job = runner.RUNNER.job(at.session_state["gpu_owner"])
    assert job is not None and job.wait(300)
    at.run()
    driver.assert_clean(at, "after the checkpoint run")


def gpt2_checkpoint_measured_in_japanese(at):
    assert at.session_state["gpu_checkpoint"].points
    assert _all_japanese(t["name"] for t in chart_spec(at, "gpu_ckpt_fig")["data"])


def type_a_folder(at):
    from core.i18n import _
    from ui.gpu.checkpoint import TYPED

    driver.choose_label(at.selectbox(key="gpu_ckpt_pick"), _(TYPED)).run()


def typed_folder(kind: str):
    def type_the_folder(at):
        at.text_input(key="gpu_ckpt_path").input(str(FOLDERS[kind])).run()

    return type_the_folder


def dense_beside_hybrid_is_japanese(at):
    speed = chart_spec(at, "gpu_ckpt_cmp_speed")
    assert _all_japanese(t["name"] for t in speed["data"])
    assert japanese_words(_axis(chart_spec(at, "gpu_ckpt_cmp_memory"), "yaxis"))


GPU_ANSWERS = ("gpu_notice_depth_reveal", "gpu_notice_spill_reveal", "gpu_notice_moe_reveal", "gpu_formula")

# -- the table ----------------------------------------------------------------------------------------------

WALKS: dict[str, Walk] = {
    "map": Walk(
        "map",
        (
            Expect(map_table_and_chart_are_japanese),
            # chosen by its English option; the reader sees it in Japanese
            Set("radio", "map_precision", "8-bit (fp8)"),
            Expect(map_precision_options_are_japanese),
            Check("8-bit cache"),
            Set("select_slider", "map_context", "1K"),
            Check("context 1K"),
            Expect(map_memory_column_names_the_context("1K")),
            Set("select_slider", "map_context", "1M"),
            Check("context 1M"),
            Expect(map_memory_column_names_the_context("1M")),
            Open("map_notice_size_reveal", "map_formula", "map_code"),
            Check("answer, formula and code open"),
            Expect(map_words_give_english_once),
        ),
    ),
    "gpt2": Walk(
        "gpt2",
        (
            Step("gpt2_t_step", 3),
            Check("after three steps"),
            Expect(gpt2_charts_are_japanese),
            Set("slider", "gpt2_temp", 0.8),
            Set("slider", "gpt2_n", 30),
            Step("gpt2_t_step"),
            Check("sampling at temperature 0.8, a shorter run"),
            Open("gpt2_notice_total_reveal", "gpt2_notice_same_reveal", "gpt2_formula", "gpt2_code"),
            Check("answers, formula and code open"),
        ),
    ),
    "kv_cache": Walk(
        "kv_cache",
        (
            Step("kv_t_step", 3),
            Check("after three steps"),
            Expect(kv_cache_charts_are_japanese),
            Set("selectbox", "kv_layer", 1),
            Set("selectbox", "kv_head", 1),
            Check("another layer and head"),
            Set("selectbox", "kv_precision", "16-bit weights (bf16)"),
            Set("select_slider", "kv_context", 1048576),
            Check("16-bit weights at 1M tokens (past the model's training length, spilling)"),
            Set("selectbox", "kv_spec", Option(-1)),
            Check("the last model of the list"),
            Open("kv_notice_speed_reveal", "kv_notice_same_reveal", "kv_formula", "kv_code"),
            Check("answers, formula and code open"),
        ),
    ),
    "primer": Walk(
        "primer",
        (
            Expect(primer_dot_chart_is_japanese),
            Set("slider", "pr_sweet", 0.0),
            Set("slider", "pr_b_dir", 110),  # b at right angles to a
            Set("selectbox", "pr_query", "snow"),
            Set("radio", "pr_row", "sky"),
            Check("arrows moved, another query"),
            Set("selectbox", "pr_pair1", Option(2)),
            Set("radio", "pr_read", "snow"),  # a key that was not written
            Set("slider", "pr_n", 1),
            Open("pr_q1_reveal", "pr_q2_reveal", "pr_f1", "pr_f2", "pr_f3", "pr_f4", "pr_f5", "pr_code"),
            Check("other pairs, one pair on the board, answers, formulas and code open"),
        ),
    ),
    "linear_attention": Walk(
        "linear_attention",
        (
            Expect(board_chart_is_japanese),
            Step("la_t_step", 3),
            Check("after three steps"),
            Set("slider", "la_d", 4),
            Set("slider", "la_n", 16),  # colours past the board's columns; softmax misses keys
            Step("la_t_step"),
            Check("a small board, many pairs"),
            Step("la_t_step", 8),
            Check("a colour without a column of its own"),
            Set("radio", "la_keys", "orthogonal"),
            Set("slider", "la_T", 8),
            Open("la_q1_reveal", "la_q2_reveal", "la_formula", "la_code"),
            Check("orthogonal keys, answers, formula and code open"),
        ),
    ),
    "collisions": Walk(
        "collisions",
        (
            Expect(collisions_charts_are_japanese),
            Set("radio", "co_keys", "orthogonal"),
            Set("slider", "co_n", 40),
            Check("orthogonal keys, n past d"),
            Open("co_q1_reveal", "co_q2_reveal", "co_formula", "co_tr_curves"),
            Check("answers, formula and training curves open"),
            Set("selectbox", "co_tr_mixer", "attention"),
            Check("trained model attention"),
            Set("selectbox", "co_tr_mixer", "hybrid"),
            Check("trained model hybrid"),
            Set("selectbox", "co_tr_mixer", "kda"),
            Check("trained model kda"),
            Set("radio", "co_tr_width", 32),
            Check("the widest trained model"),
            Step("co_tr_fill"),
            Check("a random list"),
            Set("text_input", "co_tr_text", "a:1 b:2 ? a z:"),
            Check("a list the panel cannot read"),
            Expect(unreadable_list_says_why_in_japanese),
        ),
    ),
    "deltanet": Walk(
        "deltanet",
        (
            Expect(deltanet_parts_and_curves_are_japanese),
            Step("dn_t_step", 2),
            Check("the first tokens, nothing to erase yet"),
            Set("radio", "dn_keys", "random"),
            Set("slider", "dn_beta", 0.5),
            Set("slider", "dn_n", 30),
            Check("random keys, half strength, many pairs"),
            Open("dn_q1_reveal", "dn_q2_reveal", "dn_formula", "dn_code"),
            Check("answers, formula and code open"),
        ),
    ),
    "chunks": Walk(
        "chunks",
        (
            Expect(chunks_charts_are_japanese),
            Expect(go_deeper_in_japanese()),
            Set("radio", "ch_dtype", "fp64"),
            Set("select_slider", "ch_C", 64),
            Open("ch_q1_reveal", "ch_q2_reveal", "ch_formula"),
            Check("fp64, one chunk, answers and formula open"),
            Set("select_slider", "ch_speed_T", 64),
            Set("slider", "ch_repeats", 1),
            Step("ch_measure"),
            Check("measured here"),
            Expect(chunks_measured_speed_is_japanese),
        ),
        story=(Expect(go_deeper_hidden()),),
    ),
    "forgetting": Walk(
        "forgetting",
        (
            Expect(go_deeper_in_japanese()),
            Step("fg_t_step", 6),  # through the fact and topic A, onto the topic switch
            Check("stepped onto the topic switch"),
            Set("slider", "fg_alpha_topic", 0.5),  # KDA's topics apart from Gated DeltaNet's α
            Set("radio", "fg_keys", "orthogonal"),
            Check("orthogonal keys, KDA's topic rate apart"),
            Set("slider", "fg_alpha", 1.0),
            Set("slider", "fg_alpha_topic", 1.0),  # no fade anywhere: the maps agree
            Check("no fade at all"),
            Set("radio", "fg_when", "every"),
            Set("slider", "fg_alpha", 0.5),
            Set("slider", "fg_na", 2),
            Set("slider", "fg_nb", 6),
            Step("fg_t_step", 3),
            Check("fading at every token, other stream lengths"),
            Open("fg_q1_reveal", "fg_q2_reveal", "fg_formula", "fg_code"),
            Check("answers, formula and code open"),
        ),
        story=(Expect(forgetting_rates_chart_is_japanese), Expect(go_deeper_hidden())),
    ),
    "kimi_k3": Walk(
        "kimi_k3",
        (
            Expect(k3_charts_are_japanese),
            Expect(go_deeper_in_japanese()),
            Expect(k3_planner_batch_link_is_japanese),
            Step("k3_step_step", 2),
            Check("the first bytes of the reader's text"),
            Set("text_input", "k3_prompt", "Hi"),
            Step("k3_step_step", 5),  # past the two bytes typed: the model's own writing
            Check("stepping through the model's own writing"),
            Set("text_input", "k3_prompt", "x" * 60),  # longer than mini-K3 reads: cut
            Check("a text that was cut"),
            Open("k3_n1_reveal", "k3_n2_reveal", "k3_n3_reveal", "k3_formula", "k3_code"),
            Check("answers, formula and code open"),
        ),
        story=(Expect(go_deeper_hidden()),),
    ),
    "experts": Walk(
        "experts",
        (
            Expect(experts_charts_are_japanese),
            Expect(go_deeper_in_japanese()),
            Step("ex_step_step", 3),
            Check("three bytes on"),
            Set("select_slider", "ex_layer", Option(-1)),  # the last MoE layer
            Check("the last MoE layer"),
            Set("text_input", "ex_prompt", "aaaaaaaa"),  # one letter: most experts idle
            Check("one repeated letter"),
            Open("ex_n1_reveal", "ex_n2_reveal", "ex_formula", "ex_code"),
            Check("answers, formula and code open"),
        ),
        story=(Expect(go_deeper_hidden()),),
    ),
    "real_hybrid": Walk(  # no weights here: the shipped miniature
        "real_hybrid",
        (
            Step("rh_step_step", 3),
            Check("after three steps"),
            Expect(real_hybrid_steps_in_japanese),
        ),
    ),
    "real_hybrid: a tiny Qwen3.5": Walk(
        "real_hybrid",
        (
            Expect(real_hybrid_charts_are_japanese),
            Step("rh_step_step", 3),
            Check("after three steps"),
            Expect(real_hybrid_steps_in_japanese),
            Open("rh_n1_reveal", "rh_n2_reveal", "rh_formula", "rh_code"),
            Set("selectbox", "rh_layer", 2),
            Set("selectbox", "rh_head", 1),
            Expect(real_hybrid_layer_is_japanese),
            Check("answers, formula, code, another layer and head"),
            Set("text_input", "rh_prompt", "Hello there"),  # not the default: the switch answer changes
            Check("the reader's own text"),
        ),
        setup=tiny_qwen35,
    ),
    "real_hybrid: no weights, online": Walk(
        "real_hybrid",
        (Expect(real_hybrid_offers_the_download_in_japanese),),  # the size and command are an engineer's
        setup=no_weights_online,
    ),
    "your_gpu": Walk(  # no NVIDIA GPU here
        "your_gpu",
        (
            Expect(committed_charts_are_japanese),
            Open(*GPU_ANSWERS, "gpu_ckpt_open"),
            Check("answers, formula and the checkpoint picker open"),
            Set("selectbox", "gpu_preset", "tiny"),
            Check("the tiny preset"),
        ),
        story=(Expect(committed_story_charts_are_japanese),),
    ),
    "your_gpu: public mode": Walk("your_gpu", setup=public_mode),
    "your_gpu: out of memory, then experts": Walk(
        "your_gpu",
        (
            Set("selectbox", "gpu_preset", "tiny"),
            Step("gpu_run_context"),
            Do(finish),
            Expect(ran_out_of_memory_at_1024),
            Check("context sweep with an out-of-memory depth"),
            Do(choose_the_smallest_budget),
            Step("gpu_run_moe"),
            Do(finish),
            Expect(moe_bars_are_japanese),
            Check("dense vs experts"),
        ),
        setup=out_of_memory_past_1024,
        opens="engineer",
    ),
    "your_gpu: a spill, and one host RAM cannot hold": Walk(
        "your_gpu",
        (
            Set("selectbox", "gpu_preset", "tiny"),
            Do(choose_the_smallest_budget),
            Step("gpu_run_context"),
            Do(finish),
            Expect(the_cache_spilled),
            Check("a spilled cache"),
            Do(host_ram_too_small_to_spill),
        ),
        setup=small_and_quiet,
        opens="engineer",
    ),
    "your_gpu: a stopped run": Walk(
        "your_gpu",
        (
            Set("selectbox", "gpu_preset", "tiny"),
            Step("gpu_run_context"),
            Do(stop_and_release),
            Expect(the_run_stopped),
            Check("a run stopped early"),
        ),
        setup=run_held_until_stopped,
        opens="engineer",
    ),
    "your_gpu: a stored run with its batch sweep": Walk(
        "your_gpu",
        (Expect(batch_sweep_chart_is_japanese),),
        setup=stored_run_with_batch_sweep,
        opens="engineer",
    ),
    "your_gpu: a GPU run stored as the last run": Walk(
        "your_gpu",
        (Expect(gpu_tables_have_japanese_headers),),
        setup=committed_gpu_run_stored,
        opens="engineer",
    ),
    "your_gpu: measure this machine": Walk(  # the one button is Story's; Engineer adds the batch sweep
        "your_gpu",
        story=(
            Step("gpu_measure_this"),
            Do(finish),
            Expect(measured_this_machine),
            Check("the curve and the worked example"),
        ),
        setup=quick_preset_tiny,
    ),
    "your_gpu: a fake NVIDIA card": Walk(
        "your_gpu",
        (
            Do(sample_the_fake_card),
            Check("telemetry of a fake NVIDIA GPU"),
            Set("selectbox", "gpu_preset", "tiny"),
            Step("gpu_run_context"),
            Do(finish),
            Check("a context run beside a fake NVIDIA card (it runs on the CPU)"),
            Step("gpu_tel_stop"),
        ),
        setup=fake_nvidia_card,
        opens="engineer",
    ),
    "your_gpu: the reader's own checkpoints": Walk(
        "your_gpu",
        (
            Open("gpu_ckpt_open"),
            Do(_run_checkpoint),
            Check("the tiny GPT-2 checkpoint measured"),
            Expect(gpt2_checkpoint_measured_in_japanese),
            Do(type_a_folder),
            Do(typed_folder("dense")),
            Check("the dense folder typed"),
            Do(_run_checkpoint),
            Check("the dense checkpoint measured"),
            Do(typed_folder("hybrid")),
            Check("the hybrid folder typed"),
            Do(_run_checkpoint),
            Check("the hybrid checkpoint measured"),
            Expect(dense_beside_hybrid_is_japanese),
        ),
        setup=readers_checkpoints,
        opens="engineer",
    ),
    "planner": Walk(
        "planner",
        (
            Expect(go_deeper_in_japanese(GO_DEEPER_PLANNER)),
            Set("number_input", "plan_gpus", 2),
            Expect(planner_sentence_charts_table_and_link_are_japanese),
            *_planner_every_choice(),
        ),
        story=(Expect(planner_story_says_what_a_step_reads), Expect(go_deeper_hidden(GO_DEEPER_PLANNER))),
    ),
    "planner: pasted and uploaded configs": Walk("planner", _pasted_configs(), opens="engineer"),
    "what_changed": Walk(
        "what_changed",
        (
            Expect(what_changed_table_is_japanese),
            Set("selectbox", "wc_width", "GPT-2 small's width"),
            Expect(what_changed_width_option_is_japanese),
            Check("GPT-2 width"),
            Set("select_slider", "wc_context", "1K"),
            Check("context 1K"),
            Set("select_slider", "wc_context", "1M"),
            Check("context 1M"),
            Open("wc_notice_same_size_reveal", "wc_notice_mix_reveal", "wc_formula", "wc_code"),
            Check("answers, formula and code open"),
            Expect(what_changed_charts_are_japanese),
        ),
    ),
    "glossary": Walk(
        "glossary",
        story=(
            Expect(glossary_lists_every_word_in_reading_order),
            Expect(glossary_finds("softmax", "**ソフトマックス（softmax）**")),
            Check("search softmax"),
            Expect(glossary_finds("ソフトマックス", "**ソフトマックス（softmax）**")),
            Check("search ソフトマックス"),
            # a reading in hiragana finds its katakana
            Expect(glossary_finds("そふとまっくす", "**ソフトマックス（softmax）**")),
            Check("search by a reading in hiragana"),
            Expect(glossary_finds("こくばん", "**黒板")),  # a kanji name by its reading
            Check("a kanji name found by its reading"),
            Set("text_input", "gl_find", "zzzz"),
            Check("nothing found"),
            Expect(glossary_quotes_what_found_nothing),
        ),
    ),
}
