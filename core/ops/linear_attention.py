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
    Chunked,
    RuleInputs,
    StepResult,
    causal_mask,
    check_qkv,
    resolve_scale,
)
from core.ops.rule import forms

__all__ = ["INPUTS", "step", "recurrent", "chunk", "parallel"]

INPUTS = RuleInputs("linear attention", beta=False, gate="none")


def _step(S, q_t, k_t, v_t, beta_t, g_t, scale, keep_parts) -> StepResult:  # types: common.StepFn
    """Add `k vᵀ`; nothing fades or is erased (no beta, no gate: both None)."""
    recalled = (k_t.unsqueeze(-2) @ S).squeeze(-2)  # (B, H, V) what the board held under k_t
    write = k_t.unsqueeze(-1) * v_t.unsqueeze(-2)  # (B, H, K, V) outer product k vᵀ
    new_S = S + write  # (B, H, K, V)
    output = ((scale * q_t).unsqueeze(-2) @ new_S).squeeze(-2)  # (B, H, V)
    parts = {"decayed": S, "erase": torch.zeros_like(S), "write": write} if keep_parts else {}
    return StepResult(state=new_S, output=output, parts=parts, recalled=recalled)


def parallel(q: Tensor, k: Tensor, v: Tensor, *, scale: float | None = None) -> Tensor:
    """All at once: `O = (scale · Q Kᵀ ⊙ M) V`, the quadratic form (no initial state)."""
    B, T, H, K, V = check_qkv(q, k, v)
    scale = resolve_scale(scale, K)
    scores = torch.einsum("bthk,bshk->bhts", scale * q, k.to(q.dtype))  # (B, H, T, T)
    scores = scores.masked_fill(~causal_mask(T, q.device), 0.0)
    return torch.einsum("bhts,bshv->bthv", scores, v.to(q.dtype))  # (B, T, H, V)


def _chunk(x: Chunked) -> tuple[Tensor, Tensor]:
    """Chunkwise: parallel inside each chunk of C tokens, the board handed over at chunk edges.

        S_[n] = S_[n-1] + K_[n]ᵀ V_[n]
        O_[n] = Q_[n] S_[n-1] + (Q_[n] K_[n]ᵀ ⊙ M_C) V_[n]

    With no erase, the boards entering every chunk are one prefix sum, so nothing here loops.
    """
    chunk_writes = x.k.transpose(-1, -2) @ x.v  # (B, H, N, K, V) what each chunk adds to the board
    boards_after = x.S0.unsqueeze(2) + chunk_writes.cumsum(dim=2)  # (B, H, N, K, V)
    boards_before = torch.cat([x.S0.unsqueeze(2), boards_after[:, :, :-1]], dim=2)  # (B, H, N, K, V)

    inside = (x.q @ x.k.transpose(-1, -2)).masked_fill(~causal_mask(x.C, x.q.device), 0.0)  # (B, H, N, C, C)
    o = x.q @ boards_before + inside @ x.v  # (B, H, N, C, V)
    return o, boards_after[:, :, -1]


step, recurrent, chunk = forms(INPUTS, _step, _chunk)
