"""The copy-speed probe of "Measure this machine" (issue 42, item 8): a buffer sized from the machine, far
beyond its last-level cache; the median of several copies, every reading kept for the page's spread."""

from __future__ import annotations

import dataclasses
import math

import pytest

from core.gpu.output.result import bandwidth_from_dict
from core.gpu.timing import bandwidth, bench_env
from core.gpu.timing.spread import Spread, spread_of

MIB = 1024**2
GIB = 1024**3


# -- the statistics -------------------------------------------------------------------------------


def test_the_spread_is_the_median_and_the_range_of_the_readings():
    s = spread_of([16.8e9, 101e9, 58.9e9, 20.0e9, 17.5e9])
    assert s == Spread(median=20.0e9, low=16.8e9, high=101e9, count=5)
    assert s.relative == pytest.approx((101e9 - 16.8e9) / 20.0e9)
    assert spread_of([4.0, 2.0]).median == 3.0  # an even count: the mean of the middle two
    assert spread_of([7.0]).relative == 0.0


@pytest.mark.parametrize("bad", [[], [1.0, 0.0], [1.0, -2.0], [math.nan], [math.inf, 1.0]])
def test_the_spread_of_no_reading_or_of_a_reading_that_is_not_a_speed_is_refused(bad):
    with pytest.raises(ValueError):
        spread_of(bad)


# -- the buffer, sized from the machine -----------------------------------------------------------


def test_the_cpu_buffer_is_four_caches_or_512_mib_and_never_more_than_an_eighth_of_free_memory():
    assert bandwidth.cpu_copy_bytes(64 * MIB, 32 * MIB, 20 * GIB) == 128 * MIB  # 4 × a 32 MiB cache
    assert bandwidth.cpu_copy_bytes(1 * GIB, 32 * MIB, 20 * GIB) == 1 * GIB  # a bigger request stands
    assert bandwidth.cpu_copy_bytes(16 * MIB, None, 20 * GIB) == 512 * MIB  # the cache size unknown
    assert bandwidth.cpu_copy_bytes(16 * MIB, None, None) == 512 * MIB  # free memory unknown: no cap
    assert bandwidth.cpu_copy_bytes(16 * MIB, 32 * MIB, 512 * MIB) == 64 * MIB  # 1/8 of what is free
    assert bandwidth.cpu_copy_bytes(16 * MIB, 32 * MIB, 2 * MIB) == MIB  # never below 1 MiB


@pytest.mark.parametrize("requested, llc", [(0, 32 * MIB), (-1, None), (MIB, -5)])
def test_a_buffer_of_no_bytes_or_a_negative_cache_is_refused(requested, llc):
    with pytest.raises(ValueError):
        bandwidth.cpu_copy_bytes(requested, llc, GIB)


# -- the probe, on fake timings -------------------------------------------------------------------


def test_each_timed_run_is_one_reading_and_the_warm_up_is_not_timed(monkeypatch):
    clock = iter([0.0, 0.004, 1.0, 1.001])  # run 1: 4 ms; run 2: 1 ms
    monkeypatch.setattr(bandwidth.time, "perf_counter", lambda: next(clock))
    copies = []
    rates = bandwidth._rates(lambda: copies.append(1), lambda: None, unit_bytes=1e6, repeats=2)
    assert len(copies) == 1 + 2 and rates == [pytest.approx(1e6 / 0.004), pytest.approx(1e6 / 0.001)]


def test_the_probe_reports_the_median_of_its_readings_and_keeps_every_one(monkeypatch):
    """Seven readings of the main-memory copy at 1…7 GB/s, of the cache's at 10…70 GB/s: each speed is
    the median (the 4th), not the best; the buffer is 4 × a 32 MiB cache; the readings survive the JSON."""
    calls = []

    def fake_rates(fn, sync, unit_bytes, repeats):
        calls.append(unit_bytes)
        scale = 1e9 if len(calls) == 1 else 10e9  # the main-memory copy first, then the cache's
        return [k * scale for k in (3, 1, 7, 4, 2, 6, 5)[:repeats]]

    monkeypatch.setattr(bandwidth, "_rates", fake_rates)
    monkeypatch.setattr(bandwidth, "last_level_cache_bytes", lambda: 32 * MIB)
    monkeypatch.setattr(bandwidth.spill, "host_available_bytes", lambda: 20 * GIB)
    bw = bandwidth.measure_copy_bandwidth(bench_env.make_env("cpu"), 16 * MIB)
    assert calls == [2 * 128 * MIB, 2 * 8 * 8 * MIB]  # raised from 16 MiB; a quarter of the cache, 8 copies
    assert bw.copy_bytes == 128 * MIB and len(bw.samples_bytes_per_s) == bandwidth.REPEATS == 7
    assert bw.device_bytes_per_s == 4e9 and bw.link_bytes_per_s == 2e9  # the median reading, not the best
    assert bw.spread() == Spread(4e9, 1e9, 7e9, 7)
    assert bw.llc_bytes_per_s == 40e9 and bw.spread(1 * MIB) == Spread(40e9, 10e9, 70e9, 7)
    assert bw.spread(64 * MIB).median == bw.device_bytes_per_s  # a step past the cache: main memory's
    assert bandwidth_from_dict(dataclasses.asdict(bw)) == bw


def test_measuring_here_keeps_seven_readings_of_a_buffer_past_the_cache():
    bw = bandwidth.measure_copy_bandwidth(bench_env.make_env("cpu"), MIB)
    assert len(bw.samples_bytes_per_s) == 7 and bw.copy_bytes >= MIB
    cache = bandwidth.last_level_cache_bytes()
    assert (
        bw.copy_bytes > MIB if cache else bw.copy_bytes >= MIB
    )  # raised past the cache (unless memory is short)
    assert bw.spread().low <= bw.device_bytes_per_s <= bw.spread().high


def test_a_speed_with_no_readings_has_no_spread():
    assert bandwidth.Bandwidth(1e10, 1e9, "spec").spread() is None
