"""The latency floor (core/plan/latency.py) and the speed as the slower of two ceilings, by hand (issue 42, item 7).

One dense, one hybrid and one MoE config, the arithmetic written out: kernels per layer from `KERNELS`
(2 norms; attention 4 or a fixed-state mixer 5; a dense MLP 3 or routed experts 5 + 3 for the shared
expert), 4 for the ends, 3 µs each; under tensor parallelism 2 all-reduces per layer at NCCL's ring
latency, 6.6 µs + 2 (g − 1) × 0.6 µs. The bandwidth ceiling is bytes moved ÷ (GPUs × bandwidth), the bytes
counted by hand too; the planner quotes the slower one and names it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.plan import PlanInputs, parse, plan
from core.plan.headline import headline, speed_note
from core.plan.latency import all_reduce_s, latency_floor

CONFIGS = Path(__file__).resolve().parents[3] / "assets" / "configs"
US = 1e-6


def _model(name: str):
    return parse(json.loads((CONFIGS / f"{name}.json").read_text()))


def test_nccls_ring_latency_by_gpu_count():
    assert all_reduce_s(1) == 0
    assert all_reduce_s(2) == pytest.approx((6.6 + 2 * 1 * 0.6) * US)  # 7.8 µs
    assert all_reduce_s(8) == pytest.approx((6.6 + 2 * 7 * 0.6) * US)  # 15.0 µs


def test_dense_mistral_7b_on_eight_h200s_is_latency_bound_near_545_not_2602():
    """The issue's example: the bandwidth ceiling alone said 2,602 tokens/s on 8 × H200 at batch 1."""
    model = _model("mistral_7b")
    p = plan(model, PlanInputs(card="h200", gpus=8))
    # 32 layers × (2 norms + 4 attention + 3 MLP) + 4 ends = 292 kernels; 292 × 3 µs = 876 µs
    # 2 × 32 = 64 all-reduces × 15.0 µs = 960 µs; floor 1,836 µs → 1 / 1.836 ms = 544.66 tokens/s
    assert (p.floor.kernels, p.floor.all_reduces) == (32 * (2 + 4 + 3) + 4, 2 * 32) == (292, 64)
    assert p.floor.seconds == pytest.approx(292 * 3 * US + 64 * 15.0 * US) == pytest.approx(1.836e-3)
    # bytes: 7,241,732,096 weights × 2 B − the unread input table 32,000 × 4,096 × 2 B = 14,221,320,192;
    # + the cache, every layer's sliding window full: 4,096 tokens × 32 layers × 2 (K, V) × 8 heads × 128 × 2 B
    weights = 7_241_732_096 * 2 - 32_000 * 4096 * 2
    cache = 4096 * 32 * 2 * 8 * 128 * 2
    assert p.read_per_step == weights + cache == 14_758_191_104
    assert (
        p.bandwidth_tokens_per_s
        == pytest.approx(8 * 4.8e12 / 14_758_191_104)
        == pytest.approx(2601.9, abs=0.1)
    )
    assert p.decode_bound == "latency" and p.decode_tokens_per_s == pytest.approx(1 / 1.836e-3)
    assert round(p.decode_tokens_per_s) == 545
    assert "set by latency" in headline(
        model, PlanInputs(card="h200", gpus=8)
    ) and "64 all-reduces" in speed_note(p)
    one = plan(model, PlanInputs(card="h200"))  # one GPU: no all-reduces, and the bytes take longer (3.07 ms)
    assert one.floor.all_reduces == 0 and one.decode_bound == "memory"
    assert one.decode_tokens_per_s == pytest.approx(4.8e12 / 14_758_191_104)


def test_hybrid_qwen3_5_0_8b_is_latency_bound_short_and_memory_bound_long():
    model = _model("qwen3_5_0_8b")
    # 24 layers, every 4th attention: 18 Gated DeltaNet × (2 + 5 + 3) + 6 attention × (2 + 4 + 3) + 4
    floor = latency_floor(model)
    assert floor.kernels == 18 * 10 + 6 * 9 + 4 == 238 and floor.all_reduces == 0
    assert floor.seconds == pytest.approx(238 * 3 * US)  # 714 µs → 1,400.6 tokens/s
    short = plan(model, PlanInputs(context=4096))  # one H100 SXM: 3,350 GB/s
    # weights 752,393,024 × 2 B (tied: the table is the head, read whole) + KV 4,096 × 6 layers × 2 × 2 heads
    # × 256 × 2 B + the fixed state read and written: 2 × (18 × 16 × 128 × 128 × 4 B boards
    # + 18 × 3 columns × (2 × 16 × 128 + 16 × 128) channels × 2 B windows)
    state = 18 * 16 * 128 * 128 * 4 + 18 * 3 * (2 * 16 * 128 + 16 * 128) * 2
    moved = 752_393_024 * 2 + 4096 * 6 * 2 * 2 * 256 * 2 + 2 * state
    assert short.read_per_step == moved == 1_594_193_536
    assert short.bandwidth_tokens_per_s == pytest.approx(3.35e12 / moved)  # 2,101.4
    assert short.decode_bound == "latency" and short.decode_tokens_per_s == pytest.approx(1 / (238 * 3 * US))
    long = plan(model, PlanInputs(context=131072))  # 32× the KV rows: the bytes now take longer than 714 µs
    assert long.decode_bound == "memory" and long.decode_tokens_per_s == pytest.approx(
        long.bandwidth_tokens_per_s
    )
    assert long.decode_tokens_per_s < 1 / floor.seconds


def test_moe_qwen3_5_35b_a3b_on_h200s():
    model = _model("qwen3_5_35b_a3b")
    # 40 layers, every layer routed experts + one shared: 30 Gated DeltaNet × (2 + 5 + 5 + 3)
    # + 10 attention × (2 + 4 + 5 + 3) + 4 = 450 + 140 + 4 = 594 kernels × 3 µs = 1,782 µs → 561.2 tokens/s
    one = plan(model, PlanInputs(context=4096, card="h200"))
    assert one.floor.kernels == 30 * 15 + 10 * 14 + 4 == 594
    assert one.decode_bound == "latency" and one.decode_tokens_per_s == pytest.approx(1 / (594 * 3 * US))
    assert one.bandwidth_tokens_per_s > one.decode_tokens_per_s  # its 3.45 B active weights read in 1.27 ms
    eight = plan(model, PlanInputs(context=4096, card="h200", gpus=8))
    # + 2 × 40 = 80 all-reduces × 15.0 µs = 1,200 µs: 2,982 µs → 335.3 tokens/s
    assert eight.floor.all_reduces == 80
    assert eight.decode_tokens_per_s == pytest.approx(1 / (594 * 3 * US + 80 * 15.0 * US))
    assert round(eight.decode_tokens_per_s) == 335


def test_a_batch_shares_the_floor_and_the_bandwidth_takes_over():
    """The floor is per step, whatever the batch: 64 sequences write 64 tokens in one step."""
    model = _model("qwen3_5_0_8b")
    p = plan(model, PlanInputs(context=4096, batch=64))
    assert p.floor.seconds == pytest.approx(238 * 3 * US)
    assert p.decode_tokens_per_s == pytest.approx(64 / max(p.floor.seconds, 64 / p.bandwidth_tokens_per_s))
