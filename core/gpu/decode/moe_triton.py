"""A fused batch-1 MoE in Triton: the chosen experts' weights read in place, two kernels a layer.

On an H200 the gathered MoE (index_select + bmm) reached 194–470 GB/s of weights against
4,092 GB/s for a dense layer: copying the chosen experts out took most of the step
(docs/gpu-runs/2026-11-30-nvidia-h200/moe-variants.txt). Engines instead run one kernel that
reads each chosen expert where it lies (vLLM's `fused_moe`, itself Triton). This is the
decode-time (one token) form of that idea, for this project's layouts:

- `_up`: grid (k, D-slices, F-tiles). Program (j, s, f) reads expert top_i[j]'s rows s of
  W1 (E, D, Fe) and adds the partial sums x[s] · W1[e, s, f] into `hidden` (k, Fe), fp32, with
  atomic adds (they resolve in L2). Splitting D gives the card enough programs (k alone is 6).
- `_down`: grid (D-tiles,). Each program turns the k router scores into gates (softmax),
  applies gelu and the gate to `hidden` (3 KB, read from L2) and multiplies it by its columns
  of every chosen expert's W2 (E, Fe, D), adding the result to `base` (the shared experts'
  output). Products pile up in a (Fe-tile, D-tile) block and are summed across threads once
  at the end, not once per expert.

Compiled for sm_90 (tests/core/gpu/decode/test_triton_kernels.py, Triton's own ptxas, `large` preset's
shapes): no spills, 16-byte weight loads, 5 barriers in `_down` (121 when it reduced per expert).

The expert ids and scores are read on the device, so a step never waits for the host and can
be captured in a CUDA graph. Triton comes with CUDA PyTorch on Linux; it is optional here.
On the CPU it runs only in Triton's interpreter (TRITON_INTERPRET=1), which the tests use to
check it against the gathered path.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from core.gpu.decode.triton_support import interpreted

BLOCK_D_UP = 256  # rows of W1 per program: (D / 256) × (Fe / 64) × k programs (192 on `large`)
BLOCK_F = 64  # expert-hidden columns per tile
BLOCK_D_DOWN = 32  # output columns per program of `_down`: D / 32 programs (128 on `large`)


@functools.cache
def _kernels(interpret: bool) -> tuple[Any, Any]:
    """Build the two kernels once (per interpreter setting: `triton.jit` reads it when it runs)."""
    import triton
    import triton.language as tl

    @triton.jit
    def _up(x, w1, ids, hidden, D, FE, BLOCK_D: tl.constexpr, BLOCK_F: tl.constexpr):
        j, s, fb = tl.program_id(0), tl.program_id(1), tl.program_id(2)
        e = tl.load(ids + j).to(tl.int64)
        rows = s * BLOCK_D + tl.arange(0, BLOCK_D)  # (BD,)
        cols = fb * BLOCK_F + tl.arange(0, BLOCK_F)  # (BF,)
        xs = tl.load(x + rows, mask=rows < D, other=0.0).to(tl.float32)  # (BD,)
        mask = (rows[:, None] < D) & (cols[None, :] < FE)
        w = tl.load(w1 + e * D * FE + rows[:, None] * FE + cols[None, :], mask=mask, other=0.0)  # (BD, BF)
        part = tl.sum(xs[:, None] * w.to(tl.float32), axis=0)  # (BF,)
        tl.atomic_add(hidden + j * FE + cols, part, mask=cols < FE)

    @triton.jit
    def _down(hidden, scores, ids, w2, base, out, D, K: tl.constexpr, FE: tl.constexpr,
              BLOCK_K: tl.constexpr, BLOCK_F: tl.constexpr, BLOCK_D: tl.constexpr):  # fmt: skip
        # K and FE are compile-time: both loops unroll (K × FE / BLOCK_F ≤ 12 bodies on the presets),
        # so all their loads can be in flight at once
        cols = tl.program_id(0) * BLOCK_D + tl.arange(0, BLOCK_D)  # (BD,) output columns
        acc = tl.zeros((BLOCK_F, BLOCK_D), dtype=tl.float32)  # (BF, BD)
        kk = tl.arange(0, BLOCK_K)  # (BK,) the chosen experts
        top = tl.load(scores + kk, mask=kk < K, other=-float("inf")).to(tl.float32)
        gates = tl.exp(top - tl.max(top, axis=0))
        gates = (gates / tl.sum(gates, axis=0)).to(out.dtype.element_ty).to(tl.float32)  # as softmax → dtype
        for j in tl.static_range(K):
            e = tl.load(ids + j).to(tl.int64)
            g = tl.sum(tl.where(kk == j, gates, 0.0), axis=0)
            for f0 in tl.static_range(0, FE, BLOCK_F):
                f = f0 + tl.arange(0, BLOCK_F)  # (BF,)
                h = tl.load(hidden + j * FE + f, mask=f < FE, other=0.0)  # (BF,) = x · W1[e, :, f]
                h = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476)) * g  # exact gelu, as F.gelu
                wmask = (f[:, None] < FE) & (cols[None, :] < D)
                w = tl.load(
                    w2 + e * FE * D + f[:, None] * D + cols[None, :], mask=wmask, other=0.0
                )  # (BF, BD)
                acc += h[:, None] * w.to(tl.float32)
        y = tl.sum(acc, axis=0) + tl.load(base + cols, mask=cols < D, other=0.0).to(tl.float32)  # (BD,)
        tl.store(out + cols, y.to(out.dtype.element_ty), mask=cols < D)

    return _up, _down


def scratch_bytes(d: int, expert_hidden: int, top_k: int) -> int:
    """What this path moves besides the weights: the fp32 `hidden` (k, Fe) zeroed, added into
    once per D-slice by `_up`, and read back."""
    return top_k * expert_hidden * 4 * (-(-d // BLOCK_D_UP) + 2)


def fused_experts(
    h: torch.Tensor,
    top_i: torch.Tensor,
    scores: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    base: torch.Tensor,
) -> torch.Tensor:
    """base + Σ_j g[j] · gelu(h W1[top_i[j]]) W2[top_i[j]], g = softmax(scores), experts read in place.

    h (1, D); top_i (k,) expert ids and scores (k,) their router scores, on the device; w1 (E, D, Fe), w2 (E, Fe, D)
    contiguous; base (1, D). Returns (1, D) in h's dtype."""
    import triton

    k = top_i.shape[0]
    n_experts, d, fe = w1.shape
    if w2.shape != (n_experts, fe, d) or h.shape != (1, d) or base.shape != (1, d):
        raise ValueError(f"shapes do not fit: h {tuple(h.shape)}, w1 {tuple(w1.shape)}, w2 {tuple(w2.shape)}")
    if not (w1.is_contiguous() and w2.is_contiguous()):
        raise ValueError("expert weights must be contiguous")
    up, down = _kernels(interpreted())
    hidden = torch.zeros((k, fe), device=h.device, dtype=torch.float32)  # (k, Fe), summed into by `_up`
    x = h.reshape(-1).contiguous()  # (D,)
    grid_up = (k, triton.cdiv(d, BLOCK_D_UP), triton.cdiv(fe, BLOCK_F))
    up[grid_up](x, w1, top_i, hidden, d, fe, BLOCK_D=BLOCK_D_UP, BLOCK_F=BLOCK_F)
    out = torch.empty_like(base)
    down[(triton.cdiv(d, BLOCK_D_DOWN),)](
        hidden, scores, top_i, w2, base.contiguous(), out, d, K=k, FE=fe,
        BLOCK_K=max(2, triton.next_power_of_2(k)), BLOCK_F=BLOCK_F, BLOCK_D=BLOCK_D_DOWN,
    )  # fmt: skip
    return out
