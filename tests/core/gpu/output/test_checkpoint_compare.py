"""The dense-vs-hybrid sentence (core/gpu/output/checkpoint_compare.py) from stand-in runs: each run's share
of its roofline, and which floor — operations one after another, or bytes — is higher for each, so the
sentence says when the kernel count, not the architecture, decides."""

from __future__ import annotations

import pytest

from core.gpu.output.checkpoint_compare import compare_words
from core.gpu.suites.checkpoint_bench import CheckpointPoint, CheckpointResult
from core.plan.latency import KERNEL_FLOOR_S

DEPTH = 1024
KERNEL_BOUND = "operation count, not its architecture, decides its speed"
BOTH_BOUND = "the operation counts, not the architectures, decide the comparison"
BYTES_BOUND = "the bytes each architecture reads set the pace"


def point(tokens_per_s: float, roofline: float, kernels: float | None, state: int = 0) -> CheckpointPoint:
    return CheckpointPoint(
        depth=DEPTH, tokens_per_s=tokens_per_s, std_tokens_per_s=0.0, samples_tokens_per_s=[tokens_per_s],
        cache_bytes=2 * 2**20, planned_cache_bytes=2 * 2**20, bytes_per_token=10**9,
        predicted_tokens_per_s=roofline, state_bytes=state, planned_state_bytes=state,
        method="CUDA graph", kernels_per_step=kernels, kernels_counted="CUDA graph nodes",
    )  # fmt: skip


def run(name: str, p: CheckpointPoint, state: int = 0) -> CheckpointResult:
    return CheckpointResult(
        folder=f"/models/{name}", name=name, family="qwen3_5_text" if state else "qwen3", loader="", cache_kind="",
        device="NVIDIA H200", dtype="bfloat16", params=1, weight_bytes=1, planned_weight_bytes=1,
        weight_read_bytes=1, cache_bytes_per_token=1024 if not state else 256, window=4096,
        bandwidth_bytes_per_s=4.8e12, bandwidth_method="copy", n_steps=16, repeats=3, points=[p],
        state_bytes=state,
    )  # fmt: skip


def pair(dense_kernels: float | None, hybrid_kernels: float | None) -> str:
    """Dense: 500 tokens/s of a 1000 tokens/s roofline (1 ms a token of bytes); hybrid: 900 of 1500."""
    boards = 20 * 2**20
    dense = run("dense-0.6B", point(500.0, 1000.0, dense_kernels))
    hybrid = run("hybrid-0.8B", point(900.0, 1500.0, hybrid_kernels, boards), boards)
    return compare_words([dense, hybrid])


def test_each_runs_share_of_its_roofline_is_stated():
    words = pair(100, 100)
    assert "Against its own roofline the dense model reached 50% and the hybrid 60%" in words
    assert "1.00 ms and 0.67 ms a token" in words  # bytes ÷ bandwidth: 1/1000 s and 1/1500 s


def test_below_both_bytes_floors_the_architecture_sets_the_pace():
    words = pair(100, 120)  # 0.3 ms and 0.36 ms of kernels, under 1 ms and 0.67 ms of bytes
    assert "Operations per step: dense-0.6B 100, hybrid-0.8B 120" in words
    assert f"at {KERNEL_FLOOR_S * 1e6:g} µs each" in words and "0.30 ms and 0.36 ms" in words
    assert BYTES_BOUND in words and KERNEL_BOUND not in words and BOTH_BOUND not in words


def test_the_sentence_changes_when_a_runs_kernel_floor_passes_its_bytes_floor():
    below = pair(100, 200)  # hybrid: 200 × 3 µs = 0.6 ms < 0.67 ms of bytes
    above = pair(100, 240)  # hybrid: 240 × 3 µs = 0.72 ms > 0.67 ms
    assert BYTES_BOUND in below and KERNEL_BOUND not in below
    assert "hybrid-0.8B's kernel floor is above its bytes' floor" in above and KERNEL_BOUND in above
    assert BYTES_BOUND not in above
    both = pair(400, 240)  # dense: 1.2 ms > 1 ms as well
    assert BOTH_BOUND in both and KERNEL_BOUND not in both


def test_the_floor_follows_the_planners_constant(monkeypatch):
    """One constant: a larger floor per kernel turns the same counts kernel-bound."""
    from core.plan import latency

    assert BYTES_BOUND in pair(100, 120)
    monkeypatch.setattr(latency, "KERNEL_FLOOR_S", 10e-6)
    words = pair(100, 120)  # 1.0 ms (not above 1 ms) and 1.2 ms (above 0.67 ms)
    assert "hybrid-0.8B's kernel floor is above" in words and "at 10 µs each" in words


def test_uncounted_runs_leave_the_floors_out_and_order_does_not_matter():
    words = pair(None, 120)
    assert "Operations per step" not in words and "reached 50%" in words
    dense = run("dense-0.6B", point(500.0, 1000.0, 100))
    boards = 20 * 2**20
    hybrid = run("hybrid-0.8B", point(900.0, 1500.0, 240, boards), boards)
    assert compare_words([hybrid, dense]) == compare_words([dense, hybrid])


def test_the_point_says_which_floor_is_higher():
    p = point(500.0, 1000.0, 400)
    assert p.bytes_floor_s == pytest.approx(1e-3) and p.kernel_floor_s == pytest.approx(400 * KERNEL_FLOOR_S)
    assert p.kernel_bound
    assert not point(500.0, 1000.0, 300).kernel_bound  # 0.9 ms < 1 ms
    assert not point(500.0, 1000.0, None).kernel_bound and point(500.0, 1000.0, None).kernel_floor_s is None
