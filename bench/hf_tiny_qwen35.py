"""A tiny random Qwen3.5 in Hugging Face format, made locally for the tests and benches (never downloaded).

`transformers` (a dev-only dependency) writes `config.json` + `model.safetensors` with
`save_pretrained`, in either layout: the text-only `Qwen3_5ForCausalLM` or the multimodal
`Qwen3_5ForConditionalGeneration` the small releases ship (text under `text_config` and
`model.language_model.`, a one-block vision tower beside it). The tokenizer is the tiny byte-level
BPE of bench/hf_tiny_gpt2.py. Every weight is drawn at a readable scale (norm weights, A_log and
dt_bias too, which transformers initialises to constants), so a parity test sees every term.
"""

from __future__ import annotations

from pathlib import Path

TEXT = dict(
    hidden_size=48,
    intermediate_size=96,
    num_hidden_layers=4,  # three Gated DeltaNet layers, then one attention layer
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    linear_num_key_heads=2,
    linear_num_value_heads=4,
    linear_key_head_dim=8,
    linear_value_head_dim=12,
    linear_conv_kernel_dim=4,
    max_position_embeddings=512,
)
VISION = dict(
    depth=1, hidden_size=16, intermediate_size=32, num_heads=2, patch_size=4, num_position_embeddings=16
)


def make_checkpoint(
    folder: Path,
    multimodal: bool = False,
    tied: bool = True,
    seed: int = 0,
    vocab_size: int = 320,
    **sizes,
) -> Path:
    """Write a random Qwen3.5 (+ tokenizer.json) into `folder`; `sizes` override TEXT's fields."""
    import torch
    from transformers import (
        Qwen3_5Config,
        Qwen3_5ForCausalLM,
        Qwen3_5ForConditionalGeneration,
        Qwen3_5TextConfig,
    )

    from bench.hf_tiny_gpt2 import train_tokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = train_tokenizer()
    tok.save(str(folder / "tokenizer.json"))
    text = {**TEXT, **sizes, "vocab_size": vocab_size, "tie_word_embeddings": tied}
    torch.manual_seed(seed)
    if multimodal:
        vision = {**VISION, "out_hidden_size": text["hidden_size"]}
        model = Qwen3_5ForConditionalGeneration(
            Qwen3_5Config(text_config=text, vision_config=vision, tie_word_embeddings=tied)
        )
    else:
        model = Qwen3_5ForCausalLM(Qwen3_5TextConfig(**text))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("A_log"):
                p.copy_(torch.empty_like(p).uniform_(-1.0, 1.5))  # fades α from ~0.6 to ~0.999 per token
            elif p.dim() == 1:
                p.copy_(0.3 * torch.randn_like(p))  # norm weights and dt_bias: not their constant init
            else:
                p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5)  # unit-scale activations
    model.eval().save_pretrained(folder)
    return folder
