"""Spilling the cache to host RAM: never more than a safe share of the free RAM is pinned, and a spill
over that share is refused before anything is allocated."""

from __future__ import annotations

import dataclasses

import pytest

from core.gpu.decode import spill
from core.gpu.presets import PRESETS
from core.gpu.suites import context_bench
from core.gpu.timing import bandwidth

TINY = dataclasses.replace(PRESETS["tiny"], depths=(0, 256, 512), repeats=2, n_steps=4)
BW = bandwidth.Bandwidth(1e10, 1e9, "test")
GIB = 1024**3
pytestmark = pytest.mark.usefixtures("one_thread")


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
