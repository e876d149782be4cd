"""Qwen3.5's decode step with its small operations folded away: the same maths as the course's layers
(core/models/qwen35_layers.py, the oracle), in fewer and larger ops.

A batch-1 decode step is a chain of matrix × vector products; everything between them — norms, the
short convolution, gates, views, casts — costs a few µs of dispatch each on a CPU (more right after a
matrix × vector has streamed its weights through the caches) and a kernel launch each on a GPU. Written
for reading, a Qwen3.5 layer calls ~120 aten ops per token; this step's Gated DeltaNet layer calls 39 from
Python, 58 aten ops in all, and its attention layer 48 (117 with scaled_dot_product_attention's own; fp32,
torch.profiler, core/gpu/timing/kernels.py), with every weight read once, as the readable layers read it.
What changes, all prepared once — the weights when a model is first stepped (`prepare`, in
core/models/qwen35_lean_weights.py), the scratch when a static cache is made (`layer_views`) — nothing per
token:

* **one matrix per input side**: the Gated DeltaNet layer's q/k/v, z, b and a projections are one
  matrix (one GEMV), the MLP's gate and up are one, the attention's q(+gate), k and v are one. The
  module's own weights become views of the joined matrix, so the eager layers keep reading the same
  numbers; on a CPU in fp32 a matrix with more outputs than inputs is laid (in, out), the way torch's
  matrix × vector reads it fastest there (`layout_for`); on a CPU in bf16 each matrix also gets a copy
  packed once by oneDNN, whose products read ~1.5× faster than F.linear's (`Matrix`, `times`);
* **constants folded**: each RMSNorm's `1 + w` (and its √D), the fade's `exp(A_log)`, the convolution's
  taps laid out (K, C); rotary's "rotate half" times sin is a roll of the halves times [−sin, sin];
* **cheaper norms**: on a CPU `F.rms_norm` is a composite of ~10 aten ops, so every RMSNorm (the L2
  normalisation of q and k too, with ε/K and weight K^{-1/2}) is four: x · (w·√D) / hypot(‖x‖, √(ε·D))
  (`rms`); on CUDA `F.rms_norm` is one fused kernel and is kept;
* **fewer passes**: the residual add rides inside the output projection (`addmm`); the board is faded in
  place, read once for [q, k] in one batched product and written in place (`delta_update`: three passes
  over it, where a fused kernel makes one read and one write); the read-out is left unscaled, the gated
  norm's ε scaled by K instead (RMSNorm(c·o; ε) = RMSNorm(o; ε/c²));
* **one nonlinearity for both gates**: β = σ(b) and α = exp(−A·softplus(a + dt_bias)) = σ(−(a + dt_bias))^A
  come from one sigmoid, in place, over [b, −a − dt_bias];
* **no per-token views or allocation in a board layer**: its projection, convolution, gates, [q, k],
  read and read-out are written into buffers made with the cache (`out=`), and every view the step reads
  them through is made then too (`BoardViews`; on a CPU a view costs a Python call and an aten op, as
  much as a small product). The convolution window is stored (B, K − 1, C) so a token's taps are
  contiguous rows (the eager layers see its (B, C, K − 1) transposed view), and KV rows are written in
  place (core/models/static_kv.py). Fixed addresses are also what a CUDA graph replays.

What stays: three passes over each board (1 MiB per layer at 0.8B widths), each op's dispatch, and the
slow first op after each matrix × vector (its weights have pushed everything else out of the caches).
torch.compile of the board layer took ~50 s here and gained nothing measurable, so it is not used.

`lean_step(model, lean, ids, cache)` is what `run_static` runs for one token;
tests/core/models/test_qwen35_lean.py checks its logits equal the eager step's (fp32 to 1e-5 of the largest
over a generation; bf16 as close to fp32 as the eager bf16 step), `delta_update` against
core/ops/gated_delta_rule.step, `rms` against F.rms_norm, a batch of two against each alone, and counts its
ops.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from core.models.qwen35_lean_weights import (
    LeanAttention,
    LeanBoard,
    LeanMLP,
    LeanWeights,
    Norm,
    plus_times,
    times,
)
from core.models.static_kv import StaticKV, attend

# ------------------------------------------------------------------------------------------------
# The step
# ------------------------------------------------------------------------------------------------


def _f32(t: Tensor) -> Tensor:
    """t in fp32, without an op when it already is."""
    return t if t.dtype == torch.float32 else t.float()


def _cast(t: Tensor, dtype: torch.dtype) -> Tensor:
    return t if t.dtype == dtype else t.to(dtype)


def rms(x: Tensor, n: Norm, out: Tensor | None = None, fused: bool | None = None) -> Tensor:
    """RMSNorm of x (…, D) over its last axis, in fp32 whatever x's dtype, into `out` (fp32, x's shape) if
    given: F.rms_norm's one kernel on CUDA; on a CPU x · (w·√D) / hypot(‖x‖, √(ε·D)), four ops where
    F.rms_norm calls ~10 (`Norm`). `fused` picks F.rms_norm (default: when x is on CUDA)."""
    if x.is_cuda if fused is None else fused:
        normed = F.rms_norm(_f32(x), n.weight.shape, n.weight, n.eps)
        return normed if out is None else out.copy_(normed)
    length = torch.linalg.vector_norm(x, dim=-1, keepdim=True, dtype=torch.float32)  # (…, 1) ‖x‖ in fp32
    root = torch.hypot(length, n.floor)  # (…, 1) sqrt(Σx² + ε·D)
    if n.scaled is None:
        return torch.div(x, root, out=out)
    return torch.mul(x, n.scaled, out=out).div_(root)


def _norm(x: Tensor, n: Norm) -> Tensor:
    """Qwen3.5's RMSNorm (x / rms(x) · (1 + w), in fp32, cast back to x's dtype); x: (B, D)."""
    return _cast(rms(x, n), x.dtype)


@dataclass
class MLPViews:
    """The MLP's scratch: its joined gate/up output, written in place (out=), and the two halves' views."""

    gate_up: Tensor  # (B, 2I) model dtype
    gate: Tensor  # (B, I) view
    up: Tensor  # (B, I) view


def mlp_views(m: LeanMLP, batch: int) -> MLPViews:
    gate_up = m.gate_up_t.dense.new_empty(batch, 2 * m.intermediate)  # (B, 2I)
    return MLPViews(gate_up, *gate_up.split(m.intermediate, dim=-1))


def _mlp_step(x: Tensor, m: LeanMLP, w: MLPViews) -> Tensor:
    """x + down(silu(gate(h)) · up(h)), h = norm(x): one GEMV for gate and up, the add inside down's."""
    times(_norm(x, m.post_norm), m.gate_up_t, out=w.gate_up)  # (B, 2I)
    return plus_times(x, F.silu(w.gate).mul_(w.up), m.down_t)  # (B, D)


@dataclass
class BoardViews:
    """One board layer's memory and scratch as the lean step reads them, made once with the cache: views of
    the cache's own board and window, and buffers the step writes its intermediate results into (out=) with
    the views it reads them through — so a token's step makes no views of its own (each a Python call and an
    aten op: on a CPU, as dear as a small product)."""

    heads: Tensor  # (B·Hv, K, V) the board, one matrix per value head (its read)
    groups: Tensor  # (B, Hk, G, K, V) the same board, value heads under the q/k head they share (fade, write)
    window: Tensor  # (B, kernel − 1, C) the convolution window, one row per past token
    proj: Tensor  # (B, C + Vd + 2Hv) model dtype: the joined projection's output
    mixed: Tensor  # (B, 1, C) view of proj: the convolution's channels
    z: Tensor  # (B, Hv, V) view of proj: the output gate
    gate_in: Tensor  # (B, 2, Hk, G, 1, 1) view of proj: [b, a]
    rows: Tensor  # (B, kernel, C) model dtype: the window's rows, then this token's
    next_window: Tensor  # (B, kernel − 1, C) view of rows: the window after this token
    weighted: Tensor  # (B, kernel, C) model dtype: rows × taps
    conv: Tensor  # (B, C) model dtype: the convolution's output, SiLU'd in place
    qk_in: Tensor  # (B, 2, Hk, K) view of conv: q and k before normalisation
    v_in: Tensor  # (B, Hk, G, 1, V) view of conv: v in the model's dtype
    v: Tensor  # (B, Hk, G, 1, V) fp32: v_in itself in fp32, a buffer it is copied into otherwise
    gates: Tensor  # (B, 2, Hk, G, 1, 1) fp32: [β, α] once computed in place
    beta: Tensor  # (B, Hk, G, 1, 1) view
    alpha: Tensor  # (B, Hk, G, 1, 1) view
    qk: Tensor  # (B, Hk, 1, 2, K) fp32: the L2-normalised [q, k] of each q/k head, contiguous
    qk_out: Tensor  # (B, 2, Hk, K) view of qk in the order the normalisation reads qk_in
    q: Tensor  # (B, Hk, 1, 1, K) view
    k: Tensor  # (B, Hk, 1, 1, K) view
    k_col: Tensor  # (B, Hk, 1, K, 1) view: k as a column, for the write k uᵀ
    pairs: Tensor  # (B·Hv, 2, K) fp32: each value head's [q, k] (a view of qk when G = 1, a buffer otherwise)
    read: Tensor  # (B·Hv, 2, V) fp32: [q, k]ᵀ αS
    read_q: Tensor  # (B, Hk, G, 1, V) view
    read_k: Tensor  # (B, Hk, G, 1, V) view
    u: Tensor  # (B, Hk, G, 1, V) fp32: β (v − kᵀαS)
    out: Tensor  # (B, Hk, G, 1, V) fp32: S_newᵀ q, unscaled
    out_heads: Tensor  # (B, Hv, V) view of out
    gated: Tensor  # (B, Hv, V) fp32: the gated norm's output
    gated_flat: Tensor  # (B, Vd) view of gated
    mlp: MLPViews


def board_views(board: Tensor, window: Tensor, b: LeanBoard) -> BoardViews:
    """The views and scratch for a board (B, Hv, K, V) fp32 and a convolution window (B, C, kernel − 1) — in a
    static cache the transposed view of (B, kernel − 1, C) rows, so a token's taps are contiguous."""
    C, Vd, Hk, Hv, K, V = b.sizes
    B, G, dtype, kernel = board.shape[0], Hv // Hk, window.dtype, b.taps.shape[0]
    f32 = {"dtype": torch.float32, "device": board.device}
    proj = window.new_empty(B, C + Vd + 2 * Hv)
    mixed, z, gate_in = proj.split((C, Vd, 2 * Hv), dim=-1)
    rows = window.new_empty(B, kernel, C)
    conv = window.new_empty(B, C)
    qk_in, v = conv.split((2 * Hk * K, Hv * V), dim=-1)
    v = v.view(B, Hk, G, 1, V)
    gates = torch.empty(B, 2, Hk, G, 1, 1, **f32)
    qk = torch.empty(B, Hk, 1, 2, K, **f32)
    read = torch.empty(B * Hv, 2, V, **f32)
    read_q, read_k = read.view(B, Hk, G, 2, V).split(1, dim=3)
    out, gated = torch.empty(B, Hk, G, 1, V, **f32), torch.empty(B, Hv, V, **f32)
    return BoardViews(
        heads=board.view(B * Hv, K, V),
        groups=board.view(B, Hk, G, K, V),
        window=window.transpose(1, 2),
        proj=proj,
        mixed=mixed.unsqueeze(1),
        z=z.view(B, Hv, V),
        gate_in=gate_in.view(B, 2, Hk, G, 1, 1),
        rows=rows,
        next_window=rows[:, 1:],
        weighted=torch.empty_like(rows),
        conv=conv,
        qk_in=qk_in.view(B, 2, Hk, K),
        v_in=v,
        v=v if dtype == torch.float32 else torch.empty(v.shape, **f32),
        gates=gates,
        beta=gates[:, 0],
        alpha=gates[:, 1],
        qk=qk,
        qk_out=qk.view(B, Hk, 2, K).transpose(1, 2),
        q=qk[:, :, :, :1],
        k=qk[:, :, :, 1:],
        k_col=qk[:, :, :, 1:].transpose(-1, -2),
        pairs=qk.view(B * Hv, 2, K) if G == 1 else torch.empty(B * Hv, 2, K, **f32),
        read=read,
        read_q=read_q,
        read_k=read_k,
        u=torch.empty(B, Hk, G, 1, V, **f32),
        out=out,
        out_heads=out.view(B, Hv, V),
        gated=gated,
        gated_flat=gated.view(B, Vd),
        mlp=mlp_views(b.mlp, B),
    )


def delta_update(m: BoardViews) -> Tensor:
    """The gated delta rule for one token on the board behind `m`, in place, in three passes over it: S ← αS,
    one batched matrix product reads [q, k]ᵀ from the faded board, then S += k uᵀ.

        u = β (v − kᵀ(αS))            the correction the write makes
        S_new = αS + k uᵀ             = (I − β k kᵀ) α S + β k vᵀ
        S_newᵀ q = (αS)ᵀq + u (k·q)   the read-out, from the faded board's read

    The fade goes first because it streams the board from memory faster than the matrix product reads it
    (measured here: a 1 MiB board out of cache, ~15 % less for the three passes), and the product then reads
    a board in cache. Reads m.qk (the L2-normalised [q, k]), m.v, m.alpha and m.beta, all fp32; writes
    m.out = S_newᵀ q, unscaled (no K^{-1/2}): (B, Hk, G, 1, V), and returns it."""
    B, Hk, G, K, V = m.groups.shape
    m.groups.mul_(m.alpha)  # S ← αS
    if G > 1:  # each value head's [q, k]: its q/k head's, repeated
        m.pairs.view(B, Hk, G, 2, K).copy_(m.qk.expand(B, Hk, G, 2, K))
    torch.bmm(m.pairs, m.heads, out=m.read)  # (B·Hv, 2, V): [qᵀαS, kᵀαS]
    torch.sub(m.v, m.read_k, out=m.u).mul_(m.beta)  # β (v − kᵀαS)
    torch.addcmul(m.read_q, m.u, (m.q * m.k).sum(-1, keepdim=True), out=m.out)  # qᵀαS + (k·q) u
    m.groups.addcmul_(m.k_col, m.u)  # S += k uᵀ, broadcast: no (K, V) product is built
    return m.out


def board_step(x: Tensor, b: LeanBoard, m: BoardViews) -> Tensor:
    """One token through a Gated DeltaNet layer and its MLP. x: (B, D) → (B, D); updates the board and the
    window behind `m` in place, its intermediate results written into m's buffers."""
    times(_norm(x, b.in_norm), b.in_t, out=m.proj)  # (B, C + Vd + 2Hv): mixed, z, [b, a]

    # short causal convolution: the window's kernel − 1 rows and this token's, one weighted sum per channel
    torch.cat([m.window, m.mixed], dim=1, out=m.rows)  # (B, kernel, C)
    m.window.copy_(m.next_window)  # the window moves on by one token, in place
    F.silu(torch.sum(torch.mul(m.rows, b.taps, out=m.weighted), dim=1, out=m.conv), inplace=True)  # (B, C)
    rms(m.qk_in, b.qk_norm, out=m.qk_out)  # L2-normalised q and k, fp32, laid out (B, Hk, 1, 2, K)
    if m.v is not m.v_in:
        m.v.copy_(m.v_in)  # v in fp32 (a bf16 model)
    torch.addcmul(b.gate_shift, m.gate_in, b.gate_sign, out=m.gates).sigmoid_()  # [σ(b), σ(−a − dt_bias)]
    m.alpha.pow_(b.fade_power)  # α = σ(−a − dt_bias)^A = exp(−A·softplus(a + dt_bias))
    delta_update(m)  # m.out: (B, Hk, G, 1, V) fp32

    # gated RMSNorm per value head (ε · K: the read-out skipped its K^{-1/2}), then out_proj + residual
    rms(m.out_heads, b.out_norm, out=m.gated).mul_(F.silu(_f32(m.z)))  # (B, Hv, V) fp32
    x = plus_times(x, _cast(m.gated_flat, x.dtype), b.out_t)  # (B, D)
    return _mlp_step(x, b.mlp, m.mlp)


def attention_step(
    x: Tensor, a: LeanAttention, kv: StaticKV, start: int, rotary: tuple[Tensor, Tensor], w: MLPViews
) -> Tensor:
    """One token through a gated attention layer and its MLP, its K/V row written at `start`.
    x: (B, D) → (B, D); rotary = (cos, signed sin), each (r,), at this position (`rotary_at`)."""
    H, Hkv, Dh = a.sizes
    B = x.shape[0]
    proj = times(_norm(x, a.in_norm), a.in_t)  # (B, 2H·Dh + 2Hkv·Dh)
    qg, k, v = proj.split([2 * H * Dh, Hkv * Dh, Hkv * Dh], dim=-1)
    q, gate = qg.view(B, H, 2 * Dh).split(Dh, dim=-1)  # (B, H, Dh) each
    q = _rotate(_norm(q, a.q_norm), rotary)  # (B, H, Dh)
    k = _rotate(_norm(k.view(B, Hkv, Dh), a.k_norm), rotary)  # (B, Hkv, Dh)
    out = attend(q.unsqueeze(2), k.unsqueeze(2), v.view(B, Hkv, 1, Dh), kv, start)  # (B, H, 1, Dh)
    out = out.view(B, H, Dh).mul_(torch.sigmoid(gate))  # the output gate
    x = plus_times(x, out.view(B, H * Dh), a.out_t)  # (B, D)
    return _mlp_step(x, a.mlp, w)


def _rotate(x: Tensor, rotary: tuple[Tensor, Tensor]) -> Tensor:
    """Rotary on the first r channels of x (B, H, Dh), in place: t·cos + rotate_half(t)·sin, where
    rotate_half(t)·sin = cat(−t₂, t₁)·sin = roll(t, r/2)·[−sin, sin] (t₁, t₂ its halves)."""
    cos, signed_sin = rotary
    r = cos.shape[0]
    turn = x[..., :r]  # (B, H, r) a view
    half = turn.roll(r // 2, dims=-1)  # (B, H, r) the halves swapped: [t₂, t₁]
    turn.mul_(cos).addcmul_(half, signed_sin)
    return x


def layer_views(layer: LeanBoard | LeanAttention, memory) -> BoardViews | MLPViews:
    """A layer's scratch for a cache: BoardViews over a BoardMemory's board and window; an attention layer's
    MLPViews, for the batch of its StaticKV."""
    if isinstance(layer, LeanBoard):
        return board_views(memory.board, memory.conv_window, layer)
    return mlp_views(layer.mlp, memory.keys.shape[0])


def rotary_at(lean: LeanWeights, position: int, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    """cos and [−sin, sin] (r,) of every rotating pair at `position` (fp32 angles, cast as the eager
    rotate casts them)."""
    angles = lean.inv_freq2 * float(position)  # (r,)
    return angles.cos().to(dtype), angles.sin().mul_(lean.half_sign).to(dtype)


@torch.no_grad()
def lean_step(model, lean: LeanWeights, ids: Tensor, cache) -> Tensor:
    """ids (B, 1) after `cache.position` tokens → logits (B, vocab). `cache` is a Qwen35StaticCache: per layer
    a StaticKV or a BoardMemory, and `cache.views` its scratch: BoardViews beside a board, MLPViews beside a
    StaticKV (`layer_views`)."""
    start = cache.position
    x = F.embedding(ids[:, 0], model.embed_tokens.weight)  # (B, D)
    rotary = rotary_at(lean, start, x.dtype)
    for layer, memory, views in zip(lean.layers, cache.memory, cache.views, strict=True):
        if isinstance(layer, LeanBoard):
            x = board_step(x, layer, views)
        else:
            x = attention_step(x, layer, memory, start, rotary, views)
    cache.position = start + 1
    return times(_norm(x, lean.final_norm), lean.head_t)  # (B, vocab)
