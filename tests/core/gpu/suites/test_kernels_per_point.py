"""Kernels beside bytes in the context, MoE and batch suites: every measured point keeps the operations one
step ran (counted once a point, after its timed steps) and the floor they set beside its bytes' floor, in
the typed result, its JSON, the CSV, the CLI's summary and the page's floor table; runs written before the
count (the committed ones) still read, print and show, with no floor table."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest
import torch

from core.gpu.output import export, report, summary
from core.gpu.output.result import SuiteResult, batch_from_dict, context_from_dict, moe_from_dict
from core.gpu.presets import PRESETS
from core.gpu.suites import batch_bench, context_bench, moe_bench
from core.gpu.timing import bandwidth, kernels
from core.i18n import use_language
from core.plan.latency import KERNEL_FLOOR_S

TINY = dataclasses.replace(PRESETS["tiny"], depths=(0, 256), repeats=2, n_steps=4, depth_seconds=2.0)
BW = bandwidth.Bandwidth(1e10, 1e9, "test")
RUNS = Path(__file__).resolve().parents[4] / "docs" / "gpu-runs"
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def counted(env):
    """One tiny CPU run of each suite, with every call of the profiler counted."""
    calls = []
    real = kernels.count_step

    def counting(step, device):
        calls.append(1)
        return real(step, device)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors on a shared machine: one thread is faster and steadier
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(kernels, "count_step", counting)
            context = context_bench.run_context(TINY, env, BW)
            after_context = len(calls)
            moe = moe_bench.run_moe(TINY, env, BW)
            batch = batch_bench.run_batch(TINY, env, batches=(1, 2), depth=64, bandwidth=BW)
    finally:
        torch.set_num_threads(threads)
    return context, moe, batch, after_context, len(calls)


def _points(context, moe, batch):
    """(layers of its model, point) for every measured point of the three suites."""
    return (
        [(TINY.n_layers, p) for s in context.series for p in s.points]
        + [(TINY.n_layers, r) for r in moe.rows]
        + [(TINY.pair_layers, p) for s in batch.series for p in s.points if p.fits]
    )


def test_every_point_counts_its_operations_once_outside_the_timed_steps(counted):
    context, moe, batch, after_context, calls = counted
    points = _points(context, moe, batch)
    assert after_context == sum(len(s.points) for s in context.series) == 2 * len(TINY.depths)
    assert calls == len(points) == 4 + 2 + 4  # one profiled step a point: not one a timed step
    for layers, p in points:
        assert p.kernels_counted == kernels.CPU_OPS
        # plausible: a handful of aten ops a layer at the least (norm, projections, the mix), not thousands
        assert 10 * layers <= p.kernels_per_step <= 150 * layers, (p.kernels_per_step, layers)


def test_the_floors_are_the_count_times_the_planners_floor_and_the_bytes_over_the_bandwidth(counted):
    context, moe, batch, *_ = counted
    for _layers, p in _points(context, moe, batch):
        assert p.kernel_floor_s == pytest.approx(p.kernels_per_step * KERNEL_FLOOR_S)
        assert p.kernel_bound == (p.kernel_floor_s > p.bytes_floor_s)
    for s in context.series:
        for p in s.points:
            assert p.bytes_floor_s == pytest.approx(1 / p.predicted_tokens_per_s)
    for s in batch.series:
        for p in s.points:
            assert p.bytes_floor_s == pytest.approx(p.bytes_per_step / BW.for_reading(p.bytes_per_step))
    # the MoE's experts are more operations than the dense feed-forward they replace
    dense, experts = moe.rows
    assert experts.kernels_per_step > dense.kernels_per_step


def test_the_json_carries_both_floors_and_reads_back_equal(counted):
    context, moe, batch, *_ = counted
    written = {"context": context.to_dict(), "moe": moe.to_dict(), "batch": batch.to_dict()}
    point = written["context"]["series"][0]["points"][0]
    row = written["moe"]["rows"][1]
    batched = written["batch"]["series"][1]["points"][0]
    for p, typed in (
        (point, context.series[0].points[0]),
        (row, moe.rows[1]),
        (batched, batch.series[1].points[0]),
    ):
        assert p["kernels_per_step"] == typed.kernels_per_step and p["kernels_counted"] == kernels.CPU_OPS
        assert p["kernel_floor_ms"] == pytest.approx(1000 * p["kernels_per_step"] * KERNEL_FLOOR_S)
        assert p["bytes_floor_ms"] == pytest.approx(1000 * typed.bytes_floor_s)
    assert context_from_dict(json.loads(json.dumps(written["context"]))) == context
    assert moe_from_dict(json.loads(json.dumps(written["moe"]))) == moe
    assert batch_from_dict(json.loads(json.dumps(written["batch"]))) == batch


def test_the_csv_the_summary_and_the_floor_table_show_them(counted, capsys):
    context, moe, batch, *_ = counted
    rows = list(csv.DictReader(io.StringIO(export.to_csv(context, moe, batch))))
    assert {r["benchmark"] for r in rows} == {"context", "dense vs MoE", "batch"}
    for r in rows:
        assert float(r["kernel_floor_ms"]) == pytest.approx(
            float(r["kernels_per_step"]) * KERNEL_FLOOR_S * 1000
        )
        assert float(r["bytes_floor_ms"]) > 0 and r["kernels_counted"] == kernels.CPU_OPS
    table = report.context_floor_rows(context)
    assert (
        len(table) == 4
        and table[0]["operations per step"] == f"{context.series[0].points[0].kernels_per_step:,.0f}"
    )
    assert len(report.moe_floor_rows(moe)) == 2 and len(report.batch_floor_rows(batch)) == 4
    higher = {r["higher floor"] for r in table}
    words = report.floors_words(p for s in context.series for p in s.points)
    bound = sum(p.kernel_bound for s in context.series for p in s.points)
    assert "aten ops (torch.profiler)" in words and "3 µs" in words
    assert ("At every point the kernel floor" in words) == (bound == 4) and higher <= {"kernels", "bytes"}
    print(summary.floors_text(moe.rows[0]))
    assert "ops/step (aten ops (torch.profiler)): kernel floor" in capsys.readouterr().out


def test_the_floor_table_reads_in_japanese(counted):
    context, *_ = counted
    points = [p for s in context.series for p in s.points]
    with use_language("ja"):
        words = report.floors_words(points)
        table = report.context_floor_rows(context)
    assert "カーネル" in words and "aten" in words and "µs" in words
    assert "カーネル" in "".join(table[0]) and table[0]["モデル"]


def test_the_words_say_when_only_some_points_are_kernel_bound():
    def point(kernels_per_step, predicted):
        return context_bench.DepthPoint(0, 1.0, 0.0, [1.0], 0, 0, 1, predicted, kernels_per_step=kernels_per_step,
                                        kernels_counted=kernels.GRAPH_NODES)  # fmt: skip

    slow_bytes, fast_bytes = (
        point(100, 100.0),
        point(100, 1e6),
    )  # bytes' floors 10 ms and 1 µs; kernels 0.3 ms
    assert not slow_bytes.kernel_bound and fast_bytes.kernel_bound
    assert "higher at 1 of 2 points" in report.floors_words([slow_bytes, fast_bytes])
    assert "the bytes set the pace" in report.floors_words([slow_bytes])
    assert report.floors_words([point(None, 1.0)]) is None
    assert "CUDA graph nodes" in report.floors_words([fast_bytes])


def test_how_a_count_was_made_is_marked_for_translation():
    assert report.KERNEL_COUNTS == (kernels.GRAPH_NODES, kernels.CUDA_KERNELS, kernels.CPU_OPS)


@pytest.mark.parametrize("file", sorted(RUNS.rglob("bench.json")), ids=lambda p: str(p.relative_to(RUNS)))
def test_a_run_written_before_the_count_still_reads_prints_and_shows(file, capsys):
    run = SuiteResult.from_json(file.read_text(encoding="utf-8"))
    points = [p for s in run.context.series for p in s.points] + run.moe.rows
    assert points and all(p.kernels_per_step is None and p.kernel_floor_s is None for p in points)
    assert not any(p.kernel_bound for p in points) and all(p.bytes_floor_s > 0 for p in points)
    assert report.context_floor_rows(run.context) == [] and report.moe_floor_rows(run.moe) == []
    assert report.floors_words(points) is None
    written = json.loads(run.to_json())
    assert written["context"]["series"][0]["points"][0]["kernel_floor_ms"] is None
    rows = list(csv.DictReader(io.StringIO(export.to_csv(run.context, run.moe, run.batch))))
    assert rows and all(r["kernels_per_step"] == "" == r["kernel_floor_ms"] for r in rows)
    summary.print_summary(run)
    assert "ops/step" not in capsys.readouterr().out
    assert report.context_rows(run.context) and report.moe_rows(run.moe)
