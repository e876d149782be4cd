"""What a benchmark keeps as a result instead of failing: out of memory while a model is built, an
energy counter that goes backwards, and a spill that would pin more host RAM than is safe."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from core.figures.gpu import context_speed_figure, moe_figure
from core.gpu import context_bench, export, moe_bench, report, spill, timing
from core.gpu.energy import EnergyMeter
from core.gpu.presets import PRESETS
from tests.fake_nvml import FakeNvml

TINY = dataclasses.replace(PRESETS["tiny"], depths=(0, 256, 512), repeats=2, n_steps=4)
BW = timing.Bandwidth(1e10, 1e9, "test")
GIB = 1024**3
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def env():
    return timing.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))


def _out_of_memory_building(module, when):
    """Make `module.build` run out of memory for the models `when(kind, ffn)` picks (not on 'meta')."""
    real = module.build

    def build(kind, preset, device, dtype, ffn="dense"):
        if str(device) != "meta" and when(kind, ffn):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 9.00 GiB (simulated)")
        return real(kind, preset, device, dtype, ffn=ffn)

    return build


def test_out_of_memory_while_building_a_context_model_is_a_result(env, monkeypatch):
    monkeypatch.setattr(
        context_bench, "build", _out_of_memory_building(context_bench, lambda k, f: k == "attention")
    )
    result = context_bench.run_context(TINY, env, BW)
    attention, state = result.series
    assert attention.points == [] and attention.oom_depth == 0
    assert "while building the model" in attention.oom_message and "simulated" in attention.oom_message
    assert attention.total_params > 0  # sizes from a 'meta' copy of the model
    assert [p.depth for p in state.points] == list(TINY.depths)  # the next series still ran
    assert "out of memory" in export.to_csv(result)
    assert report.context_rows(result) and context_speed_figure(result).data


def test_out_of_memory_while_building_an_moe_model_is_a_result(env, monkeypatch):
    monkeypatch.setattr(moe_bench, "build", _out_of_memory_building(moe_bench, lambda k, f: f == "moe"))
    result = moe_bench.run_moe(TINY, env, BW)
    dense, moe = result.rows
    assert dense.tokens_per_s > 0 and dense.oom_message is None
    assert "while building the model" in moe.oom_message and moe.predicted_tokens_per_s > 0
    assert (
        report.moe_rows(result) and moe_figure(result).data and "out of memory" in export.to_csv(None, result)
    )


def test_other_errors_while_building_are_raised(env, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("a real bug")

    monkeypatch.setattr(context_bench, "build", broken)
    with pytest.raises(ValueError):
        context_bench.run_context(TINY, env, BW)


def test_a_counter_going_backwards_at_any_read_never_stops_the_benchmark(env):
    counter = iter(range(10_000_000, 0, -1_000))  # every read lower than the one before
    meter = EnergyMeter(lambda: float(next(counter)), lambda: 60.0, interval_s=0.01)
    preset = dataclasses.replace(TINY, idle_seconds=0.05, rest_seconds=0.0, energy_seconds=0.05)
    result = moe_bench.run_moe(preset, env, BW, meter=meter)  # idle window and both energy windows
    assert result.idle_watts == pytest.approx(60.0)
    for row in result.rows:
        assert row.tokens_per_s > 0 and row.avg_watts == pytest.approx(60.0)
        assert "sampled power" in row.energy_method and "went backwards" in row.energy_method


def test_never_more_than_a_safe_share_of_free_host_ram_is_pinned():
    assert not spill.check_host(10 * GIB, 16 * GIB).fits  # 6 GiB would still be left, but that is over half
    assert spill.check_host(8 * GIB, 16 * GIB).fits
    assert spill.check_host(1 * GIB, 3 * GIB).allowed_bytes == 1 * GIB  # the 2 GiB margin binds first
    small = spill.check_host(1 * GIB, 2 * GIB)
    assert not small.fits and small.allowed_bytes == 0
    assert "safely spare" in small.message and "larger budget" in small.message
    assert spill.pinnable_bytes(2 * GIB, 3 * GIB) == 1 * GIB  # the copy test's pinned buffer shrinks
    assert spill.pinnable_bytes(64 * 1024**2, 64 * GIB) == 64 * 1024**2


def test_a_spill_over_the_safe_share_is_refused_before_allocating(env, monkeypatch):
    allocated = []
    real = context_bench.build

    def build(*args, **kwargs):
        model = real(*args, **kwargs)
        model.allocate = lambda *a, **k: allocated.append(a)
        return model

    monkeypatch.setattr(context_bench, "build", build)
    monkeypatch.setattr(spill, "host_available_bytes", lambda: spill.HOST_MARGIN_BYTES + 1)  # 1 byte to spare
    result = context_bench.run_context(TINY, env, BW, 1, kinds=("attention",))  # the whole cache spills
    series = result.series[0]
    assert series.points == [] and series.oom_depth == 0 and allocated == []
    assert series.oom_message.startswith("not run:") and "safely spare" in series.oom_message
