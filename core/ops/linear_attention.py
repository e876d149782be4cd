"""Causal linear attention: every token adds `k vᵀ` to one fixed-size board.

Source: Katharopoulos et al., "Transformers are RNNs: Fast Autoregressive Transformers with
Linear Attention", ICML 2020 (arXiv 2006.16236); Schlag et al. 2021 (arXiv 2102.11174);
layout and naming as in flash-linear-attention `fla/ops/linear_attn/naive.py`.

Drop the softmax and attention regroups: `(Q Kᵀ) V = Q (Kᵀ V)`. With the causal mask the
same holds row by row, so the whole past folds into one `K × V` matrix (fla layout):

    S_t = S_{t-1} + k_t v_tᵀ          o_t = S_tᵀ (scale · q_t)

Three forms, all equal (tested):
- `recurrent` — one token at a time (what decoding does);
- `parallel`  — `O = (Q Kᵀ ⊙ M) V` with the inclusive causal mask M (what training could do);
- `chunk`     — cut T into chunks of C: inside a chunk the parallel form, across chunks the
  board `S` handed over (a prefix sum of `Kᵀ V` per chunk).
"""

from __future__ import annotations

import torch
from torch import Tensor

from core.ops.common import (
    StepResult,
    causal_mask,
    check_chunk_size,
    check_qkv,
    check_step_inputs,
    from_chunks,
    initial_board,
    pad_time,
    reject_unused,
    resolve_scale,
    to_chunks,
)

__all__ = ["step", "recurrent", "chunk", "parallel"]


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
    """One token: add `k_t v_tᵀ` to the board, then read it with `q_t`.

    S: (B, H, K, V); q_t, k_t: (B, H, K); v_t: (B, H, V). Linear attention has no beta and no
    gate; passing one raises ValueError. Parts: decayed = S (nothing fades), erase = 0, write = k vᵀ.
    """
    reject_unused("linear attention", beta_t=beta_t, g_t=g_t)
    check_step_inputs(S, q_t, k_t, v_t)
    return _step(S, q_t, k_t, v_t, resolve_scale(scale, S.shape[-2]), keep_parts)


def _step(S: Tensor, q_t: Tensor, k_t: Tensor, v_t: Tensor, scale: float, keep_parts: bool) -> StepResult:
    q_t, k_t, v_t = q_t.to(S.dtype), k_t.to(S.dtype), v_t.to(S.dtype)
    write = k_t.unsqueeze(-1) * v_t.unsqueeze(-2)  # (B, H, K, V) outer product k vᵀ
    new_S = S + write  # (B, H, K, V)
    output = ((scale * q_t).unsqueeze(-2) @ new_S).squeeze(-2)  # (B, H, V)
    parts = {"decayed": S, "erase": torch.zeros_like(S), "write": write} if keep_parts else {}
    return StepResult(state=new_S, output=output, parts=parts)


def recurrent(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    scale: float | None = None,
    initial_state: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """Token by token: a loop over `step`. Returns `o: (B, T, H, V)` and the final board `(B, H, K, V)`."""
    B, T, H, K, V = check_qkv(q, k, v)
    scale = resolve_scale(scale, K)
    S = initial_board(initial_state, q, B, H, K, V)  # (B, H, K, V)
    k, v = k.to(q.dtype), v.to(q.dtype)
    outputs = []
    for t in range(T):
        result = _step(S, q[:, t], k[:, t], v[:, t], scale, keep_parts=False)
        S = result.state
        outputs.append(result.output)  # (B, H, V)
    return torch.stack(outputs, dim=1), S  # (B, T, H, V), (B, H, K, V)


def parallel(q: Tensor, k: Tensor, v: Tensor, scale: float | None = None) -> Tensor:
    """All at once: `O = (scale · Q Kᵀ ⊙ M) V`, the quadratic form (no initial state)."""
    B, T, H, K, V = check_qkv(q, k, v)
    scale = resolve_scale(scale, K)
    scores = torch.einsum("bthk,bshk->bhts", scale * q, k.to(q.dtype))  # (B, H, T, T)
    scores = scores.masked_fill(~causal_mask(T, q.device), 0.0)
    return torch.einsum("bhts,bshv->bthv", scores, v.to(q.dtype))  # (B, T, H, V)


def chunk(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    scale: float | None = None,
    initial_state: Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[Tensor, Tensor]:
    """Chunkwise: parallel inside each chunk of C tokens, the board handed over at chunk edges.

        S_[n] = S_[n-1] + K_[n]ᵀ V_[n]
        O_[n] = Q_[n] S_[n-1] + (Q_[n] K_[n]ᵀ ⊙ M_C) V_[n]

    With no erase, the boards entering every chunk are one prefix sum, so nothing here loops.
    """
    B, T, H, K, V = check_qkv(q, k, v)
    C = check_chunk_size(chunk_size)
    scale = resolve_scale(scale, K)
    S0 = initial_board(initial_state, q, B, H, K, V)  # (B, H, K, V)
    T_padded = -(-T // C) * C
    qc = to_chunks(pad_time(scale * q, T_padded), C)  # (B, H, N, C, K)
    kc = to_chunks(pad_time(k.to(q.dtype), T_padded), C)  # (B, H, N, C, K)
    vc = to_chunks(pad_time(v.to(q.dtype), T_padded), C)  # (B, H, N, C, V)

    chunk_writes = kc.transpose(-1, -2) @ vc  # (B, H, N, K, V) what each chunk adds to the board
    boards_after = S0.unsqueeze(2) + chunk_writes.cumsum(dim=2)  # (B, H, N, K, V)
    boards_before = torch.cat([S0.unsqueeze(2), boards_after[:, :, :-1]], dim=2)  # (B, H, N, K, V)

    inside = (qc @ kc.transpose(-1, -2)).masked_fill(~causal_mask(C, q.device), 0.0)  # (B, H, N, C, C)
    o = qc @ boards_before + inside @ vc  # (B, H, N, C, V)
    return from_chunks(o, T), boards_after[:, :, -1]
