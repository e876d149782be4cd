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

from core.specs.blocks import DenseMLP, LatentAttention, LinearAttention, MixtureOfExperts, SoftmaxAttention
from core.specs.catalog import (
    DEEPSEEK_V3,
    GPT2,
    KIMI_K2,
    KIMI_K3,
    KIMI_LINEAR,
    LLAMA3_8B,
    QWEN3_NEXT,
    SPECS,
    attn_res_block_starts,
    gpt2s_in,
)
from core.specs.model import (
    K3_FULL_ATTN_LAYERS,
    KIMI_LINEAR_FULL_ATTN_LAYERS,
    ModelSpec,
    full_attention_layers,
    hybrid_layer_kinds,
)
from core.specs.stages import MECHANISMS, Stage

__all__ = [
    "DenseMLP",
    "LatentAttention",
    "LinearAttention",
    "MixtureOfExperts",
    "SoftmaxAttention",
    "DEEPSEEK_V3",
    "GPT2",
    "KIMI_K2",
    "KIMI_K3",
    "KIMI_LINEAR",
    "LLAMA3_8B",
    "QWEN3_NEXT",
    "SPECS",
    "attn_res_block_starts",
    "gpt2s_in",
    "K3_FULL_ATTN_LAYERS",
    "KIMI_LINEAR_FULL_ATTN_LAYERS",
    "ModelSpec",
    "full_attention_layers",
    "hybrid_layer_kinds",
    "MECHANISMS",
    "Stage",
]
