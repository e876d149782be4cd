"""Gated DeltaNet: the delta rule on a board that first fades by one rate per head.

Source: Yang, Kautz, Hatamizadeh, "Gated Delta Networks: Improving Mamba2 with Delta Rule",
ICLR 2025 (arXiv 2412.06464); layout and chunk form as flash-linear-attention
`fla/ops/gated_delta_rule/naive.py` (state `K × V`).

Per token, with the gate in log space `g_t = log α_t ≤ 0` (one scalar per head):

    S_t = α_t (I − β_t k_t k_tᵀ) S_{t-1} + β_t k_t v_tᵀ          o_t = S_tᵀ (scale · q_t)

(code order: fade `S ← α S`, then the delta rule's erase and write). `g = 0` is the plain
delta rule; `g → −∞` wipes the board before each write.

Two forms, equal (tested):
- `recurrent` — one token at a time, a loop over `step`;
- `chunk` — the WY / UT transform with decay. With `γ_r = Σ_{i≤r} g_i` inside a chunk and
  `Γ_rj = exp(γ_r − γ_j)` (j ≤ r, so every exponent is ≤ 0 and nothing overflows):
      T_ut = (I + strictLower(diag(β)(K Kᵀ ⊙ Γ)))^{-1} diag(β),  W = T_ut diag(e^γ) K,  U = T_ut V
      Ṽ = U − W S,   O = diag(e^γ) Q S + (Q Kᵀ ⊙ Γ ⊙ M) Ṽ,   S ← e^{γ_C} S + (diag(e^{γ_C − γ}) K)ᵀ Ṽ
"""

from __future__ import annotations

from torch import Tensor

from core.ops.common import Chunked, RuleInputs, StepResult, causal_mask, scan_chunks, ut_transform
from core.ops.in_place import delta_step
from core.ops.rule import forms

__all__ = ["INPUTS", "step", "recurrent", "chunk"]

INPUTS = RuleInputs("Gated DeltaNet", beta=True, gate="head")


def _step(S, q_t, k_t, v_t, beta_t, g_t, scale, keep_parts) -> StepResult:  # types: common.StepFn
    """Fade every entry by the head's `α_t = exp(g_t)`, then erase and write."""
    fade = g_t.exp().unsqueeze(-1).expand_as(k_t)  # (B, H, K) the head's rate on every key row
    return delta_step(S, fade, q_t, k_t, v_t, beta_t, scale, keep_parts)


def _chunk(x: Chunked) -> tuple[Tensor, Tensor]:
    """Chunkwise WY / UT transform with one decay rate per head (docs/sources.md §1.5)."""
    gamma = x.g.cumsum(-1)  # (B, H, N, C) log-fade from the chunk start to token r

    # Γ_rj = exp(γ_r − γ_j) for j ≤ r; the exponent is masked *before* exp so j > r gives 0, never inf.
    seen = causal_mask(x.C, x.q.device)  # (C, C)
    gap = gamma.unsqueeze(-1) - gamma.unsqueeze(-2)  # (B, H, N, C, C) γ_r − γ_j
    pair_decay = gap.masked_fill(~seen, float("-inf")).exp()  # (B, H, N, C, C)

    L = (x.beta.unsqueeze(-1) * (x.k @ x.k.transpose(-1, -2)) * pair_decay).tril(-1)  # (B, H, N, C, C)
    decay_in = gamma.exp().unsqueeze(-1)  # (B, H, N, C, 1) fade from the chunk start to token r
    w, u = ut_transform(L, x.beta, decay_in * x.k, x.v)  # (B, H, N, C, K), (B, H, N, C, V)

    attn = (x.q @ x.k.transpose(-1, -2)) * pair_decay  # (B, H, N, C, C), zero above the diagonal
    gamma_end = gamma[..., -1:]  # (B, H, N, 1) total fade over the chunk
    k_out = (gamma_end - gamma).exp().unsqueeze(-1) * x.k  # (B, H, N, C, K) fade from token r to chunk end
    o, S = scan_chunks(decay_in * x.q, w, u, attn, k_out, gamma_end.exp(), x.S0)
    return o, S


step, recurrent, chunk = forms(INPUTS, _step, _chunk)
