"""Byte accounting and the position-first cache, on the CPU: what a step moves is what torch touches;
the spilled rows a step streams are one contiguous slice; the budget counts everything held."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from core.gpu.decode import spill
from core.gpu.decode.ffn import MoEFFN, group_offsets
from core.gpu.decode.kv_cache import KVCache
from core.gpu.decode.models import build
from core.gpu.decode.traffic import Traffic, trace_persistent_bytes
from core.gpu.presets import PRESETS
from core.gpu.suites import context_bench
from core.gpu.timing import bandwidth, bench_env, decode_timer
from tests.core.gpu.fake_nvml import FakeNvml

TINY = PRESETS["tiny"]
pytestmark = pytest.mark.usefixtures("one_thread")


def _traced(model, pos):
    model.pos = pos
    token = torch.tensor([3])
    traced, ops = trace_persistent_bytes(lambda: model.step(token), model.persistent_tensors())
    return traced, ops


@pytest.mark.parametrize(
    ("kind", "ffn", "resident"),
    [
        ("attention", "dense", None),
        ("attention", "moe", None),
        ("attention", "moe_grouped", None),
        ("attention", "dense_moe_size", None),
        ("state", "dense", None),
        ("attention", "dense", 10),  # 10 positions on the device, the rest streamed
        ("attention", "dense", 0),  # all of it streamed
    ],
)
@pytest.mark.parametrize("pos", [0, 9, 10, 31])
def test_accounted_bytes_equal_the_bytes_the_step_touches(kind, ffn, resident, pos):
    torch.manual_seed(0)
    model = build(kind, TINY, "cpu", torch.float32, ffn=ffn)
    model.allocate(64, resident)
    model.fill(pos)
    traced, ops = _traced(model, pos)
    assert traced == model.traffic(pos).persistent, ops
    assert "index_select" in ops  # the token is looked up on the device, never with a 0-dim index


def test_moe_counts_the_gathered_copy_as_scratch():
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    ffn = model.blocks[0].ffn
    routed = TINY.moe_top_k * (ffn.w1[0].numel() + ffn.w2[0].numel()) * 4
    assert ffn.traffic().scratch == 2 * routed  # written by the gather, read again by the einsum
    dense = build("attention", TINY, "cpu", torch.float32, ffn="dense_moe_size")
    assert dense.traffic(0).scratch == 0
    assert model.traffic(0).total == model.traffic(0).persistent + TINY.n_layers * 2 * routed


def test_grouped_experts_read_in_place_give_the_gathered_result():
    """The grouped GEMM path (torch._grouped_mm, one group per chosen expert) computes what the
    gather + bmm path computes, moves no scratch copy, and its group boundaries are the bincount's
    without asking the host."""
    torch.manual_seed(0)
    gathered = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    grouped = build("attention", TINY, "cpu", torch.float32, ffn="moe_grouped")
    grouped.load_state_dict(gathered.state_dict())
    for model in (gathered, grouped):
        model.allocate(16)
        torch.manual_seed(1)  # the same cache contents in both
        model.fill(5)
    token = torch.tensor([3])
    torch.testing.assert_close(grouped.step(token), gathered.step(token), rtol=1e-5, atol=1e-6)
    assert grouped.traffic(5).scratch == 0 < gathered.traffic(5).scratch
    assert grouped.traffic(5).weights == gathered.traffic(5).weights
    ids = torch.tensor([0, 3, 3, 7])
    assert group_offsets(ids, 9).tolist() == torch.cumsum(torch.bincount(ids, minlength=9), 0).tolist()
    with pytest.raises(ValueError, match="implementation"):
        MoEFFN(16, 8, 1, 2, 16, torch.device("cpu"), torch.float32, way="fused")


def test_the_roofline_uses_every_byte_moved():
    bw = bandwidth.Bandwidth(1e11, 1e10, "test")
    t = Traffic(weights=1000, cache_read=500, scratch=500, host_link=200)
    assert context_bench.traffic_tokens_per_s(t, bw) == pytest.approx(1 / (1800 / 1e11 + 200 / 1e10))
    assert (t + t).total == 2 * t.total and t.to_dict()["persistent"] == 1500


def test_state_traffic_does_not_grow_with_depth():
    model = build("state", TINY, "cpu", torch.float32)
    assert model.traffic(0) == model.traffic(100_000)
    attention = build("attention", TINY, "cpu", torch.float32)
    grows = attention.traffic(1000).cache_read - attention.traffic(0).cache_read
    assert grows == 1000 * attention.bytes_per_position()


def test_state_step_is_the_gated_delta_rule_of_core_ops():
    from core.ops import gated_delta_rule

    torch.manual_seed(1)
    model = build("state", TINY, "cpu", torch.float64)
    model.allocate(4)
    model.fill(3)
    block, p = model.blocks[0], TINY
    before = model.state[0].clone()
    h = torch.randn(1, p.d_model, dtype=torch.float64)
    with torch.inference_mode():
        got = model._mix(block, h, 0)
        q, k, v = (h @ block.wqkv).view(3, 1, p.n_heads, p.head_dim)
        ref = gated_delta_rule.step(
            before[None],
            torch.nn.functional.normalize(q, dim=-1),
            torch.nn.functional.normalize(k, dim=-1),
            v,
            beta_t=torch.sigmoid(h @ block.w_beta),
            g_t=-torch.nn.functional.softplus(h @ block.w_gate),
            keep_parts=False,
        )
    torch.testing.assert_close(model.state[0], ref.state[0].float())
    torch.testing.assert_close(got, ref.output.reshape(1, -1).to(block.wo.dtype) @ block.wo)


# -- the position-first cache -------------------------------------------------------------------


def test_each_steps_host_slice_is_one_contiguous_block():
    cache = KVCache(3, 4, 8, torch.device("cpu"), torch.float32)
    cache.allocate(100, resident=40)
    assert cache.resident == 40 and cache.spilled == 60
    for layer in range(3):
        for n in (1, 17, 60):
            rows = cache.host_rows(layer, n)
            assert rows.is_contiguous() and rows.data_ptr() == cache.host[layer].data_ptr()
            assert rows.numel() * rows.element_size() == n * cache.row_bytes  # keys and values of n positions
    assert cache.device_bytes == 3 * 40 * cache.row_bytes + 60 * cache.row_bytes  # resident rows + the stage
    assert cache.host_bytes == 3 * 60 * cache.row_bytes


def test_a_spilled_row_lands_at_its_position_in_host_memory():
    cache = KVCache(1, 2, 4, torch.device("cpu"), torch.float64)
    cache.allocate(20, resident=5)
    cache.fill(7)
    kv = torch.randn(2, 2, 4, dtype=torch.float64)
    q = torch.randn(2, 4, dtype=torch.float64)
    cache.attend(0, 7, q, kv)
    torch.testing.assert_close(cache.host[0][7 - 5], kv)  # position 7 = host row 2: key and value together
    torch.testing.assert_close(cache.stage[2], kv)
    resident = KVCache(1, 2, 4, torch.device("cpu"), torch.float64)
    resident.allocate(20)
    resident.dev[0][:5] = cache.dev[0][:5]
    resident.dev[0][5:7] = cache.host[0][:2]
    torch.testing.assert_close(resident.attend(0, 7, q, kv), cache.attend(0, 7, q, kv))


def test_release_frees_every_buffer():
    model = build("attention", TINY, "cpu", torch.float32)
    model.allocate(64, 10)
    assert model.cache.host and model.cache.stage is not None
    model.release()
    assert model.cache.dev == [] and model.cache.host == [] and model.cache.stage is None


# -- the budget ---------------------------------------------------------------------------------


def test_budget_counts_the_stage_and_everything_held():
    b, s = 1024, 256  # bytes per position (all layers), staging bytes per position (one layer)
    held = 10_000
    # everything fits: no stage needed
    assert spill.resident_positions(held + 100 * b, held, b, s, 100) == 100
    # R·b + (max_len − R)·s ≤ budget − held
    budget = held + 60 * b + 40 * s
    r = spill.resident_positions(budget, held, b, s, 100)
    assert r == 60 and r * b + (100 - r) * s <= budget - held
    assert spill.resident_positions(held - 1, held, b, s, 100) == 0  # the context alone is over budget
    assert spill.resident_positions(None, held, b, s, 100) is None


def test_host_ram_is_checked_before_the_spill_is_allocated(monkeypatch):
    env = bench_env.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))
    bw = bandwidth.Bandwidth(1e10, 1e9, "test")
    model = build("attention", TINY, "cpu", torch.float32)
    weights = model.total_params() * 4
    per_pos = model.memory_bytes(1)
    max_len = decode_timer.steps_room(TINY, 2048)
    budget = weights + 100 * per_pos + (max_len - 100) * per_pos // 2  # 100 positions on the "device"
    plan = context_bench.plan_series(model, "attention", TINY, env, budget)
    assert plan.resident == 100 and plan.refusal is None
    deep_need = TINY.n_layers * (decode_timer.steps_room(TINY, 2048) - 100) * (per_pos // TINY.n_layers)
    monkeypatch.setattr(spill, "host_available_bytes", lambda: spill.HOST_MARGIN_BYTES + deep_need - 1)
    result = context_bench.run_context(TINY, env, bw, budget, kinds=("attention",))
    series = result.series[0]
    assert [p.depth for p in series.points] == [0, 256, 512, 1024]
    assert series.oom_depth == 2048 and "pinned host memory" in series.oom_message
    assert series.host_cache_bytes > 0  # allocated once, at the deepest depth that fits


def test_the_spilled_series_allocates_once(monkeypatch):
    env = bench_env.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))
    bw = bandwidth.Bandwidth(1e10, 1e9, "test")
    calls = []
    real = KVCache.allocate
    monkeypatch.setattr(KVCache, "allocate", lambda self, *a: (calls.append(a), real(self, *a))[1])
    preset = dataclasses.replace(TINY, depths=(0, 256, 512))
    context_bench.run_context(preset, env, bw, 1024**2, kinds=("attention",))
    assert len(calls) == 1 and calls[0][0] == decode_timer.steps_room(preset, 512)
    calls.clear()
    context_bench.run_context(preset, env, bw, None, kinds=("attention",))
    assert len(calls) == len(preset.depths)  # without a budget: per depth, all on the device
