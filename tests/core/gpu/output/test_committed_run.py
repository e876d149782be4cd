"""The sentences the pages say about this project's own GPU run are computed from its committed JSON
(core.gpu.output.committed_run): their numbers equal the JSON's, read here independently, and a changed copy
of the JSON changes them — so none of them can be typed. Also the worked example of the CPU
measurement (core.gpu.output.worked_example) and the one-click run's time cap."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from core.gpu import presets
from core.gpu.output import committed_run
from core.gpu.output.report import percent
from core.gpu.output.worked_example import worked_example
from core.gpu.serving import jobs
from core.gpu.suites.context_bench import ContextResult, DepthPoint, Series

RUN = committed_run.latest_folder()


def _raw(folder: Path) -> dict:
    return json.loads((folder / "bench.json").read_text(encoding="utf-8"))


def _by(items: list[dict], key: str, value: str) -> dict:
    return next(item for item in items if item[key] == value)


def test_the_committed_run_is_the_h200_folder_with_its_date_and_card():
    assert RUN is not None and RUN.name.startswith("2026-11-30-")
    run = committed_run.load()
    raw = _raw(RUN)
    started = json.loads((RUN / "validate.json").read_text(encoding="utf-8"))["started"]
    assert run.date == started[:10] == "2026-11-30"
    assert run.card == raw["device"]["name"] == "NVIDIA H200"
    assert run.label == "measured on the NVIDIA H200 on 2026-11-30"
    assert run.source == f"docs/gpu-runs/{RUN.name}/bench.json" and not Path(run.source).is_absolute()


def test_the_moe_sentence_carries_the_jsons_numbers():
    raw = _raw(RUN)
    dense = _by(raw["moe"]["rows"], "model", "dense")
    moe = _by(raw["moe"]["rows"], "model", "experts (MoE)")
    words = committed_run.moe_power_sentence(committed_run.load())
    assert words.startswith("On the NVIDIA H200 measured on 2026-11-30, ")
    assert (
        f"the MoE drew {moe['avg_watts']:,.0f} W against the dense model's {dense['avg_watts']:,.0f} W"
        in words
    )
    assert f"ran {moe['tokens_per_s'] / dense['tokens_per_s']:.2f}× as fast" in words
    assert f"{dense['bytes_per_token'] / moe['bytes_per_token']:.1f}× fewer bytes" in words
    energy = moe["net_joules_per_token"] / dense["net_joules_per_token"]
    assert f"used {energy:.2f}× the dense model's energy per token (idle power subtracted)" in words
    # the figures, as the H200 measured them: 300 W, 477 W, 1.14×
    assert "300 W" in words and "477 W" in words and "1.14×" in words
    # (300 − idle) ÷ (477 − idle) = 0.49 is further below 1 than 1 ÷ 1.14: the power made the saving
    assert "came from drawing less power, not from finishing each token sooner" in words
    assert "same band" not in words


def test_the_depth_sentence_carries_the_jsons_numbers():
    raw = _raw(RUN)
    attention = _by(raw["context"]["series"], "model", "full attention")["points"]
    state = _by(raw["context"]["series"], "model", "fixed state")["points"]
    run = committed_run.load()
    words = committed_run.depth_sentence(run)
    ratio0 = state[0]["tokens_per_s"] / attention[0]["tokens_per_s"]
    assert f"at depth 0 the fixed-state model ran at {ratio0:.2f}× the speed of full attention" in words
    assert f"{state[0]['tokens_per_s']:,.0f} against {attention[0]['tokens_per_s']:,.0f} tokens/s" in words
    assert "0.73×" in words  # the figure
    deep = state[-1]["tokens_per_s"] / attention[-1]["tokens_per_s"]
    assert f"fallen to {attention[-1]['tokens_per_s']:,.0f} tokens/s" in words
    assert f"{deep:.2f}× faster than full attention" in words and "128K tokens" in words
    question = committed_run.depth_question(run)
    assert "0.73×" in question and "same speed" not in question


def _copy(tmp_path: Path, name: str, edit) -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True)
    raw = _raw(RUN)
    edit(raw)
    (folder / "bench.json").write_text(json.dumps(raw), encoding="utf-8")
    return folder


def test_a_changed_copy_of_the_json_changes_every_sentence(tmp_path):
    def edit(raw: dict) -> None:
        raw["device"]["name"] = "NVIDIA B200"
        rows = {r["model"]: r for r in raw["moe"]["rows"]}
        rows["experts (MoE)"]["avg_watts"] = 466.0  # about the dense model's power…
        rows["experts (MoE)"]["tokens_per_s"] = 2.5 * rows["dense"]["tokens_per_s"]  # …but much faster
        rows["experts (MoE)"]["net_joules_per_token"] = 0.4 * rows["dense"]["net_joules_per_token"]
        state = next(s for s in raw["context"]["series"] if s["model"] == "fixed state")
        state["points"][0]["tokens_per_s"] = 1.5 * raw["context"]["series"][0]["points"][0]["tokens_per_s"]

    folder = _copy(tmp_path, "2027-02-03-nvidia-b200", edit)
    original, changed = committed_run.load(), committed_run.load(folder)
    moe_words = committed_run.moe_power_sentence(changed)
    assert moe_words != committed_run.moe_power_sentence(original)
    assert moe_words.startswith("On the NVIDIA B200 measured on 2027-02-03, the MoE drew 466 W")
    assert "ran 2.50× as fast" in moe_words and "used 0.40×" in moe_words
    assert "came from finishing each token sooner, not from the power it drew" in moe_words
    depth_words = committed_run.depth_sentence(changed)
    assert "ran 1.50× faster than full attention" in depth_words and "0.73×" not in depth_words
    assert changed.label == "measured on the NVIDIA B200 on 2027-02-03"


def test_an_moe_that_saves_nothing_is_said_to_save_nothing(tmp_path):
    def edit(raw: dict) -> None:
        rows = {r["model"]: r for r in raw["moe"]["rows"]}
        rows["experts (MoE)"]["net_joules_per_token"] = 1.2 * rows["dense"]["net_joules_per_token"]

    words = committed_run.moe_power_sentence(committed_run.load(_copy(tmp_path, "2027-01-01-x", edit)))
    assert words.endswith("Here the MoE saved no energy per token.") and "Most of that saving" not in words


def test_the_newest_dated_folder_with_a_bench_json_is_the_one_read(tmp_path):
    runs = tmp_path / "gpu-runs"
    for name in ("2026-11-30-nvidia-h200", "2027-05-01-nvidia-b200"):
        shutil.copytree(RUN, runs / name, ignore=shutil.ignore_patterns("after-*"))
    (runs / "2028-01-01-empty").mkdir()  # no bench.json: not a run
    (runs / "notes").mkdir()
    assert committed_run.latest_folder(runs).name == "2027-05-01-nvidia-b200"
    assert committed_run.latest_folder(tmp_path / "nowhere") is None


def test_a_missing_or_broken_run_gives_none_and_one_plain_line(tmp_path):
    assert committed_run.load(tmp_path / "2026-01-01-gone") is None
    broken = tmp_path / "2026-01-02-broken"
    broken.mkdir()
    (broken / "bench.json").write_text("{not json", encoding="utf-8")
    assert committed_run.load(broken) is None
    assert "\n" not in committed_run.NO_RUN and str(tmp_path) not in committed_run.NO_RUN


# -- the worked example of the CPU measurement ------------------------------------------------------

MIB = 1024**2


def _context(llc_bytes: int | None = None, llc_speed: float | None = None) -> ContextResult:
    def point(depth: int, nbytes: int, tps: float, spilled: int = 0) -> DepthPoint:
        roofline = (llc_speed if llc_bytes and nbytes <= llc_bytes else 20e9) / nbytes
        return DepthPoint(depth, tps, 1.0, [tps], depth * 1024, spilled, nbytes, roofline)

    attention = Series(
        "full attention",
        1,
        1,
        1,
        [point(0, 12 * MIB, 900.0), point(4096, 100 * MIB, 70.0), point(8192, 300 * MIB, 20.0, spilled=MIB)],
    )
    state = Series("fixed state", 1, 1, 1, [point(0, 14 * MIB, 800.0), point(8192, 14 * MIB, 810.0)])
    return ContextResult(
        "cpu", "CPU (test)", "float32", None, 20e9, 10e9, [attention, state], False, llc_bytes, llc_speed
    )


def test_the_worked_example_divides_the_readers_own_numbers():
    result = _context()
    example = worked_example(result)
    point = result.series[0].points[1]  # the deepest full-attention depth that did not spill
    assert (example.model, example.depth) == ("full attention", 4096)
    assert example.bandwidth_bytes_per_s == 20e9 and not example.from_cache
    assert example.roofline_tokens_per_s == pytest.approx(point.predicted_tokens_per_s)
    assert example.measured_tokens_per_s == point.tokens_per_s
    assert example.division() == (
        f"20,000 MB/s ÷ {100 * MIB / 1e6:,.1f} MB per token = {20e9 / (100 * MIB):,.0f} tokens/s at most"
    )
    words = example.sentence()
    assert "main memory copied 20,000 MB per second" in words and "depth 4,096" in words
    assert f"It wrote 70.0: {percent(70.0, point.predicted_tokens_per_s)} of that ceiling" in words


def test_a_step_that_fits_in_the_cpu_cache_is_divided_by_the_caches_speed():
    result = _context(llc_bytes=200 * MIB, llc_speed=80e9)
    example = worked_example(result)
    assert example.from_cache and example.bandwidth_bytes_per_s == 80e9
    assert example.roofline_tokens_per_s == pytest.approx(result.series[0].points[1].predicted_tokens_per_s)
    assert "last-level cache" in example.sentence()


def test_no_usable_point_gives_no_example():
    assert worked_example(None) is None
    empty = _context()
    for s in empty.series:
        s.points = []
    assert worked_example(empty) is None


def test_a_share_far_below_the_roofline_is_not_rounded_to_zero():
    assert percent(0.17, 100) == "0.17 %" and percent(3.44, 100) == "3.4 %"
    assert percent(71.2, 100) == "71 %" and percent(9.96, 100) == "10 %"
    shown = float(re.match(r"[\d.]+", percent(1, 2000)).group())
    assert shown == pytest.approx(0.05)


def test_the_one_click_run_stops_at_its_time_limit(monkeypatch):
    tiny = presets.PRESETS["tiny"]
    monkeypatch.setattr(jobs, "QUICK_PRESET", "tiny")
    monkeypatch.setitem(presets.PRESETS, "tiny", tiny)
    stopped = jobs.quick_benchmark(limit_s=0.0)  # past its limit before the first depth
    assert stopped.context.stopped and sum(len(s.points) for s in stopped.context.series) == 0
    full = jobs.quick_benchmark()
    assert not full.context.stopped and full.context.device.startswith("CPU")
    assert [p.depth for p in full.context.series[0].points] == list(tiny.depths)


# -- Story's sentences: the same JSON, read in plain words (issue 40) ----------------------------------


def test_the_story_depth_sentence_carries_the_jsons_numbers():
    raw = _raw(RUN)
    attention = _by(raw["context"]["series"], "model", "full attention")["points"]
    state = _by(raw["context"]["series"], "model", "fixed state")["points"]
    words = committed_run.depth_story_sentence(committed_run.load())
    a0, a_deep = attention[0]["tokens_per_s"], attention[-1]["tokens_per_s"]
    assert (
        f"wrote {a0:,.0f} tokens per second with nothing in memory and {a_deep:,.0f} at 128K tokens" in words
    )
    assert f"{a0 / a_deep:.2f}× slower" in words
    assert (
        f"wrote {state[0]['tokens_per_s']:,.0f} at the start and {state[-1]['tokens_per_s']:,.0f} at the end"
        in words
    )
    assert f"the fixed state was {state[-1]['tokens_per_s'] / a_deep:.2f}× faster" in words
    assert "3.14×" in words and "440" in words and "103" in words  # as the H200 measured them


def test_the_story_moe_sentence_says_why_from_the_run():
    """3.3× fewer bytes yet 1.14× faster: reading the bytes at the roofline's copy speed against the time a
    token really took, both from the JSON; the rest of the step is what did not shrink."""
    raw = _raw(RUN)
    dense = _by(raw["moe"]["rows"], "model", "dense")
    moe = _by(raw["moe"]["rows"], "model", "experts (MoE)")
    words = committed_run.moe_why_sentence(committed_run.load())
    read = {k: 1e3 / r["predicted_tokens_per_s"] for k, r in (("dense", dense), ("moe", moe))}
    took = {k: 1e3 / r["tokens_per_s"] for k, r in (("dense", dense), ("moe", moe))}
    other = {k: took[k] - read[k] for k in took}
    assert f"read {dense['bytes_per_token'] / moe['bytes_per_token']:.1f}× fewer bytes per token" in words
    assert f"yet ran only {moe['tokens_per_s'] / dense['tokens_per_s']:.2f}× as fast" in words
    assert f"takes {read['moe']:.2f} ms" in words and f"the dense model's {read['dense']:.2f} ms" in words
    assert f"took {other['moe']:.2f} ms against {other['dense']:.2f} ms" in words
    assert f"Reading saved {read['dense'] - read['moe']:.2f} ms a token" in words
    assert f"the rest added {other['moe'] - other['dense']:.2f} ms" in words
    assert f"{took['moe']:.2f} ms against {took['dense']:.2f}." in words
    assert "3.3×" in words and "1.14×" in words  # the figures
    power = committed_run.moe_power_story(committed_run.load())
    energy = moe["net_joules_per_token"] / dense["net_joules_per_token"]
    assert f"drew {moe['avg_watts']:,.0f} W against the dense model's {dense['avg_watts']:,.0f} W" in power
    assert f"{energy:.2f}× the dense model's energy (idle power subtracted)" in power


def test_changed_data_changes_the_story_sentences(tmp_path):
    def faster_moe(raw: dict) -> None:  # an MoE as fast as its bytes promise: nothing to explain
        rows = {r["model"]: r for r in raw["moe"]["rows"]}
        rows["experts (MoE)"]["tokens_per_s"] = 3.2 * rows["dense"]["tokens_per_s"]
        rows["experts (MoE)"]["avg_watts"] = 250.0

    def overhead_everywhere(raw: dict) -> None:  # the dense model slow too: the rest did not shrink
        rows = {r["model"]: r for r in raw["moe"]["rows"]}
        rows["dense"]["tokens_per_s"] = 0.5 * rows["dense"]["predicted_tokens_per_s"]
        rows["experts (MoE)"]["tokens_per_s"] = 1.7 * rows["dense"]["tokens_per_s"]

    def state_slower(raw: dict) -> None:  # a fixed state slower than full attention even at the end
        state = next(s for s in raw["context"]["series"] if s["model"] == "fixed state")
        for point in state["points"]:
            point["tokens_per_s"] = 50.0

    fast = committed_run.load(_copy(tmp_path, "2027-03-01-a", faster_moe))
    words = committed_run.moe_why_sentence(fast)
    assert "ran 3.20× as fast" in words and "close to what its bytes promise" in words and "Why" not in words
    assert "drew 250 W" in committed_run.moe_power_story(fast)
    flat = committed_run.moe_why_sentence(
        committed_run.load(_copy(tmp_path, "2027-03-02-b", overhead_everywhere))
    )
    assert "yet ran only 1.70× as fast" in flat and "The reading shrank, the rest did not" in flat
    slow = committed_run.depth_story_sentence(
        committed_run.load(_copy(tmp_path, "2027-03-03-c", state_slower))
    )
    assert (
        "wrote 50 at the start and 50 at the end" in slow
        and "ran at 0.49× the speed of full attention" in slow
    )


def test_ratios_read_as_japanese_writes_them():
    from core.i18n import use_language

    run = committed_run.load()
    with use_language("ja"):
        words = committed_run.moe_why_sentence(run) + committed_run.depth_story_sentence(run)
    assert "1.14倍" in words and "3.14倍" in words and "×" not in words.replace("分の 1", "")
