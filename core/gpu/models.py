"""Small decode-only models, sized by a preset, for timing one token at a time on any device.

Three memories, one skeleton (embedding → n_layers × [mixer + feed-forward] → head):

- `AttentionDecoder`  softmax attention with a pre-allocated ("static") KV cache that
  grows a row per token — what llama-bench's `tg @ d` measures. Optionally the cache
  has a device budget: rows past it live in host memory (pinned when CUDA is present)
  and are streamed to the device at every step, like HF transformers' OffloadedCache.
- `StateDecoder`      the same projections around a Gated-DeltaNet-style fixed state
  (Yang et al. 2024, "Gated Delta Networks"): S ← αS + β k (v − Sᵀk)ᵀ, o = Sᵀq, one token
  of `core.ops.gated_delta_rule.step`. Its memory does not grow with context.
- feed-forward `dense` or `moe`: equal total parameters; the MoE keeps `n_shared`
  experts always on and routes each token to `top_k` of the rest (Kimi K3 wakes 2 shared
  + 16 of 896 experts).

The weights are random: these models exist to move the same bytes a trained model of
this shape moves, not to say anything. Plain torch, batch 1, no custom kernels.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from core.gpu.presets import Preset
from core.ops import gated_delta_rule


def _weight(shape: tuple[int, ...], device: torch.device, dtype: torch.dtype) -> nn.Parameter:
    w = torch.empty(shape, device=device, dtype=dtype).normal_(0.0, 0.02)
    return nn.Parameter(w, requires_grad=False)


def _rms(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class DenseFFN(nn.Module):
    """x → W2 gelu(W1 x); every weight is read for every token."""

    def __init__(self, d: int, hidden: int, device: torch.device, dtype: torch.dtype) -> None:
        super().__init__()
        self.w1 = _weight((d, hidden), device, dtype)
        self.w2 = _weight((hidden, d), device, dtype)

    def active_params(self) -> int:
        return self.w1.numel() + self.w2.numel()

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (1, D) → (1, D)
        return F.gelu(h @ self.w1) @ self.w2


class MoEFFN(nn.Module):
    """`n_shared` always-on experts + `top_k` of the routed ones, chosen per token by a router.

    The chosen experts' weights are gathered by index on the device (no host sync), so a
    token reads the shared weights, the router and top_k routed experts — a small fraction
    of the total. The gather copies the chosen rows once more; real MoE kernels avoid that.
    """

    def __init__(
        self,
        d: int,
        n_experts: int,
        n_shared: int,
        top_k: int,
        expert_hidden: int,
        device: torch.device,
        dtype: torch.dtype,
    ) -> None:
        super().__init__()
        n_routed = n_experts - n_shared
        if n_routed < top_k or top_k < 1:
            raise ValueError("need at least top_k routed experts")
        self.top_k = top_k
        self.router = _weight((d, n_routed), device, dtype)
        self.shared_w1 = _weight((d, n_shared * expert_hidden), device, dtype)
        self.shared_w2 = _weight((n_shared * expert_hidden, d), device, dtype)
        self.w1 = _weight((n_routed, d, expert_hidden), device, dtype)  # (E, D, Fe)
        self.w2 = _weight((n_routed, expert_hidden, d), device, dtype)  # (E, Fe, D)

    def active_params(self) -> int:
        per_expert = self.w1[0].numel() + self.w2[0].numel()
        return self.router.numel() + self.shared_w1.numel() + self.shared_w2.numel() + self.top_k * per_expert

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (1, D) → (1, D)
        out = F.gelu(h @ self.shared_w1) @ self.shared_w2
        logits = (h @ self.router)[0]  # (E,)
        top_v, top_i = torch.topk(logits, self.top_k)  # (k,)
        gate = torch.softmax(top_v.float(), -1).to(h.dtype)  # (k,)
        w1 = self.w1.index_select(0, top_i)  # (k, D, Fe)
        w2 = self.w2.index_select(0, top_i)  # (k, Fe, D)
        hidden = F.gelu(torch.einsum("d,kdf->kf", h[0], w1)) * gate[:, None]  # (k, Fe)
        return out + torch.einsum("kf,kfd->d", hidden, w2)[None]  # (1, D)


class _Block(nn.Module):
    def __init__(self, preset: Preset, ffn: str, device: torch.device, dtype: torch.dtype) -> None:
        super().__init__()
        d = preset.d_model
        self.wqkv = _weight((d, 3 * d), device, dtype)
        self.wo = _weight((d, d), device, dtype)
        if ffn == "dense":
            self.ffn: nn.Module = DenseFFN(d, preset.ffn_hidden, device, dtype)
        elif ffn == "dense_moe_size":  # the dense twin of the MoE: same total parameters
            self.ffn = DenseFFN(d, preset.moe_ffn_hidden, device, dtype)
        elif ffn == "moe":
            self.ffn = MoEFFN(
                d,
                preset.moe_experts,
                preset.moe_shared,
                preset.moe_top_k,
                preset.expert_hidden,
                device,
                dtype,
            )
        else:
            raise ValueError(f"unknown feed-forward kind {ffn!r}")


class DecodeModel(nn.Module):
    """Embedding, blocks, head; subclasses supply the token mixer and its memory."""

    kind = "base"

    def __init__(self, preset: Preset, ffn: str, device: torch.device | str, dtype: torch.dtype) -> None:
        super().__init__()
        self.preset = preset
        self.device = torch.device(device)
        self.dtype = dtype
        self.embed = _weight((preset.vocab, preset.d_model), self.device, dtype)
        self.head = _weight((preset.d_model, preset.vocab), self.device, dtype)
        self.blocks = nn.ModuleList(_Block(preset, ffn, self.device, dtype) for _ in range(preset.n_layers))
        self._extra_params()
        self.pos = 0

    def _extra_params(self) -> None:
        """Hook for mixer-specific weights."""

    # -- sizes -------------------------------------------------------------------
    @property
    def elem_bytes(self) -> int:
        return torch.finfo(self.dtype).bits // 8

    def total_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def active_params(self) -> int:
        """Parameters read per token: one embedding row, every mixer weight, the active experts, the head."""
        ffn_total = sum(p.numel() for b in self.blocks for p in b.ffn.parameters())
        ffn_active = sum(b.ffn.active_params() for b in self.blocks)
        return self.total_params() - self.embed.numel() + self.preset.d_model - ffn_total + ffn_active

    def active_weight_bytes(self) -> int:
        return self.active_params() * self.elem_bytes

    def memory_bytes(self, depth: int) -> int:
        """Bytes of cache or state read per token at context depth `depth`."""
        raise NotImplementedError

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
        """Decode one token (0-dim long tensor on the device) → logits (vocab,)."""
        x = self.embed[token][None]  # (1, D)
        for layer, block in enumerate(self.blocks):
            x = x + self._mix(block, _rms(x), layer)
            x = x + block.ffn(_rms(x))
        self.pos += 1
        return (_rms(x) @ self.head)[0]


class AttentionDecoder(DecodeModel):
    """Full softmax attention over a static KV cache, optionally split device | host."""

    kind = "full attention"

    def _extra_params(self) -> None:
        self.max_len = 0
        self.resident = 0  # positions kept on the device
        self.k_dev: list[torch.Tensor] = []  # per layer (H, R, Dh)
        self.v_dev: list[torch.Tensor] = []
        self.k_host: list[torch.Tensor] = []  # per layer (H, max_len − R, Dh), pinned host memory
        self.v_host: list[torch.Tensor] = []
        self.k_stage: torch.Tensor | None = None  # one layer's streamed rows on the device
        self.v_stage: torch.Tensor | None = None

    def memory_bytes(self, depth: int) -> int:
        p = self.preset
        return 2 * p.n_layers * depth * p.d_model * self.elem_bytes

    def bytes_per_position(self) -> int:
        return self.memory_bytes(1)

    def allocate(self, max_len: int, resident_positions: int | None = None) -> None:
        self.release()
        p = self.preset
        h, dh = p.n_heads, p.head_dim
        resident = max_len if resident_positions is None else max(0, min(max_len, resident_positions))
        spilled = max_len - resident
        pin = self.device.type == "cuda"
        host = torch.device("cpu") if self.device.type == "cuda" else self.device
        kw = dict(dtype=self.dtype)
        for _ in range(p.n_layers):
            self.k_dev.append(torch.empty(h, resident, dh, device=self.device, **kw))
            self.v_dev.append(torch.empty(h, resident, dh, device=self.device, **kw))
            if spilled:
                self.k_host.append(torch.empty(h, spilled, dh, device=host, pin_memory=pin, **kw))
                self.v_host.append(torch.empty(h, spilled, dh, device=host, pin_memory=pin, **kw))
        if spilled:
            self.k_stage = torch.empty(h, spilled, dh, device=self.device, **kw)
            self.v_stage = torch.empty(h, spilled, dh, device=self.device, **kw)
        self.max_len, self.resident = max_len, resident

    def release(self) -> None:
        self.k_dev, self.v_dev, self.k_host, self.v_host = [], [], [], []
        self.k_stage = self.v_stage = None
        self.max_len = self.resident = 0

    def fill(self, depth: int) -> None:
        if depth + 1 > self.max_len:
            raise ValueError(f"depth {depth} does not fit the allocated {self.max_len} positions")
        on_dev = min(depth, self.resident)
        for layer in range(self.preset.n_layers):
            self.k_dev[layer][:, :on_dev].normal_()
            self.v_dev[layer][:, :on_dev].normal_()
            if depth > self.resident:
                self.k_host[layer][:, : depth - self.resident].normal_()
                self.v_host[layer][:, : depth - self.resident].normal_()
        self.pos = depth

    def _mix(self, block: _Block, h: torch.Tensor, layer: int) -> torch.Tensor:
        p = self.preset
        n_h, dh = p.n_heads, p.head_dim
        q, k, v = (h @ block.wqkv).view(3, n_h, 1, dh)  # each (H, 1, Dh)
        pos, r = self.pos, self.resident
        if pos < r:
            self.k_dev[layer][:, pos : pos + 1] = k
            self.v_dev[layer][:, pos : pos + 1] = v
        else:
            self.k_host[layer][:, pos - r : pos - r + 1].copy_(k)
            self.v_host[layer][:, pos - r : pos - r + 1].copy_(v)
        length = pos + 1
        parts = [(self.k_dev[layer][:, : min(length, r)], self.v_dev[layer][:, : min(length, r)])]
        if length > r:  # stream the spilled rows host → device, every step
            n = length - r
            ks, vs = self.k_stage[:, :n], self.v_stage[:, :n]
            ks.copy_(self.k_host[layer][:, :n], non_blocking=True)
            vs.copy_(self.v_host[layer][:, :n], non_blocking=True)
            parts.append((ks, vs))
        parts = [(kp, vp) for kp, vp in parts if kp.shape[1] > 0]
        scale = 1.0 / math.sqrt(dh)
        scores = torch.cat([q @ kp.transpose(-1, -2) for kp, _ in parts], -1) * scale  # (H, 1, L)
        weights = torch.softmax(scores.float(), -1).to(self.dtype)
        out, start = None, 0
        for kp, vp in parts:
            n = kp.shape[1]
            piece = weights[..., start : start + n] @ vp  # (H, 1, Dh)
            out = piece if out is None else out + piece
            start += n
        return out.reshape(1, n_h * dh) @ block.wo  # (1, D)


class StateDecoder(DecodeModel):
    """A fixed (H, Dh, Dh) state per layer, updated by the gated delta rule every token."""

    kind = "fixed state"

    def _extra_params(self) -> None:
        p = self.preset
        for block in self.blocks:
            block.w_beta = _weight((p.d_model, p.n_heads), self.device, self.dtype)
            block.w_gate = _weight((p.d_model, p.n_heads), self.device, self.dtype)
        self.state: list[torch.Tensor] = []

    def memory_bytes(self, depth: int) -> int:
        p = self.preset
        return p.n_layers * p.n_heads * p.head_dim * p.head_dim * 4  # fp32 state, any depth

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
        p = self.preset
        n_h, dh = p.n_heads, p.head_dim
        q, k, v = (h @ block.wqkv).float().view(3, 1, n_h, dh)  # each (1, H, Dh): a batch of one
        beta = torch.sigmoid((h @ block.w_beta).float())  # (1, H)
        g = -F.softplus((h @ block.w_gate).float())  # (1, H): log α, so the decay α = e^g is in (0, 1)
        out = gated_delta_rule.step(
            self.state[layer][None],  # (1, H, K, V)
            F.normalize(q, dim=-1),  # read with scale Dh^-0.5
            F.normalize(k, dim=-1),
            v,
            beta_t=beta,
            g_t=g,
            keep_parts=False,
        )
        self.state[layer] = out.state[0]  # (H, K, V)
        return out.output.to(self.dtype).reshape(1, n_h * dh) @ block.wo  # (1, D)


def build(
    kind: str, preset: Preset, device: torch.device | str, dtype: torch.dtype, ffn: str = "dense"
) -> DecodeModel:
    """'attention' or 'state' mixer with a 'dense', 'dense_moe_size' or 'moe' feed-forward."""
    cls = {"attention": AttentionDecoder, "state": StateDecoder}[kind]
    return cls(preset, ffn, device, dtype)
