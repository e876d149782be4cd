"""Our Gated DeltaNet and KDA ops against the field's own pure-PyTorch implementations.

transformers 5.24 ships the reference forms the released models run without custom kernels:
`torch_chunk_gated_delta_rule` / `torch_recurrent_gated_delta_rule` (models/qwen3_5) and
`chunk_kimi_delta_attention` / `recurrent_kimi_delta_attention` (models/kimi_linear). Conventions
line up as follows (checked by these tests, not assumed):

* layout: both take `(B, T, H, D)` tensors and `(B, T, H)` β, as core/ops does; the gate is `g =
  log α` — `(B, T, H)` for Gated DeltaNet, `(B, T, H, K)` for KDA — and the board is `(B, H, K, V)`;
* scale: both multiply q by `K ** -0.5` inside, our default `scale`;
* normalisation: ours never L2-normalises (the caller does), so we give both normalised q and k and
  `use_qk_l2norm_in_kernel=False`;
* grouped heads: transformers' Gated DeltaNet repeats each q/k head over `v_heads / k_heads` value
  heads itself; ours takes one q/k per value head, so the test repeats them (as core/models/
  qwen35_layers.py does);
* transformers computes in fp32 whatever it is given, so the comparison is fp32.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from core.ops import gated_delta_rule, kda

transformers = pytest.importorskip("transformers")
from transformers.models.kimi_linear import modeling_kimi_linear as kimi  # noqa: E402
from transformers.models.qwen3_5 import modeling_qwen3_5 as qwen  # noqa: E402

SHAPES = [  # (B, T, k_heads, v_heads, K, V)
    (1, 1, 1, 1, 8, 8),
    (2, 37, 2, 2, 16, 12),
    (1, 100, 2, 4, 8, 16),  # grouped value heads, as Qwen3.5 (16 q/k heads, 32 value heads in 2B+)
    (2, 130, 1, 3, 32, 8),
]
CHUNKS = [16, 64]
TOL = 2e-5  # fp32, relative to the largest entry


def _inputs(B, T, Hk, Hv, K, V, per_channel: bool, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    q = F.normalize(torch.randn(B, T, Hk, K, generator=gen), dim=-1)
    k = F.normalize(torch.randn(B, T, Hk, K, generator=gen), dim=-1)
    v = torch.randn(B, T, Hv, V, generator=gen)
    beta = torch.rand(B, T, Hv, generator=gen)
    gate_shape = (B, T, Hv, K) if per_channel else (B, T, Hv)
    g = F.logsigmoid(2 + 2 * torch.randn(gate_shape, generator=gen))  # log α ≤ 0, α mostly near 1
    S0 = torch.randn(B, Hv, K, V, generator=gen)
    return q, k, v, beta, g, S0


def _close(ours: torch.Tensor, theirs: torch.Tensor) -> None:
    assert ours.shape == theirs.shape
    assert float((ours - theirs).abs().max()) <= TOL * float(theirs.abs().max())


def _repeat(x: torch.Tensor, Hv: int) -> torch.Tensor:
    return x.repeat_interleave(Hv // x.shape[2], dim=2)  # (B, T, Hv, K)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_gated_delta_rule_chunk_equals_transformers(shape, chunk_size):
    q, k, v, beta, g, S0 = _inputs(*shape, per_channel=False)
    theirs, their_S = qwen.torch_chunk_gated_delta_rule(
        q, k, v, g=g, beta=beta, chunk_size=chunk_size, initial_state=S0, output_final_state=True
    )
    Hv = shape[3]
    ours, our_S = gated_delta_rule.chunk(
        _repeat(q, Hv), _repeat(k, Hv), v, beta=beta, g=g, initial_state=S0, chunk_size=chunk_size
    )
    _close(ours, theirs)
    _close(our_S, their_S)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_gated_delta_rule_recurrent_and_step_equal_transformers(shape):
    q, k, v, beta, g, S0 = _inputs(*shape, per_channel=False, seed=1)
    theirs, their_S = qwen.torch_recurrent_gated_delta_rule(
        q, k, v, g=g, beta=beta, initial_state=S0, output_final_state=True
    )
    Hv = shape[3]
    q, k = _repeat(q, Hv), _repeat(k, Hv)
    ours, our_S = gated_delta_rule.recurrent(q, k, v, beta=beta, g=g, initial_state=S0)
    _close(ours, theirs)
    _close(our_S, their_S)
    first = gated_delta_rule.step(S0, q[:, 0], k[:, 0], v[:, 0], beta_t=beta[:, 0], g_t=g[:, 0])
    _close(first.output, theirs[:, 0])


@pytest.mark.parametrize("shape", [s for s in SHAPES if s[2] == s[3]], ids=str)
@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_kda_chunk_equals_transformers_kimi_linear(shape, chunk_size):
    q, k, v, beta, g, S0 = _inputs(*shape, per_channel=True, seed=2)
    theirs, their_S = kimi.chunk_kimi_delta_attention(
        q, k, v, g=g, beta=beta, chunk_size=chunk_size, initial_state=S0, output_final_state=True
    )
    ours, our_S = kda.chunk(q, k, v, beta=beta, g=g, initial_state=S0, chunk_size=chunk_size)
    _close(ours, theirs)
    _close(our_S, their_S)


@pytest.mark.parametrize("shape", [s for s in SHAPES if s[2] == s[3]], ids=str)
def test_kda_recurrent_equals_transformers_kimi_linear(shape):
    q, k, v, beta, g, S0 = _inputs(*shape, per_channel=True, seed=3)
    theirs, their_S = kimi.recurrent_kimi_delta_attention(q, k, v, g, beta, S0, True)
    ours, our_S = kda.recurrent(q, k, v, beta=beta, g=g, initial_state=S0)
    _close(ours, theirs)
    _close(our_S, their_S)


def test_the_comparison_sees_a_wrong_gate():
    """The oracle can fail: one fade rate per head fed to KDA (every channel alike) is Gated DeltaNet,
    but halving the gate is not."""
    q, k, v, beta, g, S0 = _inputs(1, 20, 2, 2, 8, 8, per_channel=False, seed=4)
    theirs, _ = qwen.torch_recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=S0)
    per_channel = g[..., None].expand(*g.shape, 8)
    same, _ = kda.recurrent(q, k, v, beta=beta, g=per_channel, initial_state=S0)
    _close(same, theirs)
    wrong, _ = kda.recurrent(q, k, v, beta=beta, g=per_channel / 2, initial_state=S0)
    with pytest.raises(AssertionError):
        _close(wrong, theirs)
