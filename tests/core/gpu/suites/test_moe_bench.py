"""Dense vs MoE: the dense twin can be timed again right after the MoE (a drift in the card's clocks or
power between the two is then seen, not taken for the MoE's doing); idle power is read after a rest;
out of memory while the MoE model is built, or a counter going backwards, is a result, not a failure."""

from __future__ import annotations

import dataclasses

import pytest

from core.figures.gpu import moe_figure
from core.gpu.device.energy import EnergyMeter
from core.gpu.output import export, report
from core.gpu.presets import PRESETS
from core.gpu.serving import last_run
from core.gpu.suites import moe_bench
from core.gpu.suites.moe_bench import DENSE_AGAIN, run_moe
from core.gpu.timing import bandwidth
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.bench_env import make_env
from tests.core.gpu.suites.failing_builds import out_of_memory_building

TINY = dataclasses.replace(PRESETS["tiny"], depth_seconds=2.0, n_steps=4, repeats=2)
TINY_PRESET = PRESETS["tiny"]  # the preset as shipped: 16 steps, 3 repetitions
SHORT_TINY = dataclasses.replace(PRESETS["tiny"], depths=(0, 256, 512), repeats=2, n_steps=4)
BW = bandwidth.Bandwidth(1e10, 1e9, "test")
pytestmark = pytest.mark.usefixtures("one_thread")


def _run(retime: bool):
    env = make_env("cpu")
    try:
        return run_moe(TINY, env, Bandwidth(1e10, 1e9, "test"), retime_dense=retime)
    finally:
        env.close()


def test_the_dense_twin_is_timed_again_after_the_moe_and_kept_apart_from_the_two_rows():
    result = _run(True)
    assert [r.model for r in result.rows] == ["dense", "experts (MoE)"]
    again = result.dense_again
    assert again is not None and again.model == DENSE_AGAIN
    assert again.tokens_per_s > 0 and again.total_params == result.rows[0].total_params
    back = last_run.moe_from_dict(result.to_dict())  # what the page reads back
    assert back.dense_again == again


def test_without_the_option_the_dense_twin_runs_once():
    result = _run(False)
    assert len(result.rows) == 2 and result.dense_again is None


def test_idle_is_read_after_a_rest(env):
    events = []
    meter = EnergyMeter(lambda: 1e6, lambda: 30.0, interval_s=0.01)
    meter.begin = lambda real=meter.begin: (events.append("idle window"), real())[1]
    preset = dataclasses.replace(TINY_PRESET, idle_seconds=0.05, rest_seconds=0.1, energy_seconds=0.01)

    def progress(fraction, message):
        events.append(message)

    result = moe_bench.run_moe(
        preset, env, bandwidth.Bandwidth(1e10, 1e9, "t"), progress=progress, meter=meter
    )
    first = events.index("idle window")
    assert any(m.startswith("resting") for m in events[:first])  # the rest comes before the idle window
    assert result.idle_watts == pytest.approx(30.0)


def test_out_of_memory_while_building_an_moe_model_is_a_result(env, monkeypatch):
    monkeypatch.setattr(moe_bench, "build", out_of_memory_building(moe_bench, lambda k, f: f == "moe"))
    result = moe_bench.run_moe(SHORT_TINY, env, BW)
    dense, moe = result.rows
    assert dense.tokens_per_s > 0 and dense.oom_message is None
    assert "while building the model" in moe.oom_message and moe.predicted_tokens_per_s > 0
    assert (
        report.moe_rows(result) and moe_figure(result).data and "out of memory" in export.to_csv(None, result)
    )


def test_a_counter_going_backwards_at_any_read_never_stops_the_benchmark(env):
    counter = iter(range(10_000_000, 0, -1_000))  # every read lower than the one before
    meter = EnergyMeter(lambda: float(next(counter)), lambda: 60.0, interval_s=0.01)
    preset = dataclasses.replace(SHORT_TINY, idle_seconds=0.05, rest_seconds=0.0, energy_seconds=0.05)
    result = moe_bench.run_moe(preset, env, BW, meter=meter)  # idle window and both energy windows
    assert result.idle_watts == pytest.approx(60.0)
    for row in result.rows:
        assert row.tokens_per_s > 0 and row.avg_watts == pytest.approx(60.0)
        assert "sampled power" in row.energy_method and "went backwards" in row.energy_method
