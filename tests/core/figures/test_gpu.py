"""The context-speed chart draws the eager line only beside a graphed one: a CPU run's chart is
unchanged."""

from __future__ import annotations

import dataclasses

import pytest

from core.gpu.presets import PRESETS
from core.gpu.suites import context_bench
from core.gpu.timing import bandwidth, bench_env
from tests.core.gpu.fake_nvml import FakeNvml

TINY = PRESETS["tiny"]
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def env():
    return bench_env.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))


def test_the_chart_draws_the_eager_line_only_beside_a_graphed_one(env):
    from core.figures.gpu import context_speed_figure

    result = context_bench.run_context(
        dataclasses.replace(TINY, depths=(0, 256)), env, bandwidth.Bandwidth(1e10, 1e9, "t"), kinds=("state",)
    )
    names = [t.name for t in context_speed_figure(result).data]
    assert not any("eager" in n for n in names)  # a CPU run's chart is unchanged
    for p in result.series[0].points:
        p.graphed_tokens_per_s = 2 * p.eager_tokens_per_s
    assert "fixed state: eager (no CUDA graph)" in [t.name for t in context_speed_figure(result).data]
