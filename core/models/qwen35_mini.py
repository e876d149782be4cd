"""The shipped Qwen3.5 miniature: exactly Qwen3.5's layers (core/models/qwen35.py), tiny, trained here.

Four layers in Qwen3.5's own 3 : 1 pattern — three Gated DeltaNet layers (short convolution, fade α and
write strength β per head, gated norm), then one gated attention layer — at width 96, reading UTF-8
bytes (core/tokenizer.py) instead of Qwen's 248,320-token vocabulary. It is written as a Qwen3.5 folder
(`config.json` + `model.safetensors`, fp32) and read through the same config and tensor checks as a
released one (core/models/hf_qwen35.py); only the tokenizer differs: 256 bytes, no tokenizer.json.

    loaded = load_miniature()        # LoadedQwen35: model, byte tokenizer, folder, config.json
    python -m core.train qwen35_mini # rebuilds assets/qwen35_mini/ (core/train/recipes/qwen35_mini.py)
"""

from __future__ import annotations

from pathlib import Path

import torch

from core.models import hf_folder
from core.models.hf_qwen35 import ReleasedFolder, qwen35_config, read_config, text_tensor_name
from core.models.hf_tokenizer import ByteTokenizer
from core.models.qwen35 import LoadedQwen35, Qwen35
from core.tokenizer import VOCAB_SIZE

CHECKPOINT = Path(__file__).resolve().parents[2] / "assets" / "qwen35_mini"
NAME = "qwen35_mini"

# The text config as transformers' Qwen3_5TextConfig names it (what config.json holds).
TEXT_CONFIG = {
    "model_type": "qwen3_5_text",
    "architectures": ["Qwen3_5ForCausalLM"],
    "vocab_size": VOCAB_SIZE,  # one token per UTF-8 byte
    "hidden_size": 96,
    "intermediate_size": 256,
    "num_hidden_layers": 4,
    "layer_types": ["linear_attention"] * 3 + ["full_attention"],  # Qwen3.5's 3 : 1
    "full_attention_interval": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25},
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "linear_key_head_dim": 16,
    "linear_value_head_dim": 16,
    "linear_conv_kernel_dim": 4,
    "hidden_act": "silu",
    "attention_bias": False,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": True,
}


def build(text_config: dict | None = None) -> Qwen35:
    """A fresh miniature (PyTorch's default init; the recipe sets its own) with its config.json kept."""
    text = dict(text_config or TEXT_CONFIG)
    model = Qwen35(qwen35_config(text))
    model.meta = {"hf_text_config": text}
    return model


def is_miniature(folder: Path | str) -> bool:
    """A folder holds a miniature (a byte vocabulary and no tokenizer.json), not a released Qwen3.5."""
    folder = Path(folder)
    return (folder / "config.json").is_file() and not (folder / "tokenizer.json").exists()


def load_miniature(folder: Path | str = CHECKPOINT, dtype: torch.dtype = torch.float32) -> LoadedQwen35:
    """The shipped miniature (or a recipe's output folder) as a LoadedQwen35 with the byte tokenizer;
    the same config and tensor-shape checks as a released folder (CheckpointError if bad)."""
    folder = Path(folder)
    top, text = read_config(folder)
    config = qwen35_config(text, top)
    hf_folder.check_weight_files(folder)
    state = hf_folder.read_tensors(folder, text_tensor_name, dtype)
    tokenizer = ByteTokenizer()
    model = Qwen35.from_folder(ReleasedFolder(folder, top, text, config, tokenizer, state))
    model.meta["training"] = top.get("course_training", {})
    return LoadedQwen35(model, tokenizer, folder, top, NAME)
