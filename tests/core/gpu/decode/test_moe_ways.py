"""An MoE layer reads its chosen experts in one batched call (gathered + bmm, or a grouped GEMM); each must
compute what the per-expert loop computes, for GELU pairs and for released MoEs' SwiGLU experts."""

from __future__ import annotations

import pytest
import torch

from core.gpu.decode.ffn import DenseFFN, MoEFFN, way_available
from core.gpu.decode.traffic import trace_persistent_bytes

CPU = torch.device("cpu")


@pytest.mark.parametrize("gated", [False, True])
def test_every_batched_way_computes_what_the_per_expert_loop_computes(gated):
    torch.manual_seed(0)
    layer = MoEFFN(64, 34, 2, 4, 32, CPU, torch.float32, gated=gated)  # 32 routed, 4 per token, 2 shared
    ways = layer.runnable_ways()
    assert "gather" in ways and ("triton" not in ways)  # Triton only on a CUDA card, GELU only
    for _ in range(5):
        h = torch.randn(1, 64)
        looped = layer.loop(h)
        for way in ways:
            layer.use(way)
            torch.testing.assert_close(layer(h), looped, rtol=1e-5, atol=1e-6)


def test_the_loop_runs_each_chosen_expert_once():
    """The reference itself against the layer written out: shared experts + Σ softmax(top scores) · expert."""
    torch.manual_seed(1)
    layer = MoEFFN(32, 10, 1, 3, 16, CPU, torch.float32, gated=True)
    h = torch.randn(1, 32)
    silu = torch.nn.functional.silu

    def swiglu(x, w1, w2):
        gate, up = (x @ w1).chunk(2, dim=-1)
        return (silu(gate) * up) @ w2

    scores = (h @ layer.router)[0]
    top = scores.topk(3)
    expected = swiglu(h, layer.shared_w1, layer.shared_w2)
    for g, e in zip(torch.softmax(top.values, -1), top.indices.tolist(), strict=True):
        expected = expected + g * swiglu(h, layer.w1[e], layer.w2[e])
    torch.testing.assert_close(layer.loop(h), expected, rtol=1e-5, atol=1e-6)


def test_a_gated_expert_holds_three_matrices_and_a_gated_dense_layer_its_twin():
    layer = MoEFFN(64, 34, 2, 4, 32, CPU, torch.float32, gated=True)
    assert layer.w1[0].numel() + layer.w2[0].numel() == 3 * 64 * 32
    dense = DenseFFN(64, 34 * 32, CPU, torch.float32, gated=True)  # every expert's width side by side
    routed_and_shared = sum(p.numel() for p in layer.parameters()) - layer.router.numel()
    assert dense.active_params() == routed_and_shared
    assert not way_available("triton", CPU, torch.float32, 64, 64, gated=True)


@pytest.mark.parametrize("way", ["gather", "grouped"])
def test_a_gated_layer_reads_the_bytes_it_says(way):
    layer = MoEFFN(64, 34, 2, 4, 32, CPU, torch.float32, gated=True)
    if way not in layer.runnable_ways():
        pytest.skip(f"{way} does not run here")
    layer.use(way)
    traced, _ = trace_persistent_bytes(lambda: layer(torch.randn(1, 64)), layer.parameters())
    assert traced == layer.traffic().weights


def test_an_unknown_way_and_too_few_experts_are_refused():
    layer = MoEFFN(64, 34, 2, 4, 32, CPU, torch.float32, gated=True)
    with pytest.raises(ValueError, match="unknown MoE"):
        layer.use("loop")  # the loop is the reference, called as `loop`, not a way to switch to
    with pytest.raises(ValueError, match="top_k"):
        MoEFFN(64, 4, 2, 4, 32, CPU, torch.float32, gated=True)
