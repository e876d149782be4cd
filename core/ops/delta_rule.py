"""DeltaNet's delta rule: erase what the board holds under a key, then write the new value.

Source: Yang, Wang, Zhang, Shen, Kim, "Parallelizing Linear Transformers with the Delta Rule
over Sequence Length", NeurIPS 2024 (arXiv 2406.06484), chunkwise algorithm from its App. B;
Schlag, Irie, Schmidhuber 2021 (arXiv 2102.11174); layout as flash-linear-attention
`fla/ops/delta_rule/naive.py` and `fla/ops/delta_rule/README.md` (state `K × V`).

Per token (fla layout, `β_t ∈ (0, 1)`, unit keys):

    S_t = (I − β_t k_t k_tᵀ) S_{t-1} + β_t k_t v_tᵀ          o_t = S_tᵀ (scale · q_t)

equivalently `S_t = S_{t-1} + k_t (β_t (v_t − S_{t-1}ᵀ k_t))ᵀ`: one gradient step on
`½‖Sᵀk_t − v_t‖²`. With `β = 1` and a unit key, reading `k_t` right after returns `v_t`.

Two forms, equal (tested):
- `recurrent` — one token at a time, a loop over `step` (fla's naive recurrence);
- `chunk` — the WY / UT-transform algorithm: inside each chunk of C tokens the product of
  Householder-like updates is rewritten with matrices (`W = T K`, `U = T V`,
  `T = (I + strictLower(diag(β) K Kᵀ))^{-1} diag(β)`), so only the hand-over of the board
  between chunks is sequential: T/C steps of matmuls instead of T rank-1 updates.
"""

from __future__ import annotations

from torch import Tensor

from core.ops.common import Chunked, RuleInputs, StepResult, causal_mask, scan_chunks, ut_transform
from core.ops.in_place import delta_step
from core.ops.rule import forms

__all__ = ["INPUTS", "step", "recurrent", "chunk"]

INPUTS = RuleInputs("the delta rule", beta=True, gate="none")


def _step(S, q_t, k_t, v_t, beta_t, g_t, scale, keep_parts) -> StepResult:  # types: common.StepFn
    """Erase and write; nothing fades first (no gate: `g_t` is None)."""
    return delta_step(S, None, q_t, k_t, v_t, beta_t, scale, keep_parts)


def _chunk(x: Chunked) -> tuple[Tensor, Tensor]:
    """Chunkwise WY / UT transform (docs/sources.md §1.4). Any T (padded inside), power-of-two `chunk_size`.

    For each chunk (K, V, β, Q of C tokens) and the board S entering it:
        T_ut = (I + strictLower(diag(β) K Kᵀ))^{-1} diag(β)      the UT transform, (C, C)
        W = T_ut K,  U = T_ut V                                  done for all chunks at once
        Ṽ = U − W S;  O = Q S + (Q Kᵀ ⊙ M) Ṽ;  S ← S + Kᵀ Ṽ       the only sequential part
    """
    # UT transform for every chunk at once: solve (I + L) [W | U] = diag(β) [K | V].
    L = (x.beta.unsqueeze(-1) * (x.k @ x.k.transpose(-1, -2))).tril(-1)  # (B, H, N, C, C) strictly lower
    w, u = ut_transform(L, x.beta, x.k, x.v)  # (B, H, N, C, K), (B, H, N, C, V)

    attn = (x.q @ x.k.transpose(-1, -2)).masked_fill(~causal_mask(x.C, x.q.device), 0.0)  # (B, H, N, C, C)
    o, S = scan_chunks(x.q, w, u, attn, x.k, None, x.S0)  # (B, H, N, C, V), (B, H, K, V)
    return o, S


step, recurrent, chunk = forms(INPUTS, _step, _chunk)
