"""The building blocks of a real model: each knows its parameter count and memory from its fields.

Formulas follow the tensor shapes of the reference implementations (see `core/specs/__init__.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# ---------------------------------------------------------------------------------------------
# Building blocks: each knows its own parameter count from its fields.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SoftmaxAttention:
    """Multi-head (kv_heads == heads) or grouped-query attention (kv_heads < heads).

    output_gate: Qwen3-Next's gated attention — q_proj is twice as wide (query | sigmoid gate).
    qk_norm: an RMSNorm of width head_dim on queries and on keys.
    bias: biases on the q, k, v projections, and on the output projection unless out_bias is False
    (Qwen2 biases q, k and v only; GPT-2 and Llama's attention_bias bias all four).
    """

    heads: int
    kv_heads: int
    head_dim: int
    bias: bool = False
    output_gate: bool = False
    qk_norm: bool = False
    out_bias: bool = True

    @property
    def kind(self) -> str:
        return "mha" if self.kv_heads == self.heads else "gqa"

    def cache_elements_per_token(self) -> int:
        """K and V for every kv head: 2 · n_kv · d_h."""
        return 2 * self.kv_heads * self.head_dim

    def params(self, hidden: int) -> int:
        q_out = self.heads * self.head_dim * (2 if self.output_gate else 1)
        kv_out = self.kv_heads * self.head_dim
        n = hidden * q_out + 2 * hidden * kv_out + self.heads * self.head_dim * hidden
        if self.bias:
            n += q_out + 2 * kv_out + (hidden if self.out_bias else 0)
        if self.qk_norm:
            n += 2 * self.head_dim
        return n


@dataclass(frozen=True)
class LatentAttention:
    """Multi-head Latent Attention (DeepSeek-V2/V3 style): only a 512-wide latent + a 64-wide key is cached.

    q_lora_rank None means queries come from one full projection (Kimi Linear).
    output_gate: K3's gated MLA, a sigmoid gate of width heads·v_head_dim from the hidden state.
    """

    heads: int
    q_lora_rank: int | None
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    output_gate: bool = False

    kind: str = field(default="mla", init=False)

    def cache_elements_per_token(self) -> int:
        """The compressed latent c_KV plus the shared positional key: d_c + d_R."""
        return self.kv_lora_rank + self.qk_rope_head_dim

    def params(self, hidden: int) -> int:
        q_head = self.qk_nope_head_dim + self.qk_rope_head_dim
        if self.q_lora_rank is None:
            n = hidden * self.heads * q_head  # q_proj
        else:
            n = hidden * self.q_lora_rank + self.q_lora_rank  # q_a_proj + q_a_layernorm
            n += self.q_lora_rank * self.heads * q_head  # q_b_proj
        n += hidden * (self.kv_lora_rank + self.qk_rope_head_dim)  # kv_a_proj_with_mqa
        n += self.kv_lora_rank  # kv_a_layernorm
        n += self.kv_lora_rank * self.heads * (self.qk_nope_head_dim + self.v_head_dim)  # kv_b_proj
        n += self.heads * self.v_head_dim * hidden  # o_proj
        if self.output_gate:
            n += hidden * self.heads * self.v_head_dim  # g_proj
        return n


@dataclass(frozen=True)
class LinearAttention:
    """A fixed-state token mixer: Kimi Delta Attention ("kda") or Gated DeltaNet ("gated_delta").

    The state is one d_k × d_v matrix per value head; q/k heads are repeated to match
    value heads when there are fewer of them (Qwen3-Next: 16 qk heads, 32 v heads).
    A short causal convolution (kernel `conv_kernel`) runs over q, k and v.
    """

    kind: Literal["kda", "gated_delta"]  # keys of core/mechanisms.py
    qk_heads: int
    v_heads: int
    head_k_dim: int
    head_v_dim: int
    conv_kernel: int
    full_rank_gate: bool = (
        False  # KDA output gate: one hidden→H·d_v matrix (K3) or low rank via d_v (Kimi Linear)
    )

    @property
    def key_dim(self) -> int:
        return self.qk_heads * self.head_k_dim

    @property
    def value_dim(self) -> int:
        return self.v_heads * self.head_v_dim

    @property
    def conv_channels(self) -> int:
        return 2 * self.key_dim + self.value_dim

    def state_elements(self) -> int:
        """One d_k × d_v board per value head."""
        return self.v_heads * self.head_k_dim * self.head_v_dim

    def conv_state_elements(self) -> int:
        """The short convolution remembers the last kernel−1 inputs of every channel."""
        return (self.conv_kernel - 1) * self.conv_channels

    def params(self, hidden: int) -> int:
        conv = self.conv_channels * self.conv_kernel  # depthwise, no bias
        if self.kind == "kda":
            n = hidden * (2 * self.key_dim + self.value_dim)  # q_proj, k_proj, v_proj
            n += conv
            n += hidden * self.head_k_dim + self.head_k_dim * self.key_dim  # f_a_proj, f_b_proj (decay)
            n += hidden * self.v_heads  # b_proj (beta)
            if self.full_rank_gate:
                n += hidden * self.value_dim  # g_proj
            else:
                n += hidden * self.head_v_dim + self.head_v_dim * self.value_dim  # g_a_proj, g_b_proj
            n += self.key_dim  # dt_bias (one per key channel)
            n += self.v_heads  # A_log (one per head)
            n += self.head_v_dim  # o_norm
            n += self.value_dim * hidden  # o_proj
            return n
        if self.kind == "gated_delta":
            n = hidden * (2 * self.key_dim + 2 * self.value_dim)  # in_proj_qkvz
            n += hidden * 2 * self.v_heads  # in_proj_ba (beta, decay)
            n += conv
            n += 2 * self.v_heads  # dt_bias, A_log
            n += self.head_v_dim  # gated RMSNorm
            n += self.value_dim * hidden  # out_proj
            return n
        raise ValueError(f"unknown linear attention kind {self.kind!r}")


@dataclass(frozen=True)
class DenseMLP:
    """Feed-forward block: GELU (2 matrices, GPT-2) or gated SwiGLU/SiTU-GLU (3 matrices)."""

    intermediate: int
    gated: bool = True
    bias: bool = False

    def params(self, hidden: int) -> int:
        matrices = 3 if self.gated else 2
        n = matrices * hidden * self.intermediate
        if self.bias:
            n += self.intermediate * (2 if self.gated else 1) + hidden
        return n


@dataclass(frozen=True)
class MixtureOfExperts:
    """DeepSeekMoE-style layer: a router, routed GLU experts, always-on shared experts.

    latent_dim: K3's latent MoE — routed on the full-width token, then a down projection
    (hidden→latent), the routed experts at latent_dim, an optional RMSNorm (latent_norm) of their
    weighted sum, and an up projection back (mlx-lm `KimiK3SparseMoE`).
    shared_gate: Qwen3-Next's scalar sigmoid gate on the shared expert.
    """

    experts: int
    top_k: int
    shared: int
    expert_intermediate: int
    shared_intermediate: int
    router_bias: bool = True  # the aux-loss-free score-correction bias (noaux_tc)
    latent_dim: int | None = None
    latent_norm: bool = False
    shared_gate: bool = False

    def expert_params(self, hidden: int) -> int:
        width = self.latent_dim or hidden
        return 3 * width * self.expert_intermediate

    def _always_on(self, hidden: int) -> int:
        n = hidden * self.experts + (self.experts if self.router_bias else 0)  # router
        n += self.shared * 3 * hidden * self.shared_intermediate
        if self.shared_gate:
            n += hidden
        if self.latent_dim is not None:
            n += 2 * hidden * self.latent_dim + (self.latent_dim if self.latent_norm else 0)
        return n

    def params(self, hidden: int) -> int:
        return self._always_on(hidden) + self.experts * self.expert_params(hidden)

    def active_params(self, hidden: int) -> int:
        return self._always_on(hidden) + self.top_k * self.expert_params(hidden)
