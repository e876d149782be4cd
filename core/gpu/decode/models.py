"""Small decode-only models, sized by a preset, for timing one token at a time on any device.

Three memories, one skeleton (embedding → n_layers × [mixer + feed-forward] → head):

- `AttentionDecoder`  softmax attention over a pre-allocated ("static") KV cache that grows
  a row per token — what llama-bench's `tg @ d` measures — through one
  `F.scaled_dot_product_attention` call per layer. The cache (core.gpu.decode.kv_cache) can have a
  device budget: positions past it live in pinned host memory, streamed every step.
- `StateDecoder`      the same projections around a Gated-DeltaNet fixed state (Yang et al.
  2024, "Gated Delta Networks"): S ← αS + β k (v − Sᵀk)ᵀ, o = Sᵀq — the update of
  `core.ops.gated_delta_rule.step`, written in place so the state is read four times and
  written twice per step, a count `traffic()` can state exactly. It does not grow with context.
  Where Triton runs, the same step can run as one fused kernel a layer (core.gpu.decode.state_triton).
- feed-forward `dense` or `moe` (core.gpu.decode.ffn): equal total parameters.

`kernel_ways()` lists the interchangeable ways a model can run its step here (the MoE's ways of
reading its experts; the state step as PyTorch ops or fused), `use_way()` switches between them
with the weights unchanged, and the benchmarks keep the fastest (core.gpu.timing.ways).

A step never waits for the host: the token is looked up with `index_select` on the device
(indexing with a 0-dim CUDA tensor would copy it to the host, a hidden sync per step) and
positions are plain Python ints, so a whole repetition of steps can be captured as one CUDA
graph. `traffic(pos)` says how many bytes a step moves — the roofline's bytes per token;
tests check it against what torch really touches (core.gpu.decode.traffic).

The weights are random: these models move the bytes a trained model of this shape moves.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import nn

from core.gpu.decode import state_triton, triton_support
from core.gpu.decode.ffn import MOE_FFN_WAYS, DenseFFN, MoEFFN, weight
from core.gpu.decode.kv_cache import KVCache
from core.gpu.decode.sized import SizedModule
from core.gpu.decode.traffic import Traffic
from core.gpu.presets import Preset
from core.i18n import N_, use_language
from core.units import format_bytes, format_params

# The parts of a step that can run more than one way, as a skip list names them (core.gpu.timing.ways).
MOE_PART, STATE_PART = "moe", "state"


def part_way(part: str, way: str) -> str:
    """A way named in its part — 'moe:triton' (the MoE's Triton kernels), not the state's 'triton'."""
    return f"{part}:{way}"


def _rms(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def _bytes(*tensors: torch.Tensor) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def moe_layer(preset: Preset, device: torch.device | str, dtype: torch.dtype, way: str = "gather") -> MoEFFN:
    """One MoE feed-forward layer of the preset's widths and experts."""
    return MoEFFN(
        preset.d_model,
        preset.moe_experts,
        preset.moe_shared,
        preset.moe_top_k,
        preset.expert_hidden,
        torch.device(device),
        dtype,
        way=way,
        gated=preset.moe_gated,
    )


class _Block(nn.Module):
    def __init__(self, preset: Preset, ffn: str, device: torch.device, dtype: torch.dtype) -> None:
        super().__init__()
        d = preset.d_model
        self.wqkv = weight((d, 3 * d), device, dtype)
        self.wo = weight((d, d), device, dtype)
        if ffn == "dense":
            self.ffn: nn.Module = DenseFFN(d, preset.ffn_hidden, device, dtype)
        elif ffn == "dense_moe_size":  # the dense twin of the MoE: same total parameters
            self.ffn = DenseFFN(d, preset.moe_ffn_hidden, device, dtype, gated=preset.moe_gated)
        elif ffn in MOE_FFN_WAYS:  # the chosen experts gathered, or read in place
            self.ffn = moe_layer(preset, device, dtype, MOE_FFN_WAYS[ffn])
        else:
            raise ValueError(f"unknown feed-forward kind {ffn!r}")


class DecodeModel(SizedModule):
    """Embedding, blocks, head; subclasses supply the token mixer and its memory."""

    kind = "base"

    def __init__(self, preset: Preset, ffn: str, device: torch.device | str, dtype: torch.dtype) -> None:
        super().__init__()
        self.preset = preset
        self.device = torch.device(device)
        self.dtype = dtype
        self.embed = weight((preset.vocab, preset.d_model), self.device, dtype)
        self.head = weight((preset.d_model, preset.vocab), self.device, dtype)
        self.blocks = nn.ModuleList(_Block(preset, ffn, self.device, dtype) for _ in range(preset.n_layers))
        self._extra_params()
        self.pos = 0

    def _extra_params(self) -> None:
        """Hook for mixer-specific weights."""

    # -- sizes (elem_bytes, total_params and weight_bytes: SizedModule) ----------
    def active_params(self) -> int:
        """Parameters read per token: one embedding row, every mixer weight, the active experts, the head."""
        ffn_total = sum(p.numel() for b in self.blocks for p in b.ffn.parameters())
        ffn_active = sum(b.ffn.active_params() for b in self.blocks)
        return self.total_params() - self.embed.numel() + self.preset.d_model - ffn_total + ffn_active

    def active_weight_bytes(self) -> int:
        return self.active_params() * self.elem_bytes

    def memory_bytes(self, depth: int) -> int:
        """Bytes of cache or state held at context depth `depth`."""
        raise NotImplementedError

    def traffic(self, pos: int) -> Traffic:
        """Bytes one step at position `pos` moves: weights, cache or state, scratch copies."""
        total = Traffic(weights=self.embed[0].numel() * self.elem_bytes + _bytes(self.head))
        for block in self.blocks:
            total = total + Traffic(weights=_bytes(block.wqkv, block.wo)) + block.ffn.traffic()
        return total + self._memory_traffic(pos)

    def _memory_traffic(self, pos: int) -> Traffic:
        raise NotImplementedError

    def kernel_ways(self) -> list[str]:
        """The interchangeable ways this model can run its step here — for an MoE, how it reads its
        experts (core.gpu.decode.ffn.MOE_WAYS); the benchmark keeps the fastest (core.gpu.timing.ways)."""
        layers = self.moe_layers()
        return layers[0].runnable_ways() if layers else ["torch"]

    @property
    def way_part(self) -> str:
        """The part of the step `kernel_ways` choose for: 'moe' (how the experts are read), 'state'
        (how the fixed state is updated) — what a skip list names as 'moe:triton' (core.gpu.timing.ways)."""
        return MOE_PART if self.moe_layers() else "mixer"

    @property
    def way(self) -> str:
        layers = self.moe_layers()
        return layers[0].way if layers else "torch"

    def use_way(self, way: str) -> None:
        if self.moe_layers():
            self.use_moe(way)
        elif way != "torch":
            raise ValueError(f"this model runs only as PyTorch ops, not {way!r}")

    def moe_layers(self) -> list[MoEFFN]:
        return [b.ffn for b in self.blocks if isinstance(b.ffn, MoEFFN)]

    def use_moe(self, way: str) -> None:
        """Every MoE layer reads its chosen experts with `way` (core.gpu.decode.ffn.MOE_WAYS)."""
        for ffn in self.moe_layers():
            ffn.use(way)

    def persistent_tensors(self) -> list[torch.Tensor]:
        """Every long-lived tensor a step may touch (weights, cache, state): what the tracer watches."""
        return list(self.parameters())

    # -- decoding ----------------------------------------------------------------
    def allocate(self, max_len: int, resident_positions: int | None = None) -> None:
        """Pre-allocate memory for up to `max_len` positions (outside any timer)."""
        raise NotImplementedError

    def release(self) -> None:
        """Drop the cache/state so the next depth starts from free memory."""

    def fill(self, depth: int) -> None:
        """Untimed prefill to depth d: the memory holds d tokens' worth of values.

        Decode time depends on how many bytes a step reads, not on what they say, so the
        rows are random unit-scale values written straight into the pre-allocated memory
        (llama-bench likewise prefills outside its timer).
        """
        raise NotImplementedError

    def _mix(self, block: _Block, h: torch.Tensor, layer: int) -> torch.Tensor:
        raise NotImplementedError

    @torch.inference_mode()
    def step(self, token: torch.Tensor) -> torch.Tensor:
        """Decode one token (a 0-dim or 1-element long tensor on the device) → logits (vocab,)."""
        x = self.embed.index_select(0, token.reshape(1))  # (1, D), looked up on the device: no sync
        for layer, block in enumerate(self.blocks):
            x = x + self._mix(block, _rms(x), layer)
            x = x + block.ffn(_rms(x))
        self.pos += 1
        return (_rms(x) @ self.head)[0]


class AttentionDecoder(DecodeModel):
    """Full softmax attention over a static KV cache, optionally split device | host."""

    kind = "full attention"

    def _extra_params(self) -> None:
        p = self.preset
        self.cache = KVCache(p.n_layers, p.n_heads, p.head_dim, self.device, self.dtype)

    @property
    def max_len(self) -> int:
        return self.cache.max_len

    @property
    def resident(self) -> int:
        return self.cache.resident

    def memory_bytes(self, depth: int) -> int:
        p = self.preset
        return 2 * p.n_layers * depth * p.d_model * self.elem_bytes

    def bytes_per_position(self) -> int:
        return self.memory_bytes(1)

    def _memory_traffic(self, pos: int) -> Traffic:
        return self.cache.traffic(pos)

    def persistent_tensors(self) -> list[torch.Tensor]:
        stage = [] if self.cache.stage is None else [self.cache.stage]
        return super().persistent_tensors() + self.cache.dev + self.cache.host + stage

    def allocate(self, max_len: int, resident_positions: int | None = None) -> None:
        self.cache.allocate(max_len, resident_positions)

    def release(self) -> None:
        self.cache.release()

    def fill(self, depth: int) -> None:
        self.cache.fill(depth)
        self.pos = depth

    def _mix(self, block: _Block, h: torch.Tensor, layer: int) -> torch.Tensor:
        p = self.preset
        qkv = (h @ block.wqkv).view(3, p.n_heads, p.head_dim)  # q, k, v each (H, Dh)
        out = self.cache.attend(layer, self.pos, qkv[0], qkv[1:])  # (H, Dh): store k, v; read the cache
        return out.reshape(1, p.d_model) @ block.wo  # (1, D)


class StateDecoder(DecodeModel):
    """A fixed (H, Dh, Dh) state per layer, updated by the gated delta rule every token."""

    kind = "fixed state"

    def _extra_params(self) -> None:
        p = self.preset
        for block in self.blocks:
            block.w_beta = weight((p.d_model, p.n_heads), self.device, self.dtype)
            block.w_gate = weight((p.d_model, p.n_heads), self.device, self.dtype)
        self.state: list[torch.Tensor] = []
        self._way = "torch"

    # The step as PyTorch ops (a dozen kernels a layer, the state read or written 6 times) or as
    # one Triton kernel a layer (core.gpu.decode.state_triton: the state read once and written once).
    def kernel_ways(self) -> list[str]:
        return ["torch"] + (["triton"] if triton_support.available(self.device) else [])

    way_part = STATE_PART

    @property
    def way(self) -> str:
        return self._way

    def use_way(self, way: str) -> None:
        if way not in STATE_WAYS:
            raise ValueError(f"unknown way {way!r}; choose one of {', '.join(STATE_WAYS)}")
        if way not in self.kernel_ways():
            raise ValueError(f"the fixed-state step cannot run as {way!r} on {self.device}")
        self._way = way

    def memory_bytes(self, depth: int) -> int:
        p = self.preset
        return p.n_layers * p.n_heads * p.head_dim * p.head_dim * 4  # fp32 state, any depth

    def _memory_traffic(self, pos: int) -> Traffic:
        # the β and gate projections; the state in PyTorch: decay (read + write), recall (read),
        # update (read + write), output (read); fused: read once, written once
        gates = sum(_bytes(b.w_beta, b.w_gate) for b in self.blocks)
        return Traffic(weights=gates, state=(6 if self._way == "torch" else 2) * self.memory_bytes(0))

    def persistent_tensors(self) -> list[torch.Tensor]:
        return super().persistent_tensors() + self.state

    def allocate(self, max_len: int, resident_positions: int | None = None) -> None:
        p = self.preset
        self.state = [
            torch.zeros(p.n_heads, p.head_dim, p.head_dim, device=self.device, dtype=torch.float32)
            for _ in range(p.n_layers)
        ]

    def release(self) -> None:
        self.state = []

    def fill(self, depth: int) -> None:
        for s in self.state:  # d tokens in or a thousand: the state is the same size
            s.normal_(0.0, 1.0 / self.preset.head_dim) if depth else s.zero_()
        self.pos = depth

    def _mix(self, block: _Block, h: torch.Tensor, layer: int) -> torch.Tensor:
        if self._way == "triton":
            o = state_triton.fused_step(h @ block.wqkv, h @ block.w_beta, h @ block.w_gate, self.state[layer])
            return o @ block.wo  # (1, D)
        p = self.preset
        n_h, dh = p.n_heads, p.head_dim
        q, k, v = (h @ block.wqkv).float().view(3, n_h, dh)  # each (H, Dh)
        q = F.normalize(q, dim=-1) * dh**-0.5
        k = F.normalize(k, dim=-1)
        beta = torch.sigmoid((h @ block.w_beta).float())[0]  # (H,)
        alpha = torch.exp(-F.softplus((h @ block.w_gate).float()))[0]  # (H,): decay in (0, 1)
        s = self.state[layer]  # (H, K, V), updated in place
        s.mul_(alpha[:, None, None])  # S ← αS
        recalled = (k[:, None] @ s)[:, 0]  # (H, V): what the faded state returns for k
        s.baddbmm_(k[:, :, None], (beta[:, None] * (v - recalled))[:, None])  # S += k (β (v − Sᵀk))ᵀ
        o = (q[:, None] @ s)[:, 0]  # (H, V)
        return o.to(self.dtype).reshape(1, n_h * dh) @ block.wo  # (1, D)


STATE_WAYS = ("torch", "triton")

# The ways in words, for the page and the CLI (English here; the page shows `_(words)`).
STATE_WAY_WORDS = {
    "torch": N_("PyTorch ops (a dozen kernels a layer)"),
    "triton": N_("one fused Triton kernel a layer"),
}


def build(
    kind: str, preset: Preset, device: torch.device | str, dtype: torch.dtype, ffn: str = "dense"
) -> DecodeModel:
    """'attention' or 'state' mixer with a 'dense', 'dense_moe_size', 'moe' (gathered experts),
    'moe_grouped' (grouped GEMM) or 'moe_triton' (fused Triton kernels) feed-forward
    (core.gpu.decode.ffn.MOE_FFN_WAYS; core.gpu.decode.ffn.way_available says where each runs)."""
    cls = {"attention": AttentionDecoder, "state": StateDecoder}[kind]
    return cls(preset, ffn, device, dtype)


@functools.cache
def preset_summary(preset: Preset, dtype: torch.dtype) -> str:
    """The full-attention model a preset builds in `dtype`, counted on the meta device (nothing is
    allocated), then what the preset is for: 'A 936M-parameter model, KV cache 128.0 KiB per token.
    For 8–12 GB cards; …' — for the page and the CLI."""
    model = build("attention", preset, "meta", dtype)
    per_token = model.memory_bytes(1)
    with use_language("en"):  # a line the run and the CLI keep in English (cached: never in a reader's language);
        params = format_params(model.total_params())  # the page translates it whole (ui/gpu/words.py)
    size = f"A {params}-parameter model, KV cache {format_bytes(per_token)} per token."
    return f"{size} {preset.description}"
