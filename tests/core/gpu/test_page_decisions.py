"""The GPU page's decisions outside Streamlit: the fixed-state decoder's maths, the typed job result,
the reference bandwidth, the export payload and the preset/budget choices."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
import torch.nn.functional as F

from core.gpu.decode.models import StateDecoder, build
from core.gpu.device.nvml import DeviceSnapshot
from core.gpu.output.export import page_payload, to_json
from core.gpu.presets import GIB, PRESETS, WHOLE_CARD, budget_options, preset_choices
from core.gpu.serving import jobs
from core.gpu.suites.context_bench import ContextResult, reference_bandwidth
from core.gpu.suites.moe_bench import MoeResult
from core.gpu.timing.bandwidth import Bandwidth
from core.roofline import CARDS, DEFAULT_CARD

TINY = PRESETS["tiny"]


def old_state_mix(model: StateDecoder, block, h: torch.Tensor, layer: int) -> torch.Tensor:
    """The gated delta rule as StateDecoder._mix wrote it inline before it called core.ops (the reference)."""
    p = model.preset
    n_h, dh = p.n_heads, p.head_dim
    q, k, v = (h @ block.wqkv).float().view(3, n_h, dh)  # each (H, Dh)
    q = F.normalize(q, dim=-1) * dh**-0.5
    k = F.normalize(k, dim=-1)
    beta = torch.sigmoid((h @ block.w_beta).float())[0]  # (H,)
    alpha = torch.exp(-F.softplus((h @ block.w_gate).float()))[0]  # (H,) in (0, 1)
    s = model.state[layer]  # (H, K, V)
    s.mul_(alpha[:, None, None])
    recalled = torch.einsum("hk,hkv->hv", k, s)  # (H, V)
    s.add_(torch.einsum("hk,hv->hkv", k * beta[:, None], v - recalled))
    o = torch.einsum("hk,hkv->hv", q, s)  # (H, V)
    return o.to(model.dtype).reshape(1, n_h * dh) @ block.wo  # (1, D)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_state_decoder_mix_equals_the_old_inline_formula(seed):
    torch.manual_seed(seed)
    new = build("state", TINY, "cpu", torch.float32)
    old = build("state", TINY, "cpu", torch.float32)
    old.load_state_dict(new.state_dict())
    for m in (new, old):
        m.allocate(8)
    torch.manual_seed(seed + 100)
    new.fill(5)
    old.state = [s.clone() for s in new.state]
    for _ in range(4):  # a few tokens in a row, so the state carries over
        for layer, (b_new, b_old) in enumerate(zip(new.blocks, old.blocks, strict=True)):
            h = torch.randn(1, TINY.d_model)
            with torch.inference_mode():
                got = new._mix(b_new, h, layer)
                want = old_state_mix(old, b_old, h, layer)
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(new.state[layer], old.state[layer], rtol=1e-5, atol=1e-6)
            assert new.state[layer].shape == (TINY.n_heads, TINY.head_dim, TINY.head_dim)


def test_state_decoder_steps_with_the_op_and_keeps_a_fixed_size():
    torch.manual_seed(0)
    model = build("state", TINY, "cpu", torch.float32)
    model.allocate(4)
    model.fill(3)
    before = [s.shape for s in model.state]
    logits = model.step(torch.tensor(7))
    assert logits.shape == (TINY.vocab,) and torch.isfinite(logits).all()
    assert [s.shape for s in model.state] == before and model.pos == 4


@pytest.fixture
def trimmed(monkeypatch):
    monkeypatch.setitem(PRESETS, "tiny", dataclasses.replace(TINY, depths=(0, 256), repeats=2, n_steps=2))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_jobs_return_a_typed_result(trimmed):
    ctx = jobs.context_benchmark("tiny", device="cpu")
    assert isinstance(ctx, jobs.JobResult) and isinstance(ctx.bandwidth, Bandwidth)
    assert isinstance(ctx.context, ContextResult) and ctx.moe is None
    assert isinstance(ctx.device, DeviceSnapshot)
    moe = jobs.moe_benchmark("tiny", device="cpu")
    assert isinstance(moe.moe, MoeResult) and moe.context is None
    assert [r.model for r in moe.moe.rows] == ["dense", "experts (MoE)"]


def test_job_progress_runs_from_bandwidth_to_done(trimmed):
    seen = []
    jobs.context_benchmark("tiny", device="cpu", progress=lambda f, m: seen.append((f, m)))
    assert seen[0] == (0.0, "measuring copy bandwidth")
    assert all(0.05 <= f <= 1.0 for f, _ in seen[1:]) and seen[-1] == (1.0, "done")


def snapshot(**fields) -> DeviceSnapshot:
    base = dict(available=True, name="NVIDIA GeForce RTX 3060")
    return DeviceSnapshot(**(base | fields))


def test_reference_bandwidth_prefers_the_measurement_then_the_spec_then_the_card():
    measured = Bandwidth(123e9, 4e9, "copy")
    assert reference_bandwidth(snapshot(), measured, on_gpu=True) == (
        measured,
        "this machine's measured copy speed",
    )
    spec = snapshot(max_mem_clock_mhz=7501, bus_width_bits=192)  # no PCIe link reported
    peak = spec.peak_bandwidth_bytes_per_s
    assert peak == pytest.approx(360e9, rel=1e-3) and spec.pcie_bandwidth_bytes_per_s is None
    bw, where = reference_bandwidth(spec, None, on_gpu=True)
    assert (
        bw == Bandwidth(peak, 16e9, "spec") and where == "your NVIDIA GeForce RTX 3060's spec-sheet bandwidth"
    )
    linked = snapshot(max_mem_clock_mhz=7501, bus_width_bits=192, pcie_gen=4, pcie_width=16)
    assert reference_bandwidth(linked, None, True)[0].link_bytes_per_s == linked.pcie_bandwidth_bytes_per_s
    card = CARDS[DEFAULT_CARD]
    for snap, on_gpu in ((spec, False), (snapshot(available=False, name=None), False), (snapshot(), True)):
        bw, where = reference_bandwidth(snap, None, on_gpu)
        assert bw == Bandwidth(card.bandwidth_bytes_per_s, card.host_link_bytes_per_s, "spec")
        assert where.startswith(f"an {card.name} (")


def test_page_payload_is_strict_json_with_every_part():
    bw = Bandwidth(1e9, 5e8, "memcpy")
    payload = page_payload(snapshot(), bw, None, None)
    assert list(payload) == ["device", "versions", "bandwidth", "context", "moe"]
    assert payload["bandwidth"] == {
        "device_bytes_per_s": 1e9,
        "link_bytes_per_s": 5e8,
        "method": "memcpy",
        "host_bytes_per_s": None,  # measured on a GPU run: what CPU-computed layers get
        "llc_bytes": None,  # a CPU run's last-level cache and its copy speed (Bandwidth.for_reading)
        "llc_bytes_per_s": None,
        "copy_bytes": None,  # the copy probe's buffer and every reading it took (its median is the speed)
        "samples_bytes_per_s": [],
        "llc_samples_bytes_per_s": [],
    }
    assert payload["context"] is None and payload["moe"] is None
    assert json.loads(to_json(payload))["device"]["name"] == "NVIDIA GeForce RTX 3060"
    assert page_payload(snapshot(), None, None, None)["bandwidth"] is None


def test_preset_and_budget_choices():
    assert preset_choices(False, 80 * GIB) == (["cpu", "tiny"], "cpu")
    assert preset_choices(True, 12 * GIB) == (["small", "large", "tiny"], "small")
    assert preset_choices(True, 24 * GIB) == (["small", "large", "tiny"], "large")
    assert preset_choices(True, None)[1] == "small"
    options = budget_options(PRESETS["small"])
    assert list(options) == ["6.0 GiB", "8.0 GiB", "12.0 GiB", WHOLE_CARD]
    assert options[WHOLE_CARD] is None and options["8.0 GiB"] == 8 * GIB
