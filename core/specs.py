"""Real model configurations, GPT-2 (2019) to Kimi K3 (2026), with their sources.

Every field below is a value from a released config file or reference code (the
`source` of each spec says which); every derived number — cache bytes per token,
the fixed recurrent state, total and active parameters, the order of layer kinds —
is computed from those fields, never typed in. The only typed-in results are the
*published* parameter counts, kept for comparison (`published_params`,
`published_active`).

Parameter formulas follow the tensor shapes of the reference implementations:
nanoGPT `model.py` (GPT-2), meta-llama `params.json` (Llama-3), DeepSeek-V3
`inference/model.py` (MLA, DeepSeekMoE), HF transformers `qwen3_next` (gated
attention + Gated DeltaNet), mlx-lm `kimi_linear.py` / `kimi_k3.py` and the K3
checkpoint's weight listing (KDA, gated NoPE-MLA, latent MoE, Attention Residuals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.mechanisms import get as get_rule
from core.mechanisms import rule_keys

# ---------------------------------------------------------------------------------------------
# Building blocks: each knows its own parameter count from its fields.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SoftmaxAttention:
    """Multi-head (kv_heads == heads) or grouped-query attention (kv_heads < heads).

    output_gate: Qwen3-Next's gated attention — q_proj is twice as wide (query | sigmoid gate).
    qk_norm: an RMSNorm of width head_dim on queries and on keys.
    """

    heads: int
    kv_heads: int
    head_dim: int
    bias: bool = False
    output_gate: bool = False
    qk_norm: bool = False

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
            n += q_out + 2 * kv_out + hidden
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

    latent_dim: K3's latent MoE — routed experts run at latent_dim, reached through a
    down projection (hidden→latent), optional RMSNorm, and an up projection back.
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
        n = 2 * self._norm_params()  # before the mixer, before the FFN
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


# ---------------------------------------------------------------------------------------------
# The seven models
# ---------------------------------------------------------------------------------------------

_MLA_DS = dict(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)

GPT2 = ModelSpec(
    key="gpt2",
    name="GPT-2 small",
    year=2019,
    source="karpathy/nanoGPT model.py (GPT.from_pretrained 'gpt2'); HF openai-community/gpt2 config.json",
    hidden=768,
    num_layers=12,
    vocab=50257,
    context=1024,
    attention=SoftmaxAttention(heads=12, kv_heads=12, head_dim=64, bias=True),
    mlp=DenseMLP(intermediate=4 * 768, gated=False, bias=True),
    published_params=124e6,
    published_active=124e6,
    tied_embeddings=True,
    learned_positions=True,
    norm="layernorm",
)

LLAMA3_8B = ModelSpec(
    key="llama3_8b",
    name="Llama-3-8B",
    year=2024,
    source="meta-llama/llama3 Meta-Llama-3-8B-Instruct/params.json, MODEL_CARD.md",
    hidden=4096,
    num_layers=32,
    vocab=128256,
    context=8192,
    attention=SoftmaxAttention(heads=32, kv_heads=8, head_dim=128),
    # multiple_of 1024, ffn_dim_multiplier 1.3: int(2·4·4096/3 · 1.3) rounded up to 1024 → 14336
    mlp=DenseMLP(intermediate=14336),
    published_params=8.0e9,
    published_active=8.0e9,
)

DEEPSEEK_V3 = ModelSpec(
    key="deepseek_v3",
    name="DeepSeek-V3",
    year=2024,
    source="deepseek-ai/DeepSeek-V3 inference/configs/config_671B.json, inference/model.py, README.md",
    hidden=7168,
    num_layers=61,
    vocab=129280,
    context=131072,
    attention=LatentAttention(heads=128, **_MLA_DS),
    mlp=DenseMLP(intermediate=18432),
    moe=MixtureOfExperts(experts=256, top_k=8, shared=1, expert_intermediate=2048, shared_intermediate=2048),
    first_k_dense=3,
    published_params=671e9,
    published_active=37e9,
    notes="Published totals exclude the 14B multi-token-prediction module.",
)

KIMI_K2 = ModelSpec(
    key="kimi_k2",
    name="Kimi K2",
    year=2025,
    source="MoonshotAI/Kimi-K2 README.md; huggingface.co/moonshotai/Kimi-K2-Instruct config.json",
    hidden=7168,
    num_layers=61,
    vocab=163840,
    context=131072,
    attention=LatentAttention(heads=64, **_MLA_DS),
    mlp=DenseMLP(intermediate=18432),
    moe=MixtureOfExperts(experts=384, top_k=8, shared=1, expert_intermediate=2048, shared_intermediate=2048),
    first_k_dense=1,
    published_params=1.0e12,
    published_active=32e9,
)

QWEN3_NEXT = ModelSpec(
    key="qwen3_next",
    name="Qwen3-Next-80B-A3B",
    year=2025,
    source=(
        "huggingface/transformers models/qwen3_next/configuration_qwen3_next.py, modeling_qwen3_next.py; "
        "huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct"
    ),
    hidden=2048,
    num_layers=48,
    vocab=151936,
    context=262144,
    attention=SoftmaxAttention(heads=16, kv_heads=2, head_dim=256, output_gate=True, qk_norm=True),
    mlp=DenseMLP(intermediate=5120),  # class default; unused, every layer is MoE
    linear=LinearAttention(
        kind="gated_delta", qk_heads=16, v_heads=32, head_k_dim=128, head_v_dim=128, conv_kernel=4
    ),
    kinds=tuple(hybrid_layer_kinds(48, 4, False, linear_kind="gated_delta", full_kind="gqa")),
    moe=MixtureOfExperts(
        experts=512,
        top_k=10,
        shared=1,
        expert_intermediate=512,
        shared_intermediate=512,
        router_bias=False,
        shared_gate=True,
    ),
    published_params=80e9,
    published_active=3e9,
)

KIMI_LINEAR = ModelSpec(
    key="kimi_linear",
    name="Kimi Linear 48B-A3B",
    year=2025,
    source=(
        "huggingface.co/moonshotai/Kimi-Linear-48B-A3B-Instruct config.json; "
        "ml-explore/mlx-lm mlx_lm/models/kimi_linear.py; MoonshotAI/Kimi-Linear README"
    ),
    hidden=2304,
    num_layers=27,
    vocab=163840,
    context=1048576,
    attention=LatentAttention(
        heads=32,
        q_lora_rank=None,
        kv_lora_rank=512,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
    ),
    mlp=DenseMLP(intermediate=9216),
    linear=LinearAttention(
        kind="kda", qk_heads=32, v_heads=32, head_k_dim=128, head_v_dim=128, conv_kernel=4
    ),
    kinds=tuple(hybrid_layer_kinds(27, 4, True)),
    moe=MixtureOfExperts(experts=256, top_k=8, shared=1, expert_intermediate=1024, shared_intermediate=1024),
    first_k_dense=1,
    published_params=48e9,
    published_active=3e9,
)

KIMI_K3 = ModelSpec(
    key="kimi_k3",
    name="Kimi K3",
    year=2026,
    source=(
        "huggingface.co/moonshotai/Kimi-K3 config.json (text_config) and weight listing; "
        "huggingface/transformers models/kimi_k3/modular_kimi_k3.py; ml-explore/mlx-lm mlx_lm/models/kimi_k3.py; "
        "NVIDIA NeMo AutoModel docs (2.8T total / 104B activated)"
    ),
    hidden=7168,
    num_layers=93,
    vocab=163840,
    context=1048576,
    attention=LatentAttention(heads=96, output_gate=True, **_MLA_DS),
    mlp=DenseMLP(intermediate=33792),
    linear=LinearAttention(
        kind="kda",
        qk_heads=96,
        v_heads=96,
        head_k_dim=128,
        head_v_dim=128,
        conv_kernel=4,
        full_rank_gate=True,
    ),
    kinds=tuple(hybrid_layer_kinds(93, 4, True)),
    moe=MixtureOfExperts(
        experts=896,
        top_k=16,
        shared=2,
        expert_intermediate=3072,
        shared_intermediate=3072,
        latent_dim=3584,
        latent_norm=True,
    ),
    first_k_dense=1,
    attn_res_block_size=12,
    published_params=2.8e12,
    published_active=104e9,
    notes="Text model only; the vision tower (MoonViT-style, 27 layers) is not counted.",
)

SPECS: dict[str, ModelSpec] = {
    spec.key: spec for spec in (GPT2, LLAMA3_8B, DEEPSEEK_V3, KIMI_K2, QWEN3_NEXT, KIMI_LINEAR, KIMI_K3)
}


def attn_res_block_starts(num_layers: int, block_size: int) -> list[int]:
    """0-based decoder layers that open a new Attention Residuals block (K3: 0, 12, …, 84)."""
    if block_size < 1:
        raise ValueError("block_size must be positive")
    return list(range(0, num_layers, block_size))


def gpt2s_in(spec: ModelSpec, unit: ModelSpec = GPT2) -> float:
    """How many of `unit` fit in `spec`, by published parameter totals (the seed's 22,580)."""
    return spec.published_params / unit.published_params


# ---------------------------------------------------------------------------------------------
# The memory mechanisms of the story (lesson 11), at one shared width
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """One stage of the story: how a layer keeps what it has read."""

    key: str
    label: str
    verb: str  # what it does to memory when a token arrives
    update: str  # the state rule, in words
    lesson: str  # slug of the lesson (ui/course.py)
    grows: bool  # True: memory grows with context; False: fixed-size board
    year: int
    source: str


def _rule_stage(key: str) -> Stage:
    m = get_rule(key)
    return Stage(key, m.label, m.verb, f"{m.update}: {m.update_words}", m.lesson, False, m.year, m.source)


# The two stages before the fixed-size board, then every rule of the registry (core/mechanisms.py).
MECHANISMS: dict[str, Stage] = {
    s.key: s
    for s in (
        Stage(
            "no_cache",
            "GPT-2, no cache",
            "recompute",
            "keeps nothing; re-reads the whole text every step",
            "gpt2",
            False,
            2019,
            "Radford et al. 2019; nanoGPT model.py",
        ),
        Stage(
            "attention",
            "KV cache",
            "keep everything",
            "appends one key and one value per token",
            "kv_cache",
            True,
            2019,
            "standard decoding; DeepSeek-V3 / Llama-3 configs",
        ),
        *(_rule_stage(key) for key in rule_keys()),
    )
}
