"""A tiny random Qwen3 (dense) in Hugging Face format, made locally for tests and benches (never downloaded).

`transformers` (a dev-only dependency) writes config.json + model.safetensors with `save_pretrained`.
Norm weights are drawn away from their constant init, so a parity test sees every term.
"""

from __future__ import annotations

from pathlib import Path

SIZES = dict(
    vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
)  # fmt: skip


def make_checkpoint(folder: Path, tied: bool = False, seed: int = 0, **sizes) -> Path:
    """Write a random Qwen3ForCausalLM into `folder`; `sizes` override SIZES' fields."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(Qwen3Config(**{**SIZES, **sizes}, tie_word_embeddings=tied))
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 1:
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
    model.eval().save_pretrained(folder)
    return Path(folder)
