"""The worked example's two computed captions (issue 42, item 8): the spread of the copies behind its
bandwidth, and where a step's time over its ceiling goes — the empty-cache step (depth 0) bounds the fixed
work; what is left of the gap grows with the cache. Every number follows the run."""

from __future__ import annotations

import pytest

from core.gpu.output.report import percent
from core.gpu.output.result import context_from_dict
from core.gpu.output.worked_example import overhead, worked_example
from core.gpu.suites.context_bench import ContextResult, DepthPoint, Series

MIB = 1024**2
BW = 20e9  # main memory, bytes/s: the readings' median
EMPTY, DEEP = 12 * MIB, 100 * MIB  # bytes one step reads at depth 0 and at depth 4,096


def _run(empty_tps: float, deep_tps: float = 70.0, device: str = "CPU (test)", **kw) -> ContextResult:
    def point(depth: int, nbytes: int, tps: float, spilled: int = 0) -> DepthPoint:
        return DepthPoint(depth, tps, 1.0, [tps], depth * 1024, spilled, nbytes, BW / nbytes)

    points = [point(0, EMPTY, empty_tps, kw.pop("empty_spilled", 0)), point(4096, DEEP, deep_tps)]
    attention = Series("full attention", 1, 1, 1, points)
    return ContextResult(
        "cpu", device, "float32", None, BW, BW / 2, [attention], copy_bytes=128 * MIB,
        **{"bandwidth_samples": [18e9, BW, 25e9], **kw},
    )  # fmt: skip


def _expected(empty_tps: float, deep_tps: float = 70.0) -> tuple[float, float, float]:
    """(fixed ms, gap ms, share) by hand: measured − ceiling at depth 0, then at depth 4,096."""
    fixed = max(0.0, 1e3 / empty_tps - 1e3 * EMPTY / BW)
    gap = 1e3 / deep_tps - 1e3 * DEEP / BW
    return fixed, gap, min(1.0, fixed / gap)


@pytest.mark.parametrize("empty_tps", [900.0, 300.0])
def test_the_overhead_caption_follows_the_run(empty_tps):
    run = _run(empty_tps)
    split = overhead(run, worked_example(run))
    fixed, gap, share = _expected(empty_tps)
    assert (split.depth, split.fixed_ms, split.gap_ms, split.share) == (
        4096,
        pytest.approx(fixed),
        pytest.approx(gap),
        pytest.approx(share),
    )
    assert split.rest_ms == pytest.approx(gap - fixed)
    words = split.sentence()
    assert f"a step took {1e3 / empty_tps:.3g} ms, {fixed:.3g} ms more than reading its bytes needs" in words
    assert f"At depth 4,096 a step takes {gap:.3g} ms more than its ceiling" in words
    assert f"the fixed work explains {percent(share, 1.0)} of that gap" in words
    assert f"the other {gap - fixed:.3g} ms grows with the cache" in words
    assert "on a CPU, mostly Python" in words
    assert split.short_sentence() == (
        f"At depth 4,096, {percent(share, 1.0)} of the time a step takes over its ceiling is fixed work every "
        "step does; the rest grows with the cache."
    )


def test_two_runs_give_two_sentences():
    one, other = (overhead(r, worked_example(r)).sentence() for r in (_run(900.0), _run(300.0)))
    assert one != other
    assert len({overhead(r, worked_example(r)).short_sentence() for r in (_run(900.0), _run(300.0))}) == 2
    assert percent(_expected(900.0)[2], 1.0) in one and percent(_expected(300.0)[2], 1.0) in other


def test_fixed_work_larger_than_the_gap_explains_all_of_it():
    run = _run(100.0)  # 10 ms a step with an empty cache, more than the 9 ms gap at depth 4,096
    split = overhead(run, worked_example(run))
    assert split.share == 1.0 and split.rest_ms == 0.0
    assert split.sentence().endswith("ceiling, and that fixed work explains all of it.")
    assert split.short_sentence().startswith("At depth 4,096, all the time a step takes over its ceiling")


def test_a_gpu_names_its_own_fixed_work():
    run = _run(900.0, device="NVIDIA H200")
    assert (
        "on a GPU, mostly starting the step's many small calculations"
        in overhead(run, worked_example(run)).sentence()
    )


def test_no_caption_without_an_empty_cache_step_a_gap_or_an_example():
    assert overhead(None, None) is None
    spilled = _run(900.0, empty_spilled=MIB)  # depth 0 read over a host link: it bounds nothing
    assert overhead(spilled, worked_example(spilled)) is None
    at_ceiling = _run(900.0, deep_tps=BW / DEEP * 1.01)  # timing noise above the roofline: no gap to split
    assert overhead(at_ceiling, worked_example(at_ceiling)) is None
    only_empty = _run(900.0)
    only_empty.series[0].points = only_empty.series[0].points[:1]
    example = worked_example(only_empty)
    assert example.depth == 0 and overhead(only_empty, example) is None  # depth 0 is the fixed work itself


def test_the_spread_caption_names_the_copies_behind_the_bandwidth():
    run = _run(900.0)
    words = worked_example(run).spread_sentence()
    assert "median of 3 copies of a 128.0 MiB buffer, far larger than the CPU's caches" in words
    assert "ranged from 18,000 to 25,000 MB/s" in words
    cached = _run(900.0, llc_bytes=200 * MIB, llc_bytes_per_s=80e9, llc_samples=[60e9, 80e9, 90e9, 81e9])
    example = worked_example(cached)
    assert example.from_cache and example.bandwidth_bytes_per_s == 80e9
    assert "median of 4 copies of buffers that fit in the cache" in example.spread_sentence()
    assert "ranged from 60,000 to 90,000 MB/s" in example.spread_sentence()
    old = _run(900.0, bandwidth_samples=[])  # a run stored before the readings were kept
    assert worked_example(old).spread_sentence() is None


def test_the_readings_survive_the_runs_json():
    run = _run(900.0, llc_bytes=32 * MIB, llc_bytes_per_s=80e9, llc_samples=[70e9, 80e9])
    back = context_from_dict(run.to_dict())
    assert back == run and back.bandwidth().spread().count == 3
