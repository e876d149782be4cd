"""The layers of Qwen3.5's text model, written with the course's own ops (core/ops/gated_delta_rule).

Read beside transformers 5.24 `models/qwen3_5/modeling_qwen3_5.py`, whose tensor names these
modules keep (so a released state dict loads with its names unchanged):

* `ZeroCenteredRMSNorm` — Qwen3.5's RMSNorm stores `w` and scales by `1 + w` (the weight starts at
  zero), computed in fp32 and cast back (`Qwen3_5RMSNorm`);
* `GatedRMSNorm` — the Gated DeltaNet output norm: RMSNorm over each value head (plain weight),
  then times SiLU(z) (`Qwen3_5RMSNormGated`);
* `GatedDeltaNet` — the board layer: one projection to q, k, v (`in_proj_qkv`), a short causal
  depthwise convolution over them (kernel 4) + SiLU, whose last `kernel − 1` inputs are its cache;
  q and k L2-normalised per head; write strength β = sigmoid(b); fade g = −exp(A_log)·softplus(a +
  dt_bias) (log space, so α = exp(g) ∈ (0, 1)); each q/k head serves `v_heads / k_heads` value
  heads; the board runs through `gated_delta_rule.chunk` (a prompt) or `.step` (one token);
* `GatedAttention` — full attention with a per-channel sigmoid output gate (the second half of
  `q_proj`'s output), RMSNorm on q and k per head, rotary position on the first
  `partial_rotary_factor` of each head only, grouped KV heads (fewer K/V heads than query heads);
* `SwiGLU` — the MLP, `down(silu(gate(x)) · up(x))`.

Boards are kept in fp32 whatever the weights' dtype, as transformers keeps its recurrent state.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from core.ops import gated_delta_rule
from core.ops.in_place import may_update_in_place


@dataclass(frozen=True)
class Qwen35Config:
    """The text model's sizes, named as in transformers' `Qwen3_5TextConfig`."""

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    layer_types: tuple[str, ...]  # "linear_attention" (a board) or "full_attention" (a KV cache) per layer
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rotary_dim: int  # channels of each head that rotate: head_dim · partial_rotary_factor
    rope_theta: float
    linear_num_key_heads: int
    linear_num_value_heads: int
    linear_key_head_dim: int
    linear_value_head_dim: int
    linear_conv_kernel_dim: int
    rms_norm_eps: float = 1e-6
    max_position_embeddings: int = 32768
    tie_word_embeddings: bool = False

    @property
    def num_layers(self) -> int:
        return len(self.layer_types)

    def board_bytes(self, element_bytes: int = 4) -> int:
        """One Gated DeltaNet layer's board: value heads × K × V numbers."""
        return (
            self.linear_num_value_heads
            * self.linear_key_head_dim
            * self.linear_value_head_dim
            * element_bytes
        )

    def conv_channels(self) -> int:
        return 2 * self.linear_num_key_heads * self.linear_key_head_dim + self.value_dim

    @property
    def value_dim(self) -> int:
        return self.linear_num_value_heads * self.linear_value_head_dim

    def kv_bytes_per_token(self, element_bytes: int) -> int:
        """One attention layer's cache per token: K and V for every KV head."""
        return 2 * self.num_key_value_heads * self.head_dim * element_bytes


class RMSNormBase(nn.Module):
    """What every RMSNorm of the Qwen families shares: `eps`, a weight of `dim` numbers that starts at
    `start`, and x / rms(x); how the weight is applied, and in which dtype, is each norm's own."""

    def __init__(self, dim: int, eps: float, start: float = 1.0) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.full((dim,), start))

    def normalized(self, x: torch.Tensor) -> torch.Tensor:
        """x / rms(x) over the last axis, in fp32."""
        x32 = x.float()
        return x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)


class ZeroCenteredRMSNorm(RMSNormBase):
    """x / rms(x) · (1 + weight), in fp32, cast back to x's dtype (Qwen3_5RMSNorm); the weight starts at 0."""

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__(dim, eps, start=0.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (self.normalized(x) * (1.0 + self.weight.float())).type_as(x)


class GatedRMSNorm(RMSNormBase):
    """RMSNorm over the last axis with a plain weight, then × SiLU(gate) (Qwen3_5RMSNormGated)."""

    def forward(self, x: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        normed = self.normalized(x).to(x.dtype)
        return (self.weight * normed * F.silu(gate.float())).to(x.dtype)


def l2_normalise(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """x / sqrt(Σx² + eps) over the last axis (fla's and transformers' l2norm for Gated DeltaNet)."""
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


@dataclass
class BoardMemory:
    """What one Gated DeltaNet layer keeps between tokens: fixed size however long the text."""

    board: torch.Tensor  # (B, Hv, K, V) fp32
    conv_window: torch.Tensor  # (B, conv channels, kernel − 1) the last inputs the convolution needs

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.board, self.conv_window))


@dataclass
class BoardStep:
    """One token through a Gated DeltaNet layer, for the pictures (sequence 0 of the batch)."""

    alpha: torch.Tensor  # (Hv,) this token's fade α = exp(g) per value head
    beta: torch.Tensor  # (Hv,) this token's write strength β per value head
    parts: dict[str, torch.Tensor]  # the op's decayed / erase / write, each (Hv, K, V); empty if not kept


class GatedDeltaNet(nn.Module):
    """Gated DeltaNet token mixer (Qwen3_5GatedDeltaNet) over `core.ops.gated_delta_rule`."""

    def __init__(self, c: Qwen35Config) -> None:
        super().__init__()
        self.c = c
        self.k_heads, self.v_heads = c.linear_num_key_heads, c.linear_num_value_heads
        self.dk, self.dv = c.linear_key_head_dim, c.linear_value_head_dim
        self.key_dim = self.k_heads * self.dk
        channels = c.conv_channels()
        self.in_proj_qkv = nn.Linear(c.hidden_size, channels, bias=False)
        self.in_proj_z = nn.Linear(c.hidden_size, c.value_dim, bias=False)
        self.in_proj_b = nn.Linear(c.hidden_size, self.v_heads, bias=False)
        self.in_proj_a = nn.Linear(c.hidden_size, self.v_heads, bias=False)
        kernel = c.linear_conv_kernel_dim
        self.conv1d = nn.Conv1d(channels, channels, kernel, groups=channels, bias=False, padding=kernel - 1)
        self.dt_bias = nn.Parameter(torch.ones(self.v_heads))
        self.A_log = nn.Parameter(torch.zeros(self.v_heads))
        self.norm = GatedRMSNorm(self.dv, c.rms_norm_eps)
        self.out_proj = nn.Linear(c.value_dim, c.hidden_size, bias=False)

    def new_memory(self, batch: int, dtype: torch.dtype) -> BoardMemory:
        board = torch.zeros(batch, self.v_heads, self.dk, self.dv, dtype=torch.float32)
        window = torch.zeros(batch, self.c.conv_channels(), self.c.linear_conv_kernel_dim - 1, dtype=dtype)
        return BoardMemory(board, window)

    def _convolve(self, mixed: torch.Tensor, memory: BoardMemory) -> torch.Tensor:
        """Causal depthwise conv + SiLU over (B, T, C), continuing from the window; updates the window (in
        place when no gradient flows: a decoder's fixed buffer keeps its address)."""
        x = torch.cat([memory.conv_window, mixed.transpose(1, 2)], dim=-1)  # (B, C, kernel − 1 + T)
        last = x[:, :, x.shape[-1] - memory.conv_window.shape[-1] :]  # (B, C, kernel − 1)
        if may_update_in_place(memory.conv_window, last):
            memory.conv_window.copy_(last)
        else:
            memory.conv_window = last
        out = F.conv1d(x, self.conv1d.weight, groups=x.shape[1])  # (B, C, T) no padding: the window is it
        return F.silu(out).transpose(1, 2)  # (B, T, C)

    def _inputs(self, x: torch.Tensor, memory: BoardMemory):
        """x: (B, T, D) → q, k (B, T, Hv, K), v (B, T, Hv, V), β, g (B, T, Hv), z (B, T, Hv, V); fp32 ops."""
        B, T, _ = x.shape
        mixed = self._convolve(self.in_proj_qkv(x), memory)  # (B, T, 2·Hk·K + Hv·V)
        q, k, v = mixed.split([self.key_dim, self.key_dim, self.c.value_dim], dim=-1)
        q = l2_normalise(q.reshape(B, T, self.k_heads, self.dk).float())  # (B, T, Hk, K)
        k = l2_normalise(k.reshape(B, T, self.k_heads, self.dk).float())  # (B, T, Hk, K)
        v = v.reshape(B, T, self.v_heads, self.dv).float()  # (B, T, Hv, V)
        group = self.v_heads // self.k_heads  # consecutive value heads share one q/k head
        q, k = q.repeat_interleave(group, dim=2), k.repeat_interleave(group, dim=2)  # (B, T, Hv, K)
        beta = self.in_proj_b(x).float().sigmoid()  # (B, T, Hv) write strength
        g = -self.A_log.float().exp() * F.softplus(
            self.in_proj_a(x).float() + self.dt_bias.float()
        )  # (B, T, Hv)
        z = self.in_proj_z(x).reshape(B, T, self.v_heads, self.dv)  # (B, T, Hv, V) output gate
        return q, k, v, beta, g, z

    def _finish(self, o: torch.Tensor, z: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
        """o: (B, T, Hv, V) fp32 → gated norm per head → out_proj → (B, T, D)."""
        B, T = o.shape[:2]
        return self.out_proj(self.norm(o.to(like.dtype), z).reshape(B, T, -1))

    def prompt(self, x: torch.Tensor, memory: BoardMemory, chunk_size: int = 64) -> torch.Tensor:
        """A whole prompt at once through `gated_delta_rule.chunk`. x: (B, T, D); updates `memory`."""
        q, k, v, beta, g, z = self._inputs(x, memory)
        o, memory.board = gated_delta_rule.chunk(
            q, k, v, beta=beta, g=g, initial_state=memory.board, chunk_size=chunk_size
        )  # (B, T, Hv, V), (B, Hv, K, V)
        return self._finish(o, z, x)

    def step(
        self, x: torch.Tensor, memory: BoardMemory, keep_parts: bool = False
    ) -> tuple[torch.Tensor, BoardStep]:
        """One token through `gated_delta_rule.step`. x: (B, 1, D) → (B, 1, D) and what the board did."""
        q, k, v, beta, g, z = self._inputs(x, memory)
        res = gated_delta_rule.step(
            memory.board, q[:, 0], k[:, 0], v[:, 0], beta_t=beta[:, 0], g_t=g[:, 0], keep_parts=keep_parts
        )
        memory.board = res.state  # (B, Hv, K, V): the same tensor when decoding (updated in place)
        parts = {name: part[0] for name, part in res.parts.items()}
        return self._finish(res.output[:, None], z, x), BoardStep(g[0, 0].exp(), beta[0, 0], parts)


@dataclass
class KVMemory:
    """What one attention layer keeps: a K row and a V row per token read (grows)."""

    keys: torch.Tensor  # (B, Hkv, T, Dh), rotary applied
    values: torch.Tensor  # (B, Hkv, T, Dh)

    @property
    def length(self) -> int:
        return self.keys.shape[2]

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.keys, self.values))


def rotate(x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """Rotary position on the first `2 · len(inv_freq)` channels of x: (B, H, T, Dh); the rest pass.

    Channel pairs (i, i + r/2) turn by angle position · inv_freq[i] (the "rotate half" layout).
    """
    r = 2 * inv_freq.numel()
    angles = positions.float()[:, None] * inv_freq[None, :].float()  # (T, r/2)
    cos = torch.cat([angles.cos(), angles.cos()], -1).to(x.dtype)  # (T, r)
    sin = torch.cat([angles.sin(), angles.sin()], -1).to(x.dtype)  # (T, r)
    turn, rest = x[..., :r], x[..., r:]
    half = torch.cat([-turn[..., r // 2 :], turn[..., : r // 2]], dim=-1)  # rotate_half
    return torch.cat([turn * cos + half * sin, rest], dim=-1)


class GatedAttention(nn.Module):
    """Qwen3.5's full-attention layer (Qwen3_5Attention): q/k norm, partial rotary, GQA, output gate."""

    def __init__(self, c: Qwen35Config) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.dh = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        self.q_proj = nn.Linear(c.hidden_size, self.heads * self.dh * 2, bias=False)  # query and gate
        self.k_proj = nn.Linear(c.hidden_size, self.kv_heads * self.dh, bias=False)
        self.v_proj = nn.Linear(c.hidden_size, self.kv_heads * self.dh, bias=False)
        self.o_proj = nn.Linear(self.heads * self.dh, c.hidden_size, bias=False)
        self.q_norm = ZeroCenteredRMSNorm(self.dh, c.rms_norm_eps)
        self.k_norm = ZeroCenteredRMSNorm(self.dh, c.rms_norm_eps)
        inv_freq = 1.0 / (
            c.rope_theta ** (torch.arange(0, c.rotary_dim, 2, dtype=torch.float) / c.rotary_dim)
        )
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def new_memory(self, batch: int, dtype: torch.dtype) -> KVMemory:
        empty = torch.zeros(batch, self.kv_heads, 0, self.dh, dtype=dtype)
        return KVMemory(empty, empty.clone())

    def forward(self, x: torch.Tensor, memory: KVMemory) -> tuple[torch.Tensor, torch.Tensor]:
        """x: (B, T, D) after the cached rows → (B, T, D) and the attention weights (B, H, T, T_total)."""
        B, T, _ = x.shape
        q, gate = self.q_proj(x).view(B, T, self.heads, 2 * self.dh).chunk(2, dim=-1)  # (B, T, H, Dh) each
        q = self.q_norm(q).transpose(1, 2)  # (B, H, T, Dh)
        k = self.k_norm(self.k_proj(x).view(B, T, self.kv_heads, self.dh)).transpose(1, 2)  # (B, Hkv, T, Dh)
        v = self.v_proj(x).view(B, T, self.kv_heads, self.dh).transpose(1, 2)  # (B, Hkv, T, Dh)
        start = memory.length
        positions = torch.arange(start, start + T, device=x.device)
        q, k = rotate(q, positions, self.inv_freq), rotate(k, positions, self.inv_freq)
        memory.keys = torch.cat([memory.keys, k], dim=2)  # (B, Hkv, T_total, Dh)
        memory.values = torch.cat([memory.values, v], dim=2)
        group = self.heads // self.kv_heads
        keys = memory.keys.repeat_interleave(group, dim=1)  # (B, H, T_total, Dh)
        values = memory.values.repeat_interleave(group, dim=1)
        scores = (q @ keys.transpose(-1, -2)) * self.dh**-0.5  # (B, H, T, T_total)
        total = start + T
        future = torch.ones(T, total, dtype=torch.bool, device=x.device).triu(start + 1)  # key after query
        weights = scores.masked_fill(future, float("-inf")).softmax(-1, dtype=torch.float32).to(q.dtype)
        out = (weights @ values).transpose(1, 2).reshape(B, T, -1)  # (B, T, H·Dh)
        return self.o_proj(out * torch.sigmoid(gate.reshape(B, T, -1))), weights


class SwiGLU(nn.Module):
    def __init__(self, c: Qwen35Config) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    """Pre-norm residual block: x + mixer(norm(x)), then + MLP(norm(·)) (Qwen3_5DecoderLayer)."""

    def __init__(self, c: Qwen35Config, kind: str) -> None:
        super().__init__()
        self.kind = kind
        if kind == "linear_attention":
            self.linear_attn = GatedDeltaNet(c)
        else:
            self.self_attn = GatedAttention(c)
        self.mlp = SwiGLU(c)
        self.input_layernorm = ZeroCenteredRMSNorm(c.hidden_size, c.rms_norm_eps)
        self.post_attention_layernorm = ZeroCenteredRMSNorm(c.hidden_size, c.rms_norm_eps)

    @property
    def mixer(self) -> nn.Module:
        return self.linear_attn if self.kind == "linear_attention" else self.self_attn

    def new_memory(self, batch: int, dtype: torch.dtype) -> BoardMemory | KVMemory:
        return self.mixer.new_memory(batch, dtype)

    def finish(self, x: torch.Tensor, mixed: torch.Tensor) -> torch.Tensor:
        h = x + mixed
        return h + self.mlp(self.post_attention_layernorm(h))
