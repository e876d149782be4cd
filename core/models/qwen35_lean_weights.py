"""The weights the lean Qwen3.5 step reads (core/models/qwen35_lean.py), prepared once per model.

`prepare` joins each layer's projections into one matrix per input side (the module's own weights become
views of it, so the eager layers read the same numbers), lays it out the way matrix × vector reads fastest
on the device (`layout_for`; on a CPU in bf16 also a oneDNN-packed copy, `Matrix`), and folds constants:
each RMSNorm's `1 + w` and √D (`make_norm`), the fade's `exp(A_log)`, the convolution's taps. `times` and
`plus_times` are the step's two products; `matrices` lists the matrices a step multiplies, for the
benchmark's matrix-products-alone floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from core.models.qwen35 import BOARD

IN_OUT, OUT_IN = "in_out", "out_in"  # how a joined matrix lies in memory: (in, Σ out) or (Σ out, in) rows


@dataclass
class Matrix:
    """A joined weight matrix as the lean step multiplies a vector by it.

    `dense` is the (in, out) matrix for `x @ W` that the modules' weights are views of. `packed` is, on a CPU
    in bf16 (`packs`), the same weights reordered once by oneDNN (torch.ops.mkldnn._reorder_linear_weight, the
    prepacking torch.compile's CPU freezing does for a linear layer): its matrix × vector reads about 1.5×
    faster there than F.linear's (this project's 2-core AVX-512 CPU, one thread, each matrix read from
    memory: 1024 → 8224 at 16.7 GB/s against 10.3, 2048 → 1024 at 11.1 against 9.0, 1024 → 7168 at 14.4
    against 8.8, 3584 → 1024 at 13.5 against 9.4). The price is a second copy of the bf16 weights in memory
    while the model is stepped this way; fp32 gained nothing from packing and keeps `dense` alone."""

    dense: Tensor  # (in, out)
    packed: Tensor | None = None  # oneDNN's opaque layout of the same weights, or None


def packs(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether a matrix on `device` in `dtype` gets a oneDNN-packed copy (`Matrix`): bf16 on a CPU whose
    oneDNN runs bf16 (AVX-512 and later)."""
    return (
        device.type == "cpu"
        and dtype == torch.bfloat16
        and torch.backends.mkldnn.is_available()
        and torch.ops.mkldnn._is_mkldnn_bf16_supported()
    )


def matrix(dense: Tensor) -> Matrix:
    """`dense` (in, out) as a Matrix, packed when `packs` says so for its device and dtype."""
    if not packs(dense.device, dense.dtype):
        return Matrix(dense)
    return Matrix(dense, torch.ops.mkldnn._reorder_linear_weight(dense.t().contiguous(), 1))  # (out, in) rows


def times(h: Tensor, w: Matrix, out: Tensor | None = None) -> Tensor:
    """h (B, in) @ W → (B, out), written into `out` when given."""
    if w.packed is None:
        return torch.mm(h, w.dense, out=out)
    product = torch.ops.mkldnn._linear_pointwise(h, w.packed, None, "none", [], "")
    return product if out is None else out.copy_(product)


def plus_times(x: Tensor, h: Tensor, w: Matrix) -> Tensor:
    """x (B, out) + h (B, in) @ W: the residual add inside the product (addmm; oneDNN's fused "add")."""
    if w.packed is None:
        return torch.addmm(x, h, w.dense)
    return torch.ops.mkldnn._linear_pointwise.binary(h, x, w.packed, None, "add")


def layout_for(device: torch.device, dtype: torch.dtype, n_in: int, n_out: int) -> str:
    """How a joined matrix of `n_in` inputs and `n_out` outputs lies for the fastest matrix × vector.

    (in, out) rows — `x @ W` — for fp32 on a CPU when the matrix has more outputs than inputs; (out, in)
    rows — `x @ Wᵀ`, F.linear's own — otherwise. Measured on this project's 2-core CPU, one thread, fp32
    (bench/qwen35_cpu.py's shapes, each read from memory): 1024 → 8224 at 25.6 GB/s (in, out) against 17.8
    (out, in), 1024 → 7168 at 26.4 against 17.9; but 2048 → 1024 at 19.6 against 22.4 and 3584 → 1024 at
    19.4 against 23.2. bf16 read (in, out) no faster at any shape (7–8.6 GB/s against 8.8–10.3 (out, in));
    on a CPU its products go through the oneDNN-packed copy anyway (`Matrix`)."""
    wide = n_out > n_in
    return IN_OUT if device.type == "cpu" and dtype == torch.float32 and wide else OUT_IN


def join(modules: list[torch.nn.Linear]) -> Matrix:
    """One (in, Σ out) matrix W for `x @ W` whose column blocks are `modules`' weights, which become views
    of it (same values, same requires_grad), stored as `layout_for` says for their device, dtype and shape,
    and packed beside when `packs` says so (`matrix`).

    Already joined in that layout (as a previous call left them): the matrix is rebuilt as a view of the
    same storage and nothing is copied. Otherwise the weights are copied once into the joined tensor."""
    weights = [m.weight for m in modules]
    n_in, sizes = weights[0].shape[1], [w.shape[0] for w in weights]
    layout = layout_for(weights[0].device, weights[0].dtype, n_in, sum(sizes))
    kept = _joined(weights, layout, n_in, sum(sizes))
    if kept is not None:
        return matrix(kept)
    if layout == OUT_IN:
        joined = torch.cat([w.detach() for w in weights])  # (Σ out, in)
        blocks, step = joined.split(sizes), joined.t()
    else:
        step = torch.cat([w.detach().t() for w in weights], dim=1)  # (in, Σ out)
        blocks = [block.t() for block in step.split(sizes, dim=1)]  # (out, in) views, columns of `step`
    for module, w, block in zip(modules, weights, blocks, strict=True):
        module.weight = torch.nn.Parameter(block, requires_grad=w.requires_grad)
    return matrix(step)


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


@dataclass
class Norm:
    """An RMSNorm over the last axis, x / sqrt(mean(x²) + ε) · w, prepared for its device's cheapest form.

    On a CPU `F.rms_norm` is a composite of ~10 aten ops (pow, mean, add, rsqrt, casts, muls); written as
    x · (w·√D) / hypot(‖x‖, √(ε·D)) it is four (`rms`): one reduction, one hypot, one product, one division.
    Elsewhere (CUDA) `F.rms_norm` is one fused kernel and is used as it is."""

    weight: Tensor  # (D,) fp32 w, for F.rms_norm
    eps: float
    scaled: Tensor | None  # (D,) fp32 w·√D; None when w·√D is all ones (the L2 normalisation of q and k)
    floor: Tensor  # () fp32 √(ε·D): hypot(‖x‖, floor) = sqrt(Σx² + ε·D) = √D · sqrt(mean(x²) + ε)


def make_norm(weight: Tensor, eps: float, unit: bool = False) -> Norm:
    """A Norm of `weight` (D,) and `eps`; `unit`: w·√D is one everywhere, so the step skips that product."""
    d = weight.shape[-1]
    w = weight.detach().float()
    floor = torch.tensor(eps * d, dtype=torch.float32, device=w.device).sqrt()
    return Norm(w, eps, None if unit else w * d**0.5, floor)


@dataclass
class LeanMLP:
    post_norm: Norm  # 1 + post_attention_layernorm.weight
    gate_up_t: Matrix  # (D, 2I) for x @ W: gate's columns, then up's
    down_t: Matrix  # (I, D)
    intermediate: int


@dataclass
class LeanBoard:
    """A Gated DeltaNet layer: one projection, the convolution taps, the gates' constants."""

    in_norm: Norm  # 1 + input_layernorm.weight
    in_t: Matrix  # (D, C + Vd + 2Hv) for x @ W: q, k, v (the convolution's channels), z, b, a
    taps: Tensor  # (K, C) the depthwise convolution's weights, tap j over every channel
    gate_sign: Tensor  # (2, Hk, G, 1, 1) fp32: +1 over b, −1 over a
    gate_shift: Tensor  # (2, Hk, G, 1, 1) fp32: 0 over b, −dt_bias over a
    fade_power: Tensor  # (Hk, G, 1, 1) fp32: A = exp(A_log); α = σ(−(a + dt_bias))^A
    qk_norm: Norm  # the L2 normalisation x / sqrt(Σx² + ε) = rms_norm(x; ε/K) · K^{-1/2}
    out_norm: Norm  # the gated norm's weight, ε · K: the read-out is left unscaled by K^{-1/2}
    out_t: Matrix  # (Hv·V, D)
    mlp: LeanMLP
    sizes: tuple[int, int, int, int, int, int]  # C, Vd, Hk, Hv, K (head dim of q/k), V


@dataclass
class LeanAttention:
    """A gated attention layer: one projection for q(+gate), k and v; the q/k norms."""

    in_norm: Norm
    in_t: Matrix  # (D, 2H·Dh + 2Hkv·Dh) for x @ W: q and its gate per head, k, v
    q_norm: Norm  # 1 + q_norm.weight
    k_norm: Norm
    out_t: Matrix  # (H·Dh, D)
    mlp: LeanMLP
    sizes: tuple[int, int, int]  # H, Hkv, Dh


@dataclass
class LeanWeights:
    """Every layer's prepared tensors, the ends, and the fingerprint of the weights they came from."""

    layers: list[LeanBoard | LeanAttention]
    final_norm: Norm
    head_t: Matrix  # (D, vocab): lm_head.weight as x @ W reads it
    inv_freq2: Tensor  # (r,) fp32: rotary frequencies, twice (the "rotate half" layout)
    half_sign: Tensor  # (r,) fp32: −1 over the first half, +1 over the second
    fingerprint: tuple


def _fingerprint(model) -> tuple:
    """Where every parameter lives and how often it was written: moved, retyped or trained → different."""
    return tuple((p.device, p.dtype, p.data_ptr(), p._version) for p in model.parameters())


def _one_plus(norm, eps: float) -> Norm:
    """A Qwen3.5 RMSNorm (x / rms(x) · (1 + w)) with its `1 + w` folded."""
    return make_norm(1.0 + norm.weight.detach().float(), eps)


def _mlp(layer, eps: float) -> LeanMLP:
    mlp = layer.mlp
    return LeanMLP(
        _one_plus(layer.post_attention_layernorm, eps),
        join([mlp.gate_proj, mlp.up_proj]),
        join([mlp.down_proj]),
        mlp.gate_proj.weight.shape[0],
    )


def _board(layer, eps: float) -> LeanBoard:
    gdn = layer.linear_attn
    c = gdn.c
    hv, dk = gdn.v_heads, gdn.dk
    f32 = {"dtype": torch.float32, "device": gdn.A_log.device}
    grouped = (2, gdn.k_heads, hv // gdn.k_heads, 1, 1)  # [b; a] × q/k heads × value heads in each
    return LeanBoard(
        in_norm=_one_plus(layer.input_layernorm, eps),
        in_t=join([gdn.in_proj_qkv, gdn.in_proj_z, gdn.in_proj_b, gdn.in_proj_a]),
        taps=gdn.conv1d.weight.detach()[:, 0, :].t().contiguous(),  # (K, C)
        gate_sign=torch.cat([torch.ones(hv, **f32), -torch.ones(hv, **f32)]).view(grouped),
        gate_shift=torch.cat([torch.zeros(hv, **f32), -gdn.dt_bias.detach().float()]).view(grouped),
        fade_power=gdn.A_log.detach().float().exp().view(grouped[1:]),
        qk_norm=make_norm(torch.full((dk,), dk**-0.5, **f32), 1e-6 / dk, unit=True),  # l2_normalise's ε / K
        out_norm=make_norm(gdn.norm.weight, gdn.norm.eps * dk),  # ε / scale², scale = K^{-1/2}
        out_t=join([gdn.out_proj]),
        mlp=_mlp(layer, eps),
        sizes=(c.conv_channels(), c.value_dim, gdn.k_heads, hv, dk, gdn.dv),
    )


def _attention(layer, eps: float) -> LeanAttention:
    attn = layer.self_attn
    return LeanAttention(
        in_norm=_one_plus(layer.input_layernorm, eps),
        in_t=join([attn.q_proj, attn.k_proj, attn.v_proj]),
        q_norm=_one_plus(attn.q_norm, eps),
        k_norm=_one_plus(attn.k_norm, eps),
        out_t=join([attn.o_proj]),
        mlp=_mlp(layer, eps),
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
    device = model.embed_tokens.weight.device
    eps = c.rms_norm_eps
    layers = [
        _board(layer, eps) if layer.kind == BOARD else _attention(layer, eps)
        for layer in model.layers
    ]
    tied = model.lm_head.weight is model.embed_tokens.weight
    head = join([model.lm_head])
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
        final_norm=_one_plus(model.norm, eps),
        head_t=head,
        inv_freq2=torch.cat([inv_freq, inv_freq]),
        half_sign=torch.cat([-torch.ones_like(inv_freq), torch.ones_like(inv_freq)]),
        fingerprint=(),
    )
    lean.fingerprint = _fingerprint(model)  # after `join` replaced the weights by views
    model.__dict__["_lean_weights"] = lean  # a plain attribute: not a submodule, not in the state dict
    return lean


def matrices(lean: LeanWeights) -> list[Matrix]:
    """Every matrix one lean step multiplies a vector by, in the order it does: what the step's matrix
    products alone read (bench/qwen35_cpu.py times them, through `times`, beside the whole step)."""
    out = []
    for layer in lean.layers:
        out += [layer.in_t, layer.out_t, layer.mlp.gate_up_t, layer.mlp.down_t]
    return [*out, lean.head_t]
