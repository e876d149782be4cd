"""One decode step of the gated delta rule in a single Triton kernel, the state read and written once.

The fixed-state model's step in PyTorch (core.gpu.decode.models.StateDecoder) is a dozen small ops
per layer — normalise q and k, the gates, decay S, recall Sᵀk, the rank-1 update, read out
Sᵀq — each one a kernel, and three of them read or write the whole (H, K, V) state. On an H200
the step launched 712 kernels against 328 for full attention and ran at 0.72× its speed at
depth 0, where both read the same weights (docs/gpu-runs/2026-11-30-nvidia-h200). Engines
fuse the step (flash-linear-attention's `fused_recurrent`); this kernel does the same for
this project's layout:

    grid (H, V-tiles); program (h, t) holds S[h, :, t] (K × BV, fp32) in registers:
    q ← q / ‖q‖ · K^-½,  k ← k / ‖k‖,  β = σ(b),  α = σ(−a)  (= exp(−softplus(a)))
    S ← α S;  S ← S + k (β (v − Sᵀk))ᵀ;  o = Sᵀ q

Same maths and order as `StateDecoder._mix`; the (1, 3D) q|k|v projection and the gate
logits come straight from the matmuls. Triton is optional; on the CPU it runs only in Triton's
interpreter (TRITON_INTERPRET=1), which the tests use to check it against the PyTorch step.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from core.gpu.decode.triton_support import interpreted

BLOCK_V = 32  # value columns per program: H × (Dh / 32) programs (128 on `large`)


@functools.cache
def _kernel(interpret: bool) -> Any:
    """Build the kernel once (per interpreter setting)."""
    import triton
    import triton.language as tl

    @triton.jit
    def _step(qkv, beta_logit, gate_logit, state, out, H, DH, q_scale,
              BLOCK_K: tl.constexpr, BLOCK_V: tl.constexpr):  # fmt: skip
        hd, vb = tl.program_id(0), tl.program_id(1)
        kk = tl.arange(0, BLOCK_K)  # (K,)
        vv = vb * BLOCK_V + tl.arange(0, BLOCK_V)  # (BV,)
        q = tl.load(qkv + hd * DH + kk, mask=kk < DH, other=0.0).to(tl.float32)
        k = tl.load(qkv + (H + hd) * DH + kk, mask=kk < DH, other=0.0).to(tl.float32)
        v = tl.load(qkv + (2 * H + hd) * DH + vv, mask=vv < DH, other=0.0).to(tl.float32)
        q = q * (q_scale / tl.maximum(tl.sqrt(tl.sum(q * q, axis=0)), 1e-12))  # F.normalize, then K^-½
        k = k / tl.maximum(tl.sqrt(tl.sum(k * k, axis=0)), 1e-12)
        beta = tl.sigmoid(tl.load(beta_logit + hd).to(tl.float32))
        alpha = tl.sigmoid(-tl.load(gate_logit + hd).to(tl.float32))  # exp(−softplus(a)), in (0, 1)
        at = hd * DH * DH + kk[:, None] * DH + vv[None, :]  # (K, BV) offsets into S[h]
        mask = (kk[:, None] < DH) & (vv[None, :] < DH)
        s = alpha * tl.load(state + at, mask=mask, other=0.0)  # S ← αS
        recalled = tl.sum(k[:, None] * s, axis=0)  # (BV,) Sᵀk
        s += k[:, None] * (beta * (v - recalled))[None, :]  # S += k (β (v − Sᵀk))ᵀ
        tl.store(state + at, s, mask=mask)
        o = tl.sum(q[:, None] * s, axis=0)  # (BV,) Sᵀq
        tl.store(out + hd * DH + vv, o.to(out.dtype.element_ty), mask=vv < DH)

    return _step


def fused_step(
    qkv: torch.Tensor, beta_logit: torch.Tensor, gate_logit: torch.Tensor, state: torch.Tensor
) -> torch.Tensor:
    """One gated-delta step for every head; `state` (H, K, V) fp32 is updated in place.

    qkv (1, 3·H·Dh) the q|k|v projection; beta_logit, gate_logit (1, H); returns o (1, H·Dh)
    in qkv's dtype."""
    import triton

    n_heads, dh, dv = state.shape
    heads_ok = beta_logit.numel() == n_heads == gate_logit.numel()
    if dh != dv or qkv.shape != (1, 3 * n_heads * dh) or not heads_ok:
        raise ValueError(f"shapes do not fit: qkv {tuple(qkv.shape)}, state {tuple(state.shape)}")
    if state.dtype != torch.float32 or not state.is_contiguous():
        raise ValueError("the state must be contiguous fp32")
    out = torch.empty((1, n_heads * dh), device=qkv.device, dtype=qkv.dtype)
    grid = (n_heads, triton.cdiv(dh, BLOCK_V))
    _kernel(interpreted())[grid](
        qkv.contiguous(), beta_logit.contiguous(), gate_logit.contiguous(), state, out, n_heads, dh, dh**-0.5,
        BLOCK_K=triton.next_power_of_2(dh), BLOCK_V=BLOCK_V,
    )  # fmt: skip
    return out
