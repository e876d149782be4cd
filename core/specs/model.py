"""A whole model: its layer schedule and `ModelSpec`, which derives cache bytes, state and parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.mechanisms import rule_keys
from core.specs.blocks import DenseMLP, LatentAttention, LinearAttention, MixtureOfExperts, SoftmaxAttention

# ---------------------------------------------------------------------------------------------
# Layer schedules
# ---------------------------------------------------------------------------------------------


def hybrid_layer_kinds(
    num_layers: int,
    full_attn_every: int,
    final_full_attention: bool,
    linear_kind: str = "kda",
    full_kind: str = "mla",
) -> list[str]:
    """The layer order of a 3:1-style hybrid, generated the way the released configs lay it out.

    Layer i (1-based) is full attention when i is a multiple of `full_attn_every`, or when it
    is the last layer and `final_full_attention` is set; every other layer is linear.
    Kimi K3: (93, 4, True) → full attention at 4, 8, …, 92 and 93.
    """
    if num_layers < 1 or full_attn_every < 1:
        raise ValueError("num_layers and full_attn_every must be positive")
    kinds = []
    for i in range(1, num_layers + 1):
        full = i % full_attn_every == 0 or (final_full_attention and i == num_layers)
        kinds.append(full_kind if full else linear_kind)
    return kinds


def full_attention_layers(kinds: list[str], linear_kinds: tuple[str, ...] | None = None) -> list[int]:
    """1-based ids of the layers that are not linear — the form configs publish (`full_attn_layers`).

    Linear layers are those whose kind is a fixed-board rule of the registry, unless `linear_kinds` says otherwise.
    """
    linear = rule_keys() if linear_kinds is None else linear_kinds
    return [i + 1 for i, kind in enumerate(kinds) if kind not in linear]


# Published layer lists, as they appear in the released configs (1-based).
KIMI_LINEAR_FULL_ATTN_LAYERS = (4, 8, 12, 16, 20, 24, 27)
K3_FULL_ATTN_LAYERS = (
    4,
    8,
    12,
    16,
    20,
    24,
    28,
    32,
    36,
    40,
    44,
    48,
    52,
    56,
    60,
    64,
    68,
    72,
    76,
    80,
    84,
    88,
    92,
    93,
)


# ---------------------------------------------------------------------------------------------
# The model spec
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelSpec:
    """One released model, as its config describes it."""

    key: str
    name: str
    year: int
    source: str
    hidden: int
    num_layers: int
    vocab: int
    context: int
    attention: SoftmaxAttention | LatentAttention  # the full-attention layers
    mlp: DenseMLP  # the dense feed-forward (all layers, or the first `first_k_dense`)
    published_params: float
    published_active: float
    tied_embeddings: bool = False
    learned_positions: bool = False  # GPT-2: a context × hidden position table
    norm: Literal["layernorm", "rmsnorm"] = "rmsnorm"
    norms_per_layer: int = 2  # before the mixer and the FFN; Gemma 2/3 add one after each (4)
    linear: LinearAttention | None = None
    kinds: tuple[str, ...] = ()  # layer order; empty → every layer is full attention
    moe: MixtureOfExperts | None = None
    first_k_dense: int = 0  # with MoE: the first k layers keep the dense MLP
    attn_res_block_size: int | None = None  # Attention Residuals (K3): per-layer pseudo-queries
    notes: str = ""

    # -- layout ---------------------------------------------------------------------------

    def layer_kinds(self) -> list[str]:
        """Kind of every layer in order, e.g. ['kda', 'kda', 'kda', 'mla', …]."""
        if self.kinds:
            return list(self.kinds)
        return [self.attention.kind] * self.num_layers

    @property
    def num_full_attention_layers(self) -> int:
        return sum(kind == self.attention.kind for kind in self.layer_kinds())

    @property
    def num_linear_layers(self) -> int:
        return self.num_layers - self.num_full_attention_layers

    # -- memory ---------------------------------------------------------------------------

    def kv_cache_bytes_per_token(self, bytes_per_element: float = 2) -> float:
        """Bytes the cache grows by per token of context (only full-attention layers grow)."""
        return self.num_full_attention_layers * self.attention.cache_elements_per_token() * bytes_per_element

    def all_full_attention_bytes_per_token(self, bytes_per_element: float = 2) -> float:
        """The cache growth if every layer were this model's full attention (what a hybrid saves against)."""
        return self.num_layers * self.attention.cache_elements_per_token() * bytes_per_element

    def recurrent_state_bytes(self, bytes_per_element: float = 4) -> float:
        """The linear layers' d_k × d_v boards (kept in fp32 by fla / HF): constant in context."""
        if self.linear is None:
            return 0
        return self.num_linear_layers * self.linear.state_elements() * bytes_per_element

    def conv_state_bytes(self, bytes_per_element: float = 2) -> float:
        """The short-convolution buffers of the linear layers (model dtype): also constant."""
        if self.linear is None:
            return 0
        return self.num_linear_layers * self.linear.conv_state_elements() * bytes_per_element

    def state_bytes(self, bytes_per_element: float = 4, conv_bytes_per_element: float = 2) -> float:
        """All fixed per-sequence memory: recurrent boards plus convolution buffers."""
        return self.recurrent_state_bytes(bytes_per_element) + self.conv_state_bytes(conv_bytes_per_element)

    def cache_bytes(
        self,
        context: int,
        bytes_per_element: float = 2,
        state_bytes_per_element: float = 4,
        conv_bytes_per_element: float = 2,
    ) -> float:
        """Everything one sequence keeps at `context` tokens: growing KV cache + fixed state."""
        if context < 0:
            raise ValueError("context must be non-negative")
        return context * self.kv_cache_bytes_per_token(bytes_per_element) + self.state_bytes(
            state_bytes_per_element, conv_bytes_per_element
        )

    # -- parameters -----------------------------------------------------------------------

    def _norm_params(self) -> int:
        return (2 if self.norm == "layernorm" else 1) * self.hidden

    def embedding_params(self) -> int:
        """Input table (+ learned positions) + output head (shared with the input when tied)."""
        n = self.vocab * self.hidden
        if not self.tied_embeddings:
            n += self.vocab * self.hidden
        if self.learned_positions:
            n += self.context * self.hidden
        return n

    def _mixer_params(self, kind: str) -> int:
        if kind == self.attention.kind:
            return self.attention.params(self.hidden)
        if self.linear is not None and kind == self.linear.kind:
            return self.linear.params(self.hidden)
        raise ValueError(f"{self.key}: no mixer of kind {kind!r}")

    def _ffn_params(self, layer: int, active: bool) -> int:
        if self.moe is None or layer < self.first_k_dense:
            return self.mlp.params(self.hidden)
        return self.moe.active_params(self.hidden) if active else self.moe.params(self.hidden)

    def _layer_extras(self) -> int:
        n = (
            self.norms_per_layer * self._norm_params()
        )  # before the mixer, before the FFN (Gemma 2/3: after too)
        if self.attn_res_block_size is not None:
            n += 2 * 2 * self.hidden  # two AttnRes pseudo-queries + their RMSNorms
        return n

    def _count(self, active: bool) -> int:
        n = self.embedding_params() + self._norm_params()  # + final norm
        if self.attn_res_block_size is not None:
            n += 2 * self.hidden  # the final AttnRes mix before the output norm
        for layer, kind in enumerate(self.layer_kinds()):
            n += self._mixer_params(kind) + self._ffn_params(layer, active) + self._layer_extras()
        return n

    def total_params(self) -> int:
        """Every weight of the text model (no multi-token-prediction head, no vision tower)."""
        return self._count(active=False)

    def active_params(self, count_embedding_table: bool = True) -> int:
        """Weights one token touches: all but the routed experts it was not sent to.

        count_embedding_table=False drops the input table (a token reads one row of it) —
        that version is the one to use for bytes read per token. A tied table doubles as
        the output head, so it is read in full and stays counted.
        """
        n = self._count(active=True)
        if not count_embedding_table:
            if not self.tied_embeddings:
                n -= self.vocab * self.hidden
            if self.learned_positions:
                n -= self.context * self.hidden
        return n

    def expert_counts(self) -> tuple[int, int]:
        """(experts per MoE layer incl. shared, experts that run per token) — (0, 0) for dense models."""
        if self.moe is None:
            return 0, 0
        return self.moe.experts + self.moe.shared, self.moe.top_k + self.moe.shared
