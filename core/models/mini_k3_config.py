"""The miniature Kimi K3's sizes and its layer map, on their own so that the model (mini_k3.py) and its
mixers (mini_k3_mixers.py) both read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

from core.models.moe import MoEConfig

KDA, MLA = "kda", "mla"


@dataclass
class MiniK3Config:
    vocab_size: int = 256  # bytes
    d_model: int = 96
    num_layers: int = 9
    full_attn_every: int = 4  # K3: every 4th layer is full attention …
    final_full_attention: bool = True  # … and so is the last one
    attn_res_block_size: int = 3  # decoder layers per AttnRes block (K3: 12)
    # Kimi Delta Attention
    kda_heads: int = 2
    kda_head_dim: int = 32  # d_k = d_v
    gate_lower_bound: float = -5.0  # K3's gate_lower_bound
    chunk_size: int = 32
    # Multi-head latent attention (NoPE)
    mla_heads: int = 2
    kv_latent_dim: int = 32  # d_c: the cached latent (K3: 512)
    shared_key_dim: int = 8  # d_R: the cached key part shared by all heads (K3: 64)
    mla_head_dim: int = 32  # per-head key (latent part) and value size (K3: 128)
    # Feed-forward
    first_k_dense: int = 1  # K3: layer 1 is dense
    dense_hidden: int = 192
    num_experts: int = 16  # routed (K3: 896)
    top_k: int = 2  # routed experts per token (K3: 16)
    num_shared_experts: int = 1  # (K3: 2)
    expert_hidden: int = 32
    routed_scaling_factor: float = 1.0
    norm_eps: float = 1e-5

    def latent_bytes_per_token(self, bytes_per_number: int = 4) -> int:
        """Bytes one latent-attention layer adds per token: the latent c_t and the shared key part."""
        return (self.kv_latent_dim + self.shared_key_dim) * bytes_per_number

    def board_bytes(self, bytes_per_number: int = 4) -> int:
        """Bytes of one KDA layer's boards (H × d_k × d_v), whatever the length."""
        return self.kda_heads * self.kda_head_dim * self.kda_head_dim * bytes_per_number

    def layer_kinds(self) -> list[str]:
        """'kda' or 'mla' per layer, from the same rule that lays out K3's 93 layers."""
        return schedule(self.num_layers, self.full_attn_every, self.final_full_attention)

    def moe_config(self) -> MoEConfig:
        return MoEConfig(
            d_model=self.d_model,
            num_experts=self.num_experts,
            top_k=self.top_k,
            num_shared=self.num_shared_experts,
            expert_hidden=self.expert_hidden,
            routed_scaling_factor=self.routed_scaling_factor,
        )


def schedule(num_layers: int, full_attn_every: int, final_full_attention: bool) -> list[str]:
    """The hybrid layer map: K3's rule from core/specs, spelled as 'kda' / 'mla' per layer."""
    from core.specs import hybrid_layer_kinds

    kinds = hybrid_layer_kinds(num_layers, full_attn_every, final_full_attention)
    return [KDA if kind in ("kda", "linear") else MLA for kind in kinds]
