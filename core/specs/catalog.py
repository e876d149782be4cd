"""The seven real models of the story, GPT-2 (2019) to Kimi K3 (2026): released config values, each with its source."""

from __future__ import annotations

from core.i18n import N_
from core.specs.blocks import DenseMLP, LatentAttention, LinearAttention, MixtureOfExperts, SoftmaxAttention
from core.specs.model import ModelSpec, hybrid_layer_kinds

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
    source=N_(  # shown on the Kimi K3 and Experts pages, so its framing words are translated
        "huggingface.co/moonshotai/Kimi-K3 config.json (text_config) and weight listing; "
        "huggingface/transformers models/kimi_k3/modular_kimi_k3.py; ml-explore/mlx-lm mlx_lm/models/kimi_k3.py; "
        "NVIDIA NeMo AutoModel docs (published parameter counts)"
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
    """How many of `unit` fit in `spec`, by published parameter totals (the article's 22,580)."""
    return spec.published_params / unit.published_params
