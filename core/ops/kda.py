"""Kimi Delta Attention (KDA): the delta rule on a board whose every key channel fades at its own rate.

Source: Kimi Team, "Kimi Linear: An Expressive, Efficient Hybrid Linear Attention
Architecture", 2025 (arXiv 2510.26692); layout and chunk form as flash-linear-attention
`fla/ops/kda/naive.py` (state `K × V`); KDA is the attention of the Kimi K3 KDA layers.

Per token, with a per-channel gate in log space `g_t = log α_t ∈ (−∞, 0]^K`:

    S_t = (I − β_t k_t k_tᵀ) Diag(α_t) S_{t-1} + β_t k_t v_tᵀ          o_t = S_tᵀ (scale · q_t)

(code order: fade row d of the board by `α_{t,d}`, then the delta rule's erase and write).
The same rate on every channel is Gated DeltaNet; rate 1 everywhere is DeltaNet.

Two forms, equal (tested):
- `recurrent` — one token at a time, a loop over `step`;
- `chunk` — the WY / UT transform with per-channel decay. With `Γ_r = Σ_{i≤r} g_i ∈ R^K`
  inside a chunk:
      L_rj = β_r Σ_d k_rd k_jd e^{Γ_rd − Γ_jd}  (j < r),   A_rj = Σ_d q_rd k_jd e^{Γ_rd − Γ_jd}  (j ≤ r)
      T_ut = (I + L)^{-1} diag(β),  W = T_ut (K ⊙ e^Γ),  U = T_ut V
      Ṽ = U − W S,   O = (Q ⊙ e^Γ) S + A Ṽ,   S ← Diag(e^{Γ_C}) S + (K ⊙ e^{Γ_C − Γ})ᵀ Ṽ
  The pair scores carry a different decay per channel, so they are not one matmul, and
  splitting `e^{Γ_r − Γ_j}` into `e^{Γ_r} · e^{−Γ_j}` would overflow. `_decayed_scores` cuts
  the chunk into halves, quarters, …: between two neighbouring blocks the split is taken at
  their edge, where both factors are ≤ 1, and the block is an ordinary matmul. No
  `(C, C, K)` tensor is ever built (fla's naive code builds one; its kernels tile it).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from core.ops.common import Chunked, RuleInputs, StepResult, scan_chunks, ut_transform
from core.ops.in_place import delta_step
from core.ops.rule import forms

__all__ = ["INPUTS", "step", "recurrent", "chunk"]

INPUTS = RuleInputs("KDA", beta=True, gate="channel")


def _step(S, q_t, k_t, v_t, beta_t, g_t, scale, keep_parts) -> StepResult:  # types: common.StepFn
    """Fade row d of the board by `α_{t,d} = exp(g_{t,d})`, then erase and write."""
    return delta_step(S, g_t.exp(), q_t, k_t, v_t, beta_t, scale, keep_parts)  # fade: (B, H, K)


def _decayed_scores(a: Tensor, b: Tensor, G: Tensor) -> Tensor:
    """`M_rj = Σ_d a_rd b_jd exp(G_rd − G_jd)` for j < r, and 0 on and above the diagonal; per chunk.

    a, b, G: (..., C, K), G the cumulative log decay inside the chunk (non-increasing in r).
    Returns (..., C, C). The decay differs per channel d, so M is not one matmul, and splitting
    `exp(G_r − G_j) = exp(G_r) · exp(−G_j)` would overflow. Instead build M by doubling: pair
    neighbouring sub-blocks of s tokens (left, right) and take the edge e = last token of the left:

        exp(G_r − G_j) = exp(G_r − G_e) · exp(G_e − G_j)      r in right, j in left: both exponents ≤ 0

    so the right×left block is one matmul `(a ⊙ e^{G − G_e}) (b ⊙ e^{G_e − G})ᵀ`; the two diagonal
    s×s blocks came from the level below. s = 1, 2, 4, …, C/2: log2(C) levels, no (C, C, K) tensor.
    """
    C = G.shape[-2]
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2], G.shape[:-2])
    M = a.new_zeros(*batch, C, 1, 1)  # (..., C/s, s, s) diagonal blocks for s = 1: zero (strict)
    s = 1
    while s < C:
        n = C // (2 * s)  # pairs of s-blocks
        G_pairs = G.unflatten(-2, (n, 2, s))  # (..., n, 2, s, K)
        G_edge = G_pairs[..., 0, -1:, :]  # (..., n, 1, K) decay at the last token of each left block
        a_right = a.unflatten(-2, (n, 2, s))[..., 1, :, :]  # (..., n, s, K) rows r of each right block
        b_left = b.unflatten(-2, (n, 2, s))[..., 0, :, :]  # (..., n, s, K) columns j of each left block
        left = a_right * (G_pairs[..., 1, :, :] - G_edge).exp()  # (..., n, s, K) exponent ≤ 0
        right = b_left * (G_edge - G_pairs[..., 0, :, :]).exp()  # (..., n, s, K) exponent ≤ 0
        cross = left @ right.transpose(-1, -2)  # (..., n, s, s) right block's rows × left block's columns
        upper_left, lower_right = M[..., 0::2, :, :], M[..., 1::2, :, :]  # (..., n, s, s) each
        top = torch.cat([upper_left, torch.zeros_like(upper_left)], dim=-1)  # (..., n, s, 2s)
        bottom = torch.cat([cross, lower_right], dim=-1)  # (..., n, s, 2s)
        M = torch.cat([top, bottom], dim=-2)  # (..., n, 2s, 2s)
        s *= 2
    return M.squeeze(-3)  # (..., C, C)


def _chunk(x: Chunked) -> tuple[Tensor, Tensor]:
    """Chunkwise WY / UT transform with per-channel decay (docs/sources.md §1.6)."""
    Gam = x.g.cumsum(-2)  # (B, H, N, C, K) per-channel log-fade from the chunk start to token r

    L = x.beta.unsqueeze(-1) * _decayed_scores(x.k, x.k, Gam)  # (B, H, N, C, C) strictly lower
    decay_in = Gam.exp()  # (B, H, N, C, K) fade from the chunk start to token r, per channel
    w, u = ut_transform(L, x.beta, x.k * decay_in, x.v)  # (B, H, N, C, K), (B, H, N, C, V)

    same_token = torch.diag_embed((x.q * x.k).sum(-1))  # (B, H, N, C, C) r = j: no decay between them
    attn = _decayed_scores(x.q, x.k, Gam) + same_token  # (B, H, N, C, C)
    Gam_end = Gam[..., -1, :]  # (B, H, N, K) total fade over the chunk, per channel
    k_out = x.k * (Gam_end.unsqueeze(-2) - Gam).exp()  # (B, H, N, C, K) fade from token r to the chunk end
    o, S = scan_chunks(x.q * decay_in, w, u, attn, k_out, Gam_end.exp(), x.S0)
    return o, S


step, recurrent, chunk = forms(INPUTS, _step, _chunk)


def gate_bounds(lower_bound: float = -5.0, chunk: int = 64) -> dict[str, float]:
    """K3's gate g = lb·sigmoid(·) ∈ (lb, 0): the strongest fade per step, and why factoring overflows."""
    f32_max_log = math.log(float(np.finfo(np.float32).max))
    return {
        "min_keep_per_step": math.exp(lower_bound),
        "chunk_log_fade": lower_bound * chunk,
        "steps_to_overflow_f32": math.ceil(f32_max_log / -lower_bound),
        "f32_max_log": f32_max_log,
    }
