"""The llama.cpp-style spill: layers whose weights and cache do not fit run on the CPU (on a CPU-only
machine both halves are the CPU, which still checks the split, the maths and the byte count)."""

from __future__ import annotations

import pytest
import torch

from core.gpu.decode.cpu_layers import CpuLayersDecoder, layers_that_fit
from core.gpu.decode.models import build
from core.gpu.decode.traffic import trace_persistent_bytes
from core.gpu.presets import PRESETS
from core.gpu.suites import context_bench
from core.gpu.timing import bandwidth, bench_env
from tests.core.gpu.fake_nvml import FakeNvml

TINY = PRESETS["tiny"]
pytestmark = pytest.mark.usefixtures("one_thread")


def _split(budget_layers: int, max_len: int = 64) -> CpuLayersDecoder:
    """A decoder whose budget holds the embedding, the head and `budget_layers` whole layers."""
    probe = CpuLayersDecoder(TINY, "cpu", torch.float64, 0, 0)
    per_layer = probe.layer_weight_bytes() + max_len * probe.bytes_per_position() // TINY.n_layers
    return CpuLayersDecoder(
        TINY, "cpu", torch.float64, probe.fixed_bytes() + budget_layers * per_layer + 7, 0
    )


def test_layers_that_fit():
    assert layers_that_fit(1000, 100, 300, 8) == 3
    assert layers_that_fit(100, 200, 300, 8) == 0
    assert layers_that_fit(10**9, 0, 300, 8) == 8


@pytest.mark.parametrize("on_gpu", [0, 1, 2])
def test_split_model_computes_what_the_whole_model_computes(on_gpu):
    torch.manual_seed(0)
    split = _split(on_gpu)
    split.allocate(64)
    assert split.n_gpu == on_gpu
    whole = build("attention", TINY, "cpu", torch.float64)
    whole.load_state_dict(split.inner.state_dict())
    whole.allocate(64)
    split.fill(0)
    whole.fill(0)
    tokens = torch.randint(0, TINY.vocab, (20,))
    got = torch.stack([split.step(t) for t in tokens])
    want = torch.stack([whole.step(t) for t in tokens])
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_cpu_layers_bytes_are_counted_and_traced():
    split = _split(1)
    split.allocate(64)
    split.fill(30)
    traced, _ = trace_persistent_bytes(lambda: split.step(torch.tensor([5])), split.persistent_tensors())
    split.pos = 30
    traffic = split.traffic(30)
    assert traced == traffic.persistent
    gpu_half = build("attention", TINY, "cpu", torch.float64).traffic(30)
    assert 0 < traffic.cpu_side < gpu_half.total  # one of the two layers runs on the host
    assert traffic.host_link == 2 * TINY.d_model * 8  # the hidden state (fp64), there and back


def test_the_cpu_layers_sweep_splits_per_depth():
    env = bench_env.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))
    bw = bandwidth.Bandwidth(1e10, 1e9, "t", host_bytes_per_s=5e9)
    result = context_bench.run_context(TINY, env, bw, 1536 * 1024, kinds=("attention",), cpu_layers=True)
    series = result.series[0]
    assert series.model == "full attention, CPU layers"
    layers = [p.gpu_layers for p in series.points]
    assert layers == sorted(layers, reverse=True) and layers[0] == TINY.n_layers > layers[-1]
    deepest = series.points[-1]
    assert deepest.spilled_bytes > 0 and series.spill_depth is not None
    assert deepest.graph_note == "CUDA graphs need a CUDA device"
