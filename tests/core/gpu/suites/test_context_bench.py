"""The context sweep keeps a result instead of failing: out of memory while a model is built, Stop
(the cache is always released) and the time cap of each depth; other errors are raised."""

from __future__ import annotations

import dataclasses

import pytest

from core.figures.gpu import context_speed_figure
from core.gpu.decode.models import AttentionDecoder
from core.gpu.output import export, report
from core.gpu.presets import PRESETS
from core.gpu.suites import context_bench
from core.gpu.timing import bandwidth
from tests.core.gpu.suites.failing_builds import out_of_memory_building

TINY = dataclasses.replace(PRESETS["tiny"], depths=(0, 256, 512), repeats=2, n_steps=4)
TINY_PRESET = PRESETS["tiny"]  # the preset as shipped: five depths, 16 steps, 3 repetitions
BW = bandwidth.Bandwidth(1e10, 1e9, "test")
pytestmark = pytest.mark.usefixtures("one_thread")


def test_out_of_memory_while_building_a_context_model_is_a_result(env, monkeypatch):
    monkeypatch.setattr(
        context_bench, "build", out_of_memory_building(context_bench, lambda k, f: k == "attention")
    )
    result = context_bench.run_context(TINY, env, BW)
    attention, state = result.series
    assert attention.points == [] and attention.oom_depth == 0
    assert "while building the model" in attention.oom_message and "simulated" in attention.oom_message
    assert attention.total_params > 0  # sizes from a 'meta' copy of the model
    assert [p.depth for p in state.points] == list(TINY.depths)  # the next series still ran
    assert "out of memory" in export.to_csv(result)
    assert report.context_rows(result) and context_speed_figure(result).data


def test_other_errors_while_building_are_raised(env, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("a real bug")

    monkeypatch.setattr(context_bench, "build", broken)
    with pytest.raises(ValueError):
        context_bench.run_context(TINY, env, BW)


@pytest.mark.parametrize("budget", [None, 1024**2])
def test_stop_always_releases_the_cache(env, monkeypatch, budget):
    released = []
    real = AttentionDecoder.release
    monkeypatch.setattr(AttentionDecoder, "release", lambda self: (released.append(1), real(self))[1])
    steps = []
    real_step = AttentionDecoder.step

    def step(self, token):
        steps.append(1)
        return real_step(self, token)

    monkeypatch.setattr(AttentionDecoder, "step", step)
    result = context_bench.run_context(
        TINY_PRESET,
        env,
        bandwidth.Bandwidth(1e10, 1e9, "t"),
        budget,
        kinds=("attention",),
        should_stop=lambda: len(steps) > 70,
    )
    assert result.stopped and released and result.series[0].points
    assert result.series[0].pinned_after_release is None  # no CUDA: torch cannot say


def test_each_depth_has_a_time_cap(env):
    preset = dataclasses.replace(TINY_PRESET, depth_seconds=1e-9, repeats=5, depths=(0, 256))
    result = context_bench.run_context(preset, env, bandwidth.Bandwidth(1e10, 1e9, "t"), kinds=("attention",))
    for p in result.series[0].points:
        assert p.capped and len(p.samples_tokens_per_s) == 1  # one (cut-short) repetition, then on
    assert result.series[0].points[0].graph_note == "CUDA graphs need a CUDA device"
