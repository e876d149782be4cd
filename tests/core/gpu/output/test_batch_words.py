"""The batch sweep on the Your GPU page: the page's own run measures it, stores it with the run, draws
it from its numbers and says what it found in a sentence computed from them."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
import torch

from core.figures.describe import describe
from core.figures.gpu import batch_figure
from core.gpu.output.batch_words import batch_sentence, rate, summarise, times
from core.gpu.presets import GIB, MIB, PRESETS
from core.gpu.serving import jobs, last_run
from core.gpu.suites.batch_bench import (
    BATCH_DEPTH,
    BATCHES,
    BatchPoint,
    BatchResult,
    BatchSeries,
    per_sequence_bytes,
)
from core.gpu.suites.context_bench import ContextResult, DepthPoint, Series
from core.units import format_bytes, format_context


def _points(per_sequence, room: int, batches=BATCHES) -> list[BatchPoint]:
    """Timed points while they fit (`room` sequences), 'does not fit' past it."""
    return [
        BatchPoint(b, True, per_sequence(b), per_sequence(b) * b, "CUDA graph", 1000 * b, b * MIB)
        if b <= room
        else BatchPoint(b, False, note=f"does not fit: room for {room} sequences at this depth")
        for b in batches
    ]


def h200_like(attention_room: int = 30, state_room: int = 3900) -> BatchResult:
    """A sweep shaped like the large preset's on a 141 GB card: full attention runs out of room
    before batch 64, the fixed state does not."""
    return BatchResult(
        "large",
        "NVIDIA H200",
        16384,
        139 * GIB,
        [
            BatchSeries("attention", "full attention", 16384, 16 * GIB, 4 * GIB, attention_room,
                        _points(lambda b: 80 / (1 + 0.5 * b), attention_room)),
            BatchSeries("state", "fixed state", 16384, 16 * GIB, 32 * MIB, state_room,
                        _points(lambda b: 200 / (1 + 0.02 * b), state_room)),
        ],
    )  # fmt: skip


def _context() -> ContextResult:
    points = [DepthPoint(d, 100.0, 1.0, [99.0, 101.0], 64 * d, 0, 1000 + 64 * d, 200.0) for d in (0, 512)]
    return ContextResult(
        "tiny", "cpu (test)", "float32", None, 1e10, 1e9, [Series("fixed state", 1, 2, 2, points)]
    )


# --- stored with the run ---------------------------------------------------------------------------


def test_a_stored_batch_sweep_reads_back_field_by_field():
    sweep = h200_like()
    last_run.save(_context(), batch=sweep)
    stored, note = last_run.load()
    assert note is None and stored.batch == sweep  # every series, point and note, typed
    assert isinstance(stored.batch.series[0].points[0], BatchPoint)


def test_the_cli_json_batch_part_reads_back_too():
    assert last_run.batch_from_dict(json.loads(json.dumps(h200_like().to_dict()))) == h200_like()


def test_an_older_stored_run_without_a_batch_sweep_still_loads():
    last_run.save(_context())
    data = json.loads(last_run.path().read_text(encoding="utf-8"))
    del data["batch"]  # as files written before the batch sweep existed
    last_run.path().write_text(json.dumps(data), encoding="utf-8")
    stored, note = last_run.load()
    assert note is None and stored.context is not None and stored.batch is None


def test_the_batch_sweep_follows_its_context_run():
    last_run.save(_context(), batch=h200_like())
    from core.gpu.suites.moe_bench import MoeResult

    last_run.save(moe=MoeResult("tiny", "cpu (test)", "float32", 64, 1e10, []))  # another benchmark keeps it
    assert last_run.load()[0].batch == h200_like()
    last_run.save(_context())  # a new context run without one: the old sweep is not passed off as its own
    assert last_run.load()[0].batch is None


# --- what the page runs ------------------------------------------------------------------------------


def test_on_a_gpu_the_page_runs_check_7s_batches_at_16k_or_the_presets_deepest():
    for name in ("small", "large"):
        plan = jobs.batch_plan(PRESETS[name], on_cuda=True)
        assert plan.batches == BATCHES == (1, 4, 16, 64) and plan.depth == BATCH_DEPTH == 16384
    assert jobs.batch_plan(PRESETS["tiny"], on_cuda=True).depth == max(PRESETS["tiny"].depths)


def test_on_a_cpu_the_batch_sweep_is_small_and_capped():
    cpu = PRESETS["cpu"]
    plan = jobs.batch_plan(cpu, on_cuda=False)
    assert max(plan.batches) <= 16 and plan.depth <= 2048 and plan.preset.depth_seconds <= 3.0
    biggest = max(plan.batches) * per_sequence_bytes("attention", cpu, plan.depth, 4)
    assert biggest <= 256 * MIB  # the largest full-attention batch's cache: a fraction of a second to read
    assert plan.preset.name == cpu.name and plan.preset.depths == cpu.depths


@pytest.fixture
def trimmed_tiny(monkeypatch):
    tiny = dataclasses.replace(
        PRESETS["tiny"], depths=(0, 512), repeats=2, n_steps=4, copy_bytes=1024**2, depth_seconds=2.0
    )
    monkeypatch.setitem(PRESETS, "tiny", tiny)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield tiny
    torch.set_num_threads(threads)


def test_the_page_run_brings_its_batch_sweep(trimmed_tiny):
    seen = []
    result = jobs.context_benchmark("tiny", device="cpu", progress=lambda f, m: seen.append((f, m)))
    assert result.context is not None and not result.context.stopped
    batch = result.batch
    assert batch is not None and batch.depth == 512 and batch.preset == "tiny"
    assert [s.kind for s in batch.series] == ["attention", "state"]
    for s in batch.series:
        assert [p.batch for p in s.points] == list(jobs.CPU_BATCHES) and all(p.fits for p in s.points)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0  # one bar, forward only
    assert any("batch 16" in m for _, m in seen)


def test_a_stopped_context_sweep_runs_no_batch_sweep(trimmed_tiny):
    result = jobs.context_benchmark("tiny", device="cpu", should_stop=lambda: True)
    assert result.context.stopped and result.batch is None


# --- the figure ---------------------------------------------------------------------------------------


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_the_figure_draws_the_sweeps_own_numbers():
    sweep = h200_like()
    fig = batch_figure(sweep, "t")
    for s in sweep.series:
        timed = [p for p in s.points if p.fits]
        total, each = _trace(fig, f"{s.model}: in total"), _trace(fig, f"{s.model}: per sequence")
        assert list(total.x) == list(each.x) == [p.batch for p in timed]
        assert list(total.y) == [p.tokens_per_s_total for p in timed]
        assert list(each.y) == [p.tokens_per_s_per_sequence for p in timed]
        assert total.yaxis == "y" and each.yaxis == "y2"  # in total above, per sequence below
    assert fig.layout.xaxis2.type == "log" and "batch" in fig.layout.xaxis2.title.text
    assert "tokens per second" in fig.layout.yaxis.title.text and "in total" in fig.layout.yaxis.title.text
    assert "per sequence" in fig.layout.yaxis2.title.text


def test_the_largest_batch_that_fits_is_marked():
    fig = batch_figure(h200_like(attention_room=30, state_room=3900))
    assert [(s.x0, s.x1) for s in fig.layout.shapes] == [(30, 30)]  # full attention's, in the chart
    low, high = fig.layout.xaxis2.range
    assert 10**low < 1 and 10**high > 64 and 30 in fig.layout.xaxis2.tickvals
    (note,) = [a.text for a in fig.layout.annotations]
    assert note.split("<br>") == [
        "full attention: at most 30 fit (dotted line)",
        "fixed state: 3,900 fit (past the right edge)",  # too far to draw: named, not drawn
    ]
    assert (
        fig.layout.annotations[0].yanchor == "bottom" and fig.layout.annotations[0].y == 1
    )  # above the plot


def test_a_largest_batch_a_little_past_the_last_timed_one_widens_the_chart():
    fig = batch_figure(h200_like(attention_room=100))
    assert [s.x0 for s in fig.layout.shapes] == [100] and 10 ** fig.layout.xaxis2.range[1] > 100


def test_a_model_with_no_room_at_all_says_so():
    fig = batch_figure(h200_like(attention_room=0))
    assert not fig.layout.shapes
    assert "full attention: not even one fits" in fig.layout.annotations[0].text
    assert not list(_trace(fig, "full attention: in total").x)


def test_the_chart_words_name_the_axes_series_and_marks():
    words = describe(batch_figure(h200_like(), "Speed against batch"))
    assert "across: batch" in words and "up: tokens per second" in words
    assert "fixed state: in total: 4 points" in words and "full attention: in total: 3 points" in words
    assert "1 vertical line at x = 30" in words and "at most 30 fit" in words


# --- the sentence --------------------------------------------------------------------------------------


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:,\d{3})*(?:\.\d+)?", text)


def test_the_sentence_compares_at_the_largest_batch_both_ran():
    sweep = h200_like(attention_room=30)
    attention, state = sweep.series
    text = batch_sentence(sweep)
    s64 = state.points[3].tokens_per_s_total
    s16, a16 = state.points[2].tokens_per_s_total, attention.points[2].tokens_per_s_total
    assert text.startswith(f"At batch 64 the fixed state wrote {rate(s64)} tokens/s in total")
    assert "full attention did not run there" in text
    assert f"At batch 16, the largest both ran, the fixed state wrote {rate(s16)} tokens/s" in text
    assert f"{times(s16 / a16)} full attention's {rate(a16)}" in text
    assert f"full attention fits at most 30 sequences at depth {format_context(16384)}" in text
    assert (
        f"{format_bytes(4 * GIB)} of cache each" in text and f"fits 3,900 ({format_bytes(32 * MIB)}" in text
    )
    assert "NVIDIA H200" in text
    # every number in it is one of the sweep's (the device's name aside)
    sizes = ("4.0", "32.0", "16")  # 4.0 GiB, 32.0 MiB, 16K
    expected = {"64", "16", "30", "3,900", rate(s64), rate(s16), rate(a16), times(s16 / a16)[:-1], *sizes}
    assert set(_numbers(text.replace("NVIDIA H200", ""))) <= expected


def test_where_both_ran_at_the_top_the_sentence_says_it_once():
    sweep = h200_like(attention_room=100)
    attention, state = sweep.series
    summary = summarise(sweep)
    assert summary.state_batch == summary.compared_batch == 64
    assert summary.ratio == pytest.approx(
        state.points[3].tokens_per_s_total / attention.points[3].tokens_per_s_total
    )
    text = summary.sentence()
    assert (
        f"in total, {times(summary.ratio)} full attention's {rate(attention.points[3].tokens_per_s_total)}."
        in text
    )
    assert "did not run" not in text and "at most 100 sequences" in text


def test_no_sentence_without_a_timed_fixed_state():
    sweep = h200_like()
    stopped = dataclasses.replace(sweep, series=[sweep.series[0]], stopped=True)
    assert batch_sentence(stopped) is None
    assert "ran at none of these batches" in batch_sentence(h200_like(attention_room=0))
    assert "not even one sequence" in batch_sentence(h200_like(attention_room=0))


def test_the_released_pairs_sentence_names_both_models_and_the_planners_figures():
    from core.gpu.decode.pair_shapes import PAIR_WORDS

    sweep = h200_like(attention_room=48, state_room=197)
    for s, planner in zip(sweep.series, (48, 195), strict=True):
        s.model, s.planner_max_batch = PAIR_WORDS[s.kind], planner
    sweep = dataclasses.replace(sweep, pair="released")
    text = batch_sentence(sweep)
    attention, state = sweep.series
    s64, s16, a16 = (p.tokens_per_s_total for p in (state.points[3], state.points[2], attention.points[2]))
    assert text.startswith(
        f"At batch 64 the hybrid (Qwen3.5-9B's shapes) wrote {rate(s64)} tokens/s in total"
    )
    assert (
        f"the hybrid wrote {rate(s16)} tokens/s in total, {times(s16 / a16)} the dense model's {rate(a16)}"
        in text
    )
    assert "the dense model fits 48 sequences" in text and "the hybrid 197" in text
    assert text.endswith("the planner, asked about the same shapes and memory, says 48 and 195.")
    assert "fixed state" not in text and "full attention" not in text
