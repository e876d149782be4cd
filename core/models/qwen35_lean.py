"""Qwen3.5's decode step with its small operations folded away: the same maths as the course's layers
(core/models/qwen35_layers.py, the oracle), in fewer and larger ops.

A batch-1 decode step is a chain of matrix × vector products; everything between them — norms, the
short convolution, gates, views, casts — costs a few µs of dispatch each on a CPU (more right after a
matrix × vector has streamed its weights through the caches) and a kernel launch each on a GPU. Written
for reading, a Qwen3.5 layer calls ~120 aten ops per token; this step calls 48 in a Gated DeltaNet layer
and 37 in an attention layer (fp32; torch.profiler, core/gpu/timing/kernels.py), with every weight read
once, as the readable layers read it. What changes, all prepared once when a static cache is made
(`prepare`), nothing per token:

* **one matrix per input side**: the Gated DeltaNet layer's q/k/v, z, b and a projections are one
  matrix (one GEMV), the MLP's gate and up are one, the attention's q(+gate), k and v are one. The
  module's own weights become views of the joined matrix, so nothing is stored twice and the eager
  layers keep reading the same numbers; on a CPU in fp32 every matrix is laid (in, out), the way
  torch's matrix × vector reads fastest there (`layout_for`);
* **constants folded**: each RMSNorm's `1 + w`, the fade's `exp(A_log)`, the convolution's taps laid
  out (K, C); rotary's "rotate half" times sin is a roll of the halves times [−sin, sin];
* **fewer passes**: RMSNorm is one op (`F.rms_norm`; the L2 normalisation of q and k is the same op
  with ε/K and weight K^{-1/2}); the residual add rides inside the output projection (`addmm`); the
  board step folds the fade into its one read of S (core/ops/in_place.py's form) and leaves the read-out
  unscaled, the gated norm's ε scaled by K instead (RMSNorm(c·o; ε) = RMSNorm(o; ε/c²));
* **one nonlinearity for both gates**: β = σ(b) and α = exp(−A·softplus(a + dt_bias)) = σ(−(a + dt_bias))^A
  come from one sigmoid over [b, −a − dt_bias];
* **no per-token allocation of the caches**: the convolution window is stored (B, K − 1, C) so a
  token's taps are contiguous rows (the eager layers see its (B, C, K − 1) transposed view), KV rows
  are written in place (core/models/static_kv.py), and the views of each board the step needs are made
  with the cache (`board_views`).

What stays: the board is read once and faded and written in two more passes (three reads and two writes
of 1 MiB per layer at 0.8B widths, where a fused kernel makes one of each), and each op still pays its
dispatch. torch.compile of the board layer took ~50 s here and gained nothing measurable, so it is not used.

`lean_step(model, lean, ids, cache)` is what `run_static` runs for one token;
tests/core/models/test_qwen35_lean.py checks its logits equal the eager step's (fp32 to 1e-5 of the largest
over a generation; bf16 as close to fp32 as the eager bf16 step) and counts its ops.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from core.models.qwen35 import BOARD
from core.models.static_kv import StaticKV, attend

# ------------------------------------------------------------------------------------------------
# Joined matrices: module weights become views of one tensor
# ------------------------------------------------------------------------------------------------

IN_OUT, OUT_IN = "in_out", "out_in"  # how a joined matrix lies in memory: (in, Σ out) or (Σ out, in) rows


def layout_for(device: torch.device, dtype: torch.dtype) -> str:
    """(in, out) rows — `x @ W` — for fp32 on a CPU, where torch reads the 0.8B's 1024-wide matrices faster
    that way (measured on this project's 2-core CPU: four layers' matrices, 344 MB, in 19 ms against 24 ms
    on one thread, 15 against 18 on two); (out, in) rows — `x @ Wᵀ`, F.linear's own — elsewhere: bf16 on
    a CPU without bf16 instructions took 15× longer (in, out)."""
    return IN_OUT if device.type == "cpu" and dtype == torch.float32 else OUT_IN


def join(modules: list[torch.nn.Linear], layout: str) -> Tensor:
    """One (in, Σ out) matrix W for `x @ W` whose column blocks are `modules`' weights, which become views
    of it (same values, same requires_grad), stored as `layout` says.

    Already joined in that layout (as a previous call left them): the matrix is rebuilt as a view of the
    same storage and nothing is copied. Otherwise the weights are copied once into the joined tensor."""
    weights = [m.weight for m in modules]
    n_in, sizes = weights[0].shape[1], [w.shape[0] for w in weights]
    kept = _joined(weights, layout, n_in, sum(sizes))
    if kept is not None:
        return kept
    if layout == OUT_IN:
        joined = torch.cat([w.detach() for w in weights])  # (Σ out, in)
        blocks, step = joined.split(sizes), joined.t()
    else:
        step = torch.cat([w.detach().t() for w in weights], dim=1)  # (in, Σ out)
        blocks = [block.t() for block in step.split(sizes, dim=1)]  # (out, in) views, columns of `step`
    for module, w, block in zip(modules, weights, blocks, strict=True):
        module.weight = torch.nn.Parameter(block, requires_grad=w.requires_grad)
    return step


def _joined(weights: list[Tensor], layout: str, n_in: int, total: int) -> Tensor | None:
    """The joined (in, Σ out) view when `weights` already lie as consecutive blocks of one storage in
    `layout`; None otherwise."""
    storage = weights[0].untyped_storage().data_ptr()
    strides = (n_in, 1) if layout == OUT_IN else (1, total)
    at = weights[0].data_ptr()
    for w in weights:
        if w.untyped_storage().data_ptr() != storage or w.stride() != strides or w.data_ptr() != at:
            return None
        at += w.shape[0] * (n_in if layout == OUT_IN else 1) * w.element_size()
    first = weights[0].detach()
    if layout == OUT_IN:
        return first.as_strided((total, n_in), (n_in, 1)).t()
    return first.as_strided((n_in, total), (total, 1))


# ------------------------------------------------------------------------------------------------
# What each layer needs, prepared once
# ------------------------------------------------------------------------------------------------


@dataclass
class LeanMLP:
    post_norm: Tensor  # (D,) fp32: 1 + post_attention_layernorm.weight
    gate_up_t: Tensor  # (D, 2I) for x @ W: gate's columns, then up's
    down_t: Tensor  # (I, D)
    intermediate: int


@dataclass
class LeanBoard:
    """A Gated DeltaNet layer: one projection, the convolution taps, the gates' constants."""

    in_norm: Tensor  # (D,) fp32: 1 + input_layernorm.weight
    in_t: Tensor  # (D, C + Vd + 2Hv) for x @ W: q, k, v (the convolution's channels), z, b, a
    taps: Tensor  # (K, C) the depthwise convolution's weights, tap j over every channel
    gate_sign: Tensor  # (2, Hk, G, 1, 1) fp32: +1 over b, −1 over a
    gate_shift: Tensor  # (2, Hk, G, 1, 1) fp32: 0 over b, −dt_bias over a
    fade_power: Tensor  # (Hk, G, 1, 1) fp32: A = exp(A_log); α = σ(−(a + dt_bias))^A
    qk_weight: Tensor  # (K,) fp32: K^{-1/2}, so rms_norm(x; ε/K) · K^{-1/2} = x / sqrt(Σx² + ε)
    qk_eps: float
    out_weight: Tensor  # (V,) fp32: the gated norm's weight
    out_eps: float  # the gated norm's ε · K: the read-out is left unscaled by K^{-1/2}
    out_t: Tensor  # (Hv·V, D)
    mlp: LeanMLP
    sizes: tuple[int, int, int, int, int, int]  # C, Vd, Hk, Hv, K (head dim of q/k), V


@dataclass
class LeanAttention:
    """A gated attention layer: one projection for q(+gate), k and v; the q/k norms."""

    in_norm: Tensor  # (D,) fp32
    in_t: Tensor  # (D, 2H·Dh + 2Hkv·Dh) for x @ W: q and its gate per head, k, v
    q_norm: Tensor  # (Dh,) fp32: 1 + q_norm.weight
    k_norm: Tensor  # (Dh,) fp32
    out_t: Tensor  # (H·Dh, D)
    mlp: LeanMLP
    sizes: tuple[int, int, int]  # H, Hkv, Dh


@dataclass
class LeanWeights:
    """Every layer's prepared tensors, the ends, and the fingerprint of the weights they came from."""

    layers: list[LeanBoard | LeanAttention]
    final_norm: Tensor  # (D,) fp32
    head_t: Tensor  # (D, vocab): lm_head.weight as x @ W reads it
    inv_freq2: Tensor  # (r,) fp32: rotary frequencies, twice (the "rotate half" layout)
    half_sign: Tensor  # (r,) fp32: −1 over the first half, +1 over the second
    eps: float
    fingerprint: tuple


def _fingerprint(model) -> tuple:
    """Where every parameter lives and how often it was written: moved, retyped or trained → different."""
    return tuple((p.device, p.dtype, p.data_ptr(), p._version) for p in model.parameters())


def _one_plus(norm) -> Tensor:
    return 1.0 + norm.weight.detach().float()


def _mlp(layer, layout: str) -> LeanMLP:
    mlp = layer.mlp
    return LeanMLP(
        _one_plus(layer.post_attention_layernorm),
        join([mlp.gate_proj, mlp.up_proj], layout),
        join([mlp.down_proj], layout),
        mlp.gate_proj.weight.shape[0],
    )


def _board(layer, layout: str) -> LeanBoard:
    gdn = layer.linear_attn
    c = gdn.c
    hv, dk = gdn.v_heads, gdn.dk
    f32 = {"dtype": torch.float32, "device": gdn.A_log.device}
    grouped = (2, gdn.k_heads, hv // gdn.k_heads, 1, 1)  # [b; a] × q/k heads × value heads in each
    return LeanBoard(
        in_norm=_one_plus(layer.input_layernorm),
        in_t=join([gdn.in_proj_qkv, gdn.in_proj_z, gdn.in_proj_b, gdn.in_proj_a], layout),
        taps=gdn.conv1d.weight.detach()[:, 0, :].t().contiguous(),  # (K, C)
        gate_sign=torch.cat([torch.ones(hv, **f32), -torch.ones(hv, **f32)]).view(grouped),
        gate_shift=torch.cat([torch.zeros(hv, **f32), -gdn.dt_bias.detach().float()]).view(grouped),
        fade_power=gdn.A_log.detach().float().exp().view(grouped[1:]),
        qk_weight=torch.full((dk,), dk**-0.5, **f32),
        qk_eps=1e-6 / dk,  # l2_normalise's ε, spread over the mean's K
        out_weight=gdn.norm.weight.detach().float(),
        out_eps=gdn.norm.eps * dk,  # ε / scale², scale = K^{-1/2}
        out_t=join([gdn.out_proj], layout),
        mlp=_mlp(layer, layout),
        sizes=(c.conv_channels(), c.value_dim, gdn.k_heads, hv, dk, gdn.dv),
    )


def _attention(layer, layout: str) -> LeanAttention:
    attn = layer.self_attn
    return LeanAttention(
        in_norm=_one_plus(layer.input_layernorm),
        in_t=join([attn.q_proj, attn.k_proj, attn.v_proj], layout),
        q_norm=_one_plus(attn.q_norm),
        k_norm=_one_plus(attn.k_norm),
        out_t=join([attn.o_proj], layout),
        mlp=_mlp(layer, layout),
        sizes=(attn.heads, attn.kv_heads, attn.dh),
    )


@torch.no_grad()
def prepare(model) -> LeanWeights:
    """The lean step's tensors for `model` (a core.models.qwen35.Qwen35), made once and kept on it;
    made again only when its parameters moved, changed type or were written since (`_fingerprint`)."""
    kept = model.__dict__.get("_lean_weights")
    if kept is not None and kept.fingerprint == _fingerprint(model):
        return kept
    c = model.config
    device, dtype = model.embed_tokens.weight.device, model.embed_tokens.weight.dtype
    layout = layout_for(device, dtype)
    layers = [
        _board(layer, layout) if layer.kind == BOARD else _attention(layer, layout) for layer in model.layers
    ]
    tied = model.lm_head.weight is model.embed_tokens.weight
    head = join([model.lm_head], layout)
    if tied:  # the input table is the head's matrix: one Parameter, now a view of the joined tensor
        model.embed_tokens.weight = model.lm_head.weight
    attention = [layer.self_attn for layer in model.layers if layer.kind != BOARD]
    inv_freq = (
        attention[0].inv_freq.float().to(device)  # the layers' own (every attention layer makes the same)
        if attention
        else torch.zeros(c.rotary_dim // 2, device=device)
    )
    lean = LeanWeights(
        layers=layers,
        final_norm=_one_plus(model.norm),
        head_t=head,
        inv_freq2=torch.cat([inv_freq, inv_freq]),
        half_sign=torch.cat([-torch.ones_like(inv_freq), torch.ones_like(inv_freq)]),
        eps=c.rms_norm_eps,
        fingerprint=(),
    )
    lean.fingerprint = _fingerprint(model)  # after `join` replaced the weights by views
    model.__dict__["_lean_weights"] = lean  # a plain attribute: not a submodule, not in the state dict
    return lean


def matrices(lean: LeanWeights) -> list[Tensor]:
    """Every matrix one lean step multiplies a vector by, (in, out) views, in the order it does: what the
    step's matrix products alone read (bench/qwen35_cpu.py times them beside the whole step)."""
    out = []
    for layer in lean.layers:
        out += [layer.in_t, layer.out_t, layer.mlp.gate_up_t, layer.mlp.down_t]
    return [*out, lean.head_t]


# ------------------------------------------------------------------------------------------------
# The step
# ------------------------------------------------------------------------------------------------


def _f32(t: Tensor) -> Tensor:
    """t in fp32, without an op when it already is."""
    return t if t.dtype == torch.float32 else t.float()


def _cast(t: Tensor, dtype: torch.dtype) -> Tensor:
    return t if t.dtype == dtype else t.to(dtype)


def _norm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
    """Qwen3.5's RMSNorm (x / rms(x) · (1 + w), in fp32, cast back) as one op; x: (B, D)."""
    if x.dtype == torch.float32:
        return F.rms_norm(x, weight.shape, weight, eps)
    return F.rms_norm(x.float(), weight.shape, weight, eps).to(x.dtype)


def _mlp_step(x: Tensor, m: LeanMLP, eps: float) -> Tensor:
    """x + down(silu(gate(h)) · up(h)), h = norm(x): one GEMV for gate and up, the add inside down's."""
    gate, up = torch.mm(_norm(x, m.post_norm, eps), m.gate_up_t).chunk(2, dim=-1)  # (B, I) each
    return torch.addmm(x, F.silu(gate).mul_(up), m.down_t)  # (B, D)


@dataclass
class BoardViews:
    """One board layer's memory as the lean step reads it: views of the cache's own tensors, made once."""

    heads: Tensor  # (B·Hv, K, V) the board, one matrix per value head (its read)
    groups: Tensor  # (B, Hk, G, K, V) the same board, value heads under the q/k head they share (its update)
    window: Tensor  # (B, kernel − 1, C) the convolution window, one row per past token


def board_views(board: Tensor, window: Tensor, b: LeanBoard) -> BoardViews:
    """The views of a board (B, Hv, K, V) and a convolution window (B, C, kernel − 1) — in a static cache the
    transposed view of (B, kernel − 1, C) rows, so a token's taps are contiguous."""
    _, _, Hk, Hv, K, V = b.sizes
    B = board.shape[0]
    return BoardViews(board.view(B * Hv, K, V), board.view(B, Hk, Hv // Hk, K, V), window.transpose(1, 2))


def board_step(x: Tensor, b: LeanBoard, m: BoardViews, eps: float) -> Tensor:
    """One token through a Gated DeltaNet layer and its MLP. x: (B, D) → (B, D); updates the board and the
    window behind `m` in place. G = Hv / Hk value heads share each q/k head."""
    C, Vd, Hk, Hv, K, V = b.sizes
    B, G = x.shape[0], Hv // Hk
    proj = torch.mm(_norm(x, b.in_norm, eps), b.in_t)  # (B, C + Vd + 2Hv)
    mixed, z, gates = proj.split((C, Vd, 2 * Hv), dim=-1)  # (B, C), (B, Vd), (B, 2Hv)

    # short causal convolution: the window's kernel − 1 rows and this token's, one weighted sum per channel
    taps = torch.cat([m.window, mixed.unsqueeze(1)], dim=1)  # (B, kernel, C)
    m.window.copy_(taps[:, 1:])  # the window moves on by one token, in place
    qk, v = F.silu((taps * b.taps).sum(1)).split((2 * Hk * K, Hv * V), dim=-1)  # (B, 2·Hk·K), (B, Hv·V)
    qk = F.rms_norm(_f32(qk.view(B, 2, Hk, K)), (K,), b.qk_weight, b.qk_eps)  # L2-normalised q and k
    qk = qk.transpose(1, 2).unsqueeze(2)  # (B, Hk, 1, 2, K): [q, k] of each q/k head
    v = _f32(v.view(B, Hk, G, 1, V))
    gates = torch.addcmul(b.gate_shift, gates.view(B, 2, Hk, G, 1, 1), b.gate_sign)  # [b, −a − dt_bias]
    beta, alpha = torch.sigmoid(gates).unbind(1)  # (B, Hk, G, 1, 1) each: β = σ(b), σ(−a − dt_bias)
    alpha = alpha.pow(b.fade_power)  # α = σ(−a − dt_bias)^A = exp(−A·softplus(a + dt_bias))

    # the board: the fade folded into its one read, then faded and written in place (core/ops/in_place.py)
    read = torch.bmm((qk * alpha).reshape(B * Hv, 2, K), m.heads)  # (B·Hv, 2, V): [α qᵀS, α kᵀS]
    read_q, read_k = read.view(B, Hk, G, 2, V).split(1, dim=3)  # (B, Hk, G, 1, V) each
    u = torch.sub(v, read_k).mul_(beta)  # β (v − α kᵀS): the delta rule's correction
    q, k = qk.split(1, dim=3)  # (B, Hk, 1, 1, K) each
    out = torch.addcmul(read_q, u, (q * k).sum(-1, keepdim=True))  # S_newᵀ q, unscaled (B, Hk, G, 1, V)
    m.groups.mul_(alpha)
    m.groups.addcmul_(k.transpose(-1, -2), u)  # S += k uᵀ, broadcast: no (K, V) product is built

    # gated RMSNorm per value head (ε · K: the read-out skipped its K^{-1/2}), then out_proj + residual
    gated = F.rms_norm(out.reshape(B, Hv, V), (V,), b.out_weight, b.out_eps)  # (B, Hv, V) fp32
    gated.mul_(F.silu(_f32(z.view(B, Hv, V))))
    x = torch.addmm(x, _cast(gated.view(B, Vd), x.dtype), b.out_t)  # (B, D)
    return _mlp_step(x, b.mlp, eps)


def attention_step(
    x: Tensor, a: LeanAttention, kv: StaticKV, start: int, rotary: tuple[Tensor, Tensor], eps: float
) -> Tensor:
    """One token through a gated attention layer and its MLP, its K/V row written at `start`.
    x: (B, D) → (B, D); rotary = (cos, signed sin), each (r,), at this position (`rotary_at`)."""
    H, Hkv, Dh = a.sizes
    B = x.shape[0]
    proj = torch.mm(_norm(x, a.in_norm, eps), a.in_t)  # (B, 2H·Dh + 2Hkv·Dh)
    qg, k, v = proj.split([2 * H * Dh, Hkv * Dh, Hkv * Dh], dim=-1)
    q, gate = qg.view(B, H, 2 * Dh).split(Dh, dim=-1)  # (B, H, Dh) each
    q = _rotate(_norm(q, a.q_norm, eps), rotary)  # (B, H, Dh)
    k = _rotate(_norm(k.view(B, Hkv, Dh), a.k_norm, eps), rotary)  # (B, Hkv, Dh)
    out = attend(q.unsqueeze(2), k.unsqueeze(2), v.view(B, Hkv, 1, Dh), kv, start)  # (B, H, 1, Dh)
    out = out.view(B, H, Dh).mul_(torch.sigmoid(gate))  # the output gate
    x = torch.addmm(x, out.view(B, H * Dh), a.out_t)  # (B, D)
    return _mlp_step(x, a.mlp, eps)


def _rotate(x: Tensor, rotary: tuple[Tensor, Tensor]) -> Tensor:
    """Rotary on the first r channels of x (B, H, Dh), in place: t·cos + rotate_half(t)·sin, where
    rotate_half(t)·sin = cat(−t₂, t₁)·sin = roll(t, r/2)·[−sin, sin] (t₁, t₂ its halves)."""
    cos, signed_sin = rotary
    r = cos.shape[0]
    turn = x[..., :r]  # (B, H, r) a view
    half = turn.roll(r // 2, dims=-1)  # (B, H, r) the halves swapped: [t₂, t₁]
    turn.mul_(cos).addcmul_(half, signed_sin)
    return x


def rotary_at(lean: LeanWeights, position: int, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    """cos and [−sin, sin] (r,) of every rotating pair at `position` (fp32 angles, cast as the eager
    rotate casts them)."""
    angles = lean.inv_freq2 * float(position)  # (r,)
    return angles.cos().to(dtype), angles.sin().mul_(lean.half_sign).to(dtype)


@torch.no_grad()
def lean_step(model, lean: LeanWeights, ids: Tensor, cache) -> Tensor:
    """ids (B, 1) after `cache.position` tokens → logits (B, vocab). `cache` is a Qwen35StaticCache: per layer
    a StaticKV or a BoardMemory, and `cache.views` the BoardViews of its boards (None beside a StaticKV)."""
    start = cache.position
    x = F.embedding(ids[:, 0], model.embed_tokens.weight)  # (B, D)
    rotary = rotary_at(lean, start, x.dtype)
    for layer, memory, views in zip(lean.layers, cache.memory, cache.views, strict=True):
        if isinstance(layer, LeanBoard):
            x = board_step(x, layer, views, lean.eps)
        else:
            x = attention_step(x, layer, memory, start, rotary, lean.eps)
    cache.position = start + 1
    return torch.mm(_norm(x, lean.final_norm, lean.eps), lean.head_t)  # (B, vocab)
