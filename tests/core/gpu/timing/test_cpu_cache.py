"""A CPU run's roofline has two speeds: a step whose bytes fit in the last-level cache reads them
from there (a tiny model's 12 MB beat a main-memory roofline by 30–50 % on a 2-core EPYC, so the
page showed "129 % of roofline"); a bigger step reads main memory."""

from __future__ import annotations

import pytest

from core.gpu.decode.traffic import Traffic
from core.gpu.output import report
from core.gpu.presets import PRESETS
from core.gpu.suites import context_bench, moe_bench
from core.gpu.suites.context_bench import predicted_tokens_per_s, traffic_tokens_per_s
from core.gpu.timing import bandwidth, bench_env, cpu_cache

MIB = 1024**2
CPU_BW = bandwidth.Bandwidth(40e9, 20e9, "memcpy", 40e9, llc_bytes=32 * MIB, llc_bytes_per_s=160e9)


def _cache_dir(root, entries):
    """A fake sysfs cache folder: one index<i>/ with level, type and size per entry."""
    for i, (level, kind, size) in enumerate(entries):
        index = root / f"index{i}"
        index.mkdir()
        (index / "level").write_text(f"{level}\n")
        (index / "type").write_text(f"{kind}\n")
        (index / "size").write_text(f"{size}\n")
    return root


def test_the_last_level_cache_is_the_outermost_data_cache(tmp_path):
    root = _cache_dir(
        tmp_path,
        [(1, "Data", "32K"), (1, "Instruction", "32K"), (2, "Unified", "1024K"), (3, "Unified", "32768K")],
    )
    assert cpu_cache.last_level_cache_bytes(root) == 32 * MIB


def test_a_machine_without_l3_uses_its_l2_and_sizes_in_megabytes_parse(tmp_path):
    root = _cache_dir(tmp_path, [(1, "Data", "48K"), (2, "Unified", "2M"), (3, "Instruction", "64M")])
    assert cpu_cache.last_level_cache_bytes(root) == 2 * MIB  # an instruction cache holds no weights


def test_unreadable_cache_files_give_none(tmp_path):
    assert cpu_cache.last_level_cache_bytes(tmp_path / "missing") is None
    root = _cache_dir(tmp_path, [(2, "Unified", "lots"), (3, "Unified", "")])  # odd, and empty
    assert cpu_cache.last_level_cache_bytes(root) is None


def test_a_step_that_fits_in_the_cache_gets_the_caches_speed():
    assert CPU_BW.for_reading(12 * MIB) == 160e9
    assert CPU_BW.for_reading(32 * MIB) == 160e9
    assert CPU_BW.for_reading(32 * MIB + 1) == 40e9
    assert bandwidth.Bandwidth(40e9, 20e9, "gpu").for_reading(1) == 40e9  # no cache figure: one speed
    slower = bandwidth.Bandwidth(40e9, 20e9, "odd", llc_bytes=32 * MIB, llc_bytes_per_s=10e9)
    assert slower.for_reading(MIB) == 40e9  # a ceiling takes the higher of the two


def test_both_rooflines_switch_speed_where_the_bytes_outgrow_the_cache():
    small, big = 12 * MIB, 48 * MIB
    assert predicted_tokens_per_s(small, 0, 0, None, CPU_BW) == pytest.approx(160e9 / small)
    assert predicted_tokens_per_s(big, 0, 0, None, CPU_BW) == pytest.approx(40e9 / big)
    assert traffic_tokens_per_s(Traffic(weights=small), CPU_BW) == pytest.approx(160e9 / small)
    assert traffic_tokens_per_s(Traffic(weights=small, cache_read=36 * MIB), CPU_BW) == pytest.approx(
        40e9 / big
    )


def test_the_prediction_before_a_run_drops_where_the_cache_stops_fitting():
    preset = PRESETS["cpu"]
    lines = context_bench.predict_context(preset, CPU_BW, None, elem_bytes=4)
    state = [tps for _, tps in lines["fixed state"]]
    attention = [tps for _, tps in lines["full attention"]]
    assert len(set(state)) == 1  # the fixed state fits at every depth: one speed, a flat line
    assert attention[0] == pytest.approx(state[0], rel=0.2)
    ratios = [a / b for a, b in zip(attention, attention[1:], strict=False)]
    assert max(ratios) > 2.5  # the drop: a smaller step at 160 GB/s, the next at 40 GB/s


def test_a_cpu_run_records_the_cache_it_was_held_to():
    env = bench_env.make_env("cpu")
    preset = PRESETS["cpu"]
    ctx = context_bench.run_context(preset, env, CPU_BW, kinds=("state",))
    assert (ctx.llc_bytes, ctx.llc_bytes_per_s) == (32 * MIB, 160e9)
    point = ctx.series[0].points[0]
    assert point.bytes_per_token <= 32 * MIB
    assert point.predicted_tokens_per_s == pytest.approx(160e9 / point.bytes_per_token)
    moe = moe_bench.run_moe(preset, env, CPU_BW, meter=None)
    assert (moe.llc_bytes, moe.llc_bytes_per_s) == (32 * MIB, 160e9)


def test_the_page_says_why_the_roofline_has_two_speeds():
    words = report.cache_ceiling_words(32 * MIB, 160e9, 40e9)
    assert "32.0 MiB last-level cache" in words and "160.0 GB/s" in words and "(40.0 GB/s)" in words
    assert words.endswith("Where the bytes outgrow the cache, the roofline drops.")
    assert report.cache_ceiling_words(32 * MIB, 160e9).endswith("a bigger step reads main memory.")
    assert report.cache_ceiling_words(None, None, 40e9) is None
    rows = report.device_rows(bench_env.make_env("cpu").snapshot, CPU_BW)
    shown = {row["what"]: row["value"] for row in rows}
    assert shown["Measured cache copy speed (32.0 MiB last-level cache)"] == "160.0 GB/s"


def test_measuring_on_this_cpu_fills_both_speeds_where_sysfs_says_the_cache():
    if cpu_cache.last_level_cache_bytes() is None:
        pytest.skip("this machine does not say its cache size")
    bw = bandwidth.measure_copy_bandwidth(bench_env.make_env("cpu"), 8 * MIB, repeats=2)
    assert bw.llc_bytes == cpu_cache.last_level_cache_bytes()
    assert bw.llc_bytes_per_s > 0 and bw.device_bytes_per_s > 0
