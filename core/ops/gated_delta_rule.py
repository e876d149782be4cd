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

import torch
from torch import Tensor

from core.ops.common import (
    StepResult,
    causal_mask,
    check_chunk_size,
    check_qkv,
    check_shape,
    check_step_inputs,
    erase_and_write,
    from_chunks,
    initial_board,
    pad_time,
    resolve_scale,
    scan_chunks,
    solve_unit_lower,
    to_chunks,
)

__all__ = ["step", "recurrent", "chunk"]


def step(
    S: Tensor,
    q_t: Tensor,
    k_t: Tensor,
    v_t: Tensor,
    *,
    beta_t: Tensor | None = None,
    g_t: Tensor | None = None,
    scale: float | None = None,
    keep_parts: bool = True,
) -> StepResult:
    """One token: fade the board by `exp(g_t)`, then the delta rule's erase and write, then read.

    S: (B, H, K, V); q_t, k_t: (B, H, K); v_t: (B, H, V); beta_t, g_t: (B, H) (both required).
    Parts: decayed = exp(g_t) S, erase, write.
    """
    B, H, K, _ = check_step_inputs(S, q_t, k_t, v_t)
    if beta_t is None or g_t is None:
        raise ValueError("Gated DeltaNet needs beta_t and g_t, each of shape (B, H)")
    check_shape(beta_t, "beta_t", (B, H), "(B, H)")
    check_shape(g_t, "g_t", (B, H), "(B, H)")
    return _step(S, q_t, k_t, v_t, beta_t, g_t, resolve_scale(scale, K), keep_parts)


def _step(
    S: Tensor,
    q_t: Tensor,
    k_t: Tensor,
    v_t: Tensor,
    beta_t: Tensor,
    g_t: Tensor,
    scale: float,
    keep_parts: bool,
) -> StepResult:
    dt = S.dtype
    decayed = g_t.to(dt).exp()[..., None, None] * S  # (B, H, K, V) every entry fades by α_t
    return erase_and_write(decayed, q_t.to(dt), k_t.to(dt), v_t.to(dt), beta_t.to(dt), scale, keep_parts)


def recurrent(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    beta: Tensor,
    g: Tensor,
    scale: float | None = None,
    initial_state: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """Token by token: a loop over `step`. `beta, g: (B, T, H)`. Returns `o: (B, T, H, V)`, board `(B, H, K, V)`."""
    B, T, H, K, V = check_qkv(q, k, v)
    check_shape(beta, "beta", (B, T, H), "(B, T, H)")
    check_shape(g, "g", (B, T, H), "(B, T, H)")
    scale = resolve_scale(scale, K)
    S = initial_board(initial_state, q, B, H, K, V)  # (B, H, K, V)
    k, v, beta, g = k.to(q.dtype), v.to(q.dtype), beta.to(q.dtype), g.to(q.dtype)
    outputs = []
    for t in range(T):
        result = _step(S, q[:, t], k[:, t], v[:, t], beta[:, t], g[:, t], scale, keep_parts=False)
        S = result.state
        outputs.append(result.output)  # (B, H, V)
    return torch.stack(outputs, dim=1), S


def chunk(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    beta: Tensor,
    g: Tensor,
    scale: float | None = None,
    initial_state: Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[Tensor, Tensor]:
    """Chunkwise WY / UT transform with one decay rate per head (facts.md §1.5)."""
    B, T, H, K, V = check_qkv(q, k, v)
    check_shape(beta, "beta", (B, T, H), "(B, T, H)")
    check_shape(g, "g", (B, T, H), "(B, T, H)")
    C = check_chunk_size(chunk_size)
    scale = resolve_scale(scale, K)
    S0 = initial_board(initial_state, q, B, H, K, V)  # (B, H, K, V)
    T_padded = -(-T // C) * C
    qc = to_chunks(pad_time(scale * q, T_padded), C)  # (B, H, N, C, K)
    kc = to_chunks(pad_time(k.to(q.dtype), T_padded), C)  # (B, H, N, C, K)
    vc = to_chunks(pad_time(v.to(q.dtype), T_padded), C)  # (B, H, N, C, V)
    bc = to_chunks(pad_time(beta.to(q.dtype), T_padded), C)  # (B, H, N, C)
    gc = to_chunks(pad_time(g.to(q.dtype), T_padded), C)  # (B, H, N, C)
    gamma = gc.cumsum(-1)  # (B, H, N, C) log-fade from the chunk start to token r

    # Γ_rj = exp(γ_r − γ_j) for j ≤ r; the exponent is masked *before* exp so j > r gives 0, never inf.
    seen = causal_mask(C, q.device)  # (C, C)
    gap = gamma.unsqueeze(-1) - gamma.unsqueeze(-2)  # (B, H, N, C, C) γ_r − γ_j
    pair_decay = gap.masked_fill(~seen, float("-inf")).exp()  # (B, H, N, C, C)

    L = (bc.unsqueeze(-1) * (kc @ kc.transpose(-1, -2)) * pair_decay).tril(-1)  # (B, H, N, C, C)
    decay_in = gamma.exp().unsqueeze(-1)  # (B, H, N, C, 1) fade from the chunk start to token r
    rhs = bc.unsqueeze(-1) * torch.cat([decay_in * kc, vc], dim=-1)  # (B, H, N, C, K + V)
    WU = solve_unit_lower(L, rhs)
    w, u = WU[..., :K], WU[..., K:]  # (B, H, N, C, K), (B, H, N, C, V)

    attn = (qc @ kc.transpose(-1, -2)) * pair_decay  # (B, H, N, C, C), zero above the diagonal
    gamma_end = gamma[..., -1:]  # (B, H, N, 1) total fade over the chunk
    k_out = (gamma_end - gamma).exp().unsqueeze(-1) * kc  # (B, H, N, C, K) fade from token r to chunk end
    o, S = scan_chunks(decay_in * qc, w, u, attn, k_out, gamma_end.exp(), S0)
    return from_chunks(o, T), S
