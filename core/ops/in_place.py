"""The delta rule's decoding step on the board itself: no second board is built.

A decode step's cost is the memory it moves (docs/sources.md §7.1), and the board is the big tensor
a fixed-state layer moves. The readable step (`common.erase_and_write`) builds the faded board, an
outer product and a new board — three boards written and five read per token. When no autograd graph
needs the old board (decoding: `torch.no_grad`, inference mode, or inputs that carry no gradient),
this form overwrites the board it was given instead, with the fade folded into the read:

    rows = [α ⊙ k;  α ⊙ scale·q]          (B, H, 2, K)   reading S through these reads the faded board
    R    = rows S                          one pass over S: what the faded board holds under k, and the
                                           read-out's old part (Sᵀ Diag(α) scale·q)
    u    = β (v − R_k)                     the delta rule's correction (Yang et al. 2024, eq. 2)
    o    = R_q + u (k · scale q)           = S_newᵀ (scale · q), since S_new = Diag(α) S + k uᵀ
    S   ← Diag(α) S,  then  S += k uᵀ      in place (`mul_`, `addcmul_`: broadcast, no outer product built)

So the board is read three times and written twice per token, nothing board-sized is allocated, and the
result is the same update (tested: tests/core/ops/test_in_place.py). A fused kernel (fla's
`fused_recurrent_gated_delta_rule`) reads it once and writes it once — the count the roofline uses
(`core.roofline.step_bytes`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from core.ops.common import StepResult, erase_and_write

BOARD_READS, BOARD_WRITES = 3, 2  # passes over the board one in-place step makes (the docstring's count)


def may_update_in_place(*tensors: Tensor | None) -> bool:
    """True when no autograd graph will need the board's old values, so a step may overwrite it."""
    return not torch.is_grad_enabled() or not any(t is not None and t.requires_grad for t in tensors)


def delta_step(
    S: Tensor,
    fade: Tensor | None,
    q_t: Tensor,
    k_t: Tensor,
    v_t: Tensor,
    beta_t: Tensor,
    scale: float,
    keep_parts: bool,
) -> StepResult:
    """One token's fade, erase and write, for DeltaNet, Gated DeltaNet and KDA alike.

    S: (B, H, K, V); fade: (B, H, K) the rate α of each key row (Gated DeltaNet: one rate per head,
    expanded over K; KDA: one per channel) or None (DeltaNet: nothing fades); q_t, k_t: (B, H, K);
    v_t: (B, H, V); beta_t: (B, H). With `keep_parts`, or when autograd needs the old board, it builds
    the faded board and the readable parts (`common.erase_and_write`); otherwise (decoding) it updates
    `S` itself as this module's docstring says, and returns `S` as the state.
    """
    if keep_parts or not may_update_in_place(S, q_t, k_t, v_t, beta_t, fade):
        decayed = S if fade is None else fade.unsqueeze(-1) * S  # (B, H, K, V) row d fades by α_d
        return erase_and_write(decayed, q_t, k_t, v_t, beta_t, scale, keep_parts)
    q_s = scale * q_t  # (B, H, K)
    rows = torch.stack([k_t, q_s], dim=-2)  # (B, H, 2, K)
    if fade is not None:
        rows = rows * fade.unsqueeze(-2)  # (B, H, 2, K) read the faded board without fading it first
    read = rows @ S  # (B, H, 2, V) the one read of S: recalled, and the read-out's old part
    recalled, old_out = read.unbind(-2)  # (B, H, V) each
    u = beta_t.unsqueeze(-1) * (v_t - recalled)  # (B, H, V)
    output = old_out + u * (k_t * q_s).sum(-1, keepdim=True)  # (B, H, V) = S_newᵀ (scale · q)
    if fade is not None:
        S.mul_(fade.unsqueeze(-1))  # (B, H, K, V) row d fades by α_d, in place
    S.addcmul_(k_t.unsqueeze(-1), u.unsqueeze(-2))  # S += k uᵀ, broadcast: no (K, V) product is built
    return StepResult(state=S, output=output, parts={}, recalled=recalled)
