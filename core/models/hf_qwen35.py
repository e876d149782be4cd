"""A released Qwen3.5 folder (Hugging Face format) in the course's own Qwen3.5 module (core/models/qwen35.py).

Two layouts are read, both written by transformers 5.24's `save_pretrained`:

* the text-only `Qwen3_5ForCausalLM` (`model_type` "qwen3_5_text"): tensors `model.layers.…`,
  `model.embed_tokens.weight`, `model.norm.weight`, `lm_head.weight` (absent when tied);
* the multimodal `Qwen3_5ForConditionalGeneration` (`model_type` "qwen3_5"), the layout the small
  releases (0.8B, 2B) ship: the text sizes sit under `text_config`, the text tensors under
  `model.language_model.`, a vision tower under `model.visual.` beside them — not read here, nor the
  multi-token-prediction head (`mtp.`), which plain decoding does not use.

Weights come from `model.safetensors` or the shards its index names; the output head is the token
embedding itself when the file stores no `lm_head.weight` (tied, as the small releases are), and the
stored head otherwise. The tokenizer is the folder's `tokenizer.json` (byte-level BPE, read by
core/models/hf_tokenizer.py; Qwen pads its embedding table far past the tokenizer, which is allowed). Every problem with a folder —
another family, a missing tokenizer, a truncated or missing weights file, a tensor that does not fit
the config, too little free memory for the weights — is a `CheckpointError` with a one-line message,
raised before any weight is loaded where it can be (config, tokenizer, every safetensors header and
the free memory, /proc/meminfo's MemAvailable, are checked first).

    folder = read_folder(path)                   # ReleasedFolder: configs, our config, tokenizer, tensors
    spec = folder_spec(path)                     # the planner's ModelSpec from config.json alone

This module reads; it never builds the model (core/models/qwen35.py builds itself from what is read:
`load_qwen35(path)` → model + tokenizer, `Qwen35.load(path)`), so the two import in one direction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from core.models import hf_folder
from core.models.hf_tokenizer import BPETokenizer, CheckpointError
from core.models.qwen35_layers import Qwen35Config
from core.specs.model import ModelSpec

SUPPORTED_FAMILIES = ("qwen3_5", "qwen3_5_text")
LAYER_TYPES = ("linear_attention", "full_attention")
TEXT_PREFIXES = ("model.language_model.", "model.")  # multimodal first: it also starts with "model."
UNUSED_PREFIXES = ("model.visual.", "visual.", "mtp.", "model.mtp.")  # vision tower, multi-token head


def read_config(folder: Path | str) -> tuple[dict, dict]:
    """The folder's config.json and its text part (itself, or `text_config` for the multimodal layout);
    CheckpointError if it is not a Qwen3.5 checkpoint."""
    config = hf_folder.read_config(folder)
    family = config.get("model_type")
    if family not in SUPPORTED_FAMILIES:
        raise CheckpointError(
            f"unsupported model family {str(family)[:60]!r} in config.json: this loader reads Qwen3.5 "
            f"checkpoints (model_type {' or '.join(repr(f) for f in SUPPORTED_FAMILIES)})"
        )
    if family == "qwen3_5_text":
        return config, config
    text = config.get("text_config")
    if not isinstance(text, dict):
        raise CheckpointError("config.json of a qwen3_5 checkpoint has no 'text_config' object")
    return config, text


def qwen35_config(text: dict, top: dict | None = None) -> Qwen35Config:
    """Our Qwen35Config from a text config dict, read as transformers' Qwen3_5TextConfig reads it."""
    top = top or text
    rope = text.get("rope_parameters") or {}
    if not isinstance(rope, dict) or rope.get("rope_type", "default") != "default":
        raise CheckpointError(
            f"unsupported rotary scaling {rope.get('rope_type')!r} (Qwen3.5 uses 'default')"
        )
    if text.get("hidden_act", "silu") != "silu" or text.get("attention_bias", False):
        raise CheckpointError("unsupported: this config's activation or attention bias is not Qwen3.5's")
    try:
        layers = int(text.get("num_hidden_layers", 32))
        kinds = text.get("layer_types")
        if kinds is None:
            every = int(text.get("full_attention_interval", 4))
            kinds = ["full_attention" if (i + 1) % every == 0 else "linear_attention" for i in range(layers)]
        heads = int(text.get("num_attention_heads", 16))
        head_dim = int(text.get("head_dim") or 256)
        partial = float(rope.get("partial_rotary_factor", text.get("partial_rotary_factor", 0.25)))
        config = Qwen35Config(
            vocab_size=int(text.get("vocab_size", 248320)),
            hidden_size=int(text.get("hidden_size", 4096)),
            intermediate_size=int(text.get("intermediate_size", 12288)),
            layer_types=tuple(str(k) for k in kinds),
            num_attention_heads=heads,
            num_key_value_heads=int(text.get("num_key_value_heads", 4)),
            head_dim=head_dim,
            rotary_dim=int(head_dim * partial),
            rope_theta=float(rope.get("rope_theta", text.get("rope_theta", 10000.0))),
            linear_num_key_heads=int(text.get("linear_num_key_heads", 16)),
            linear_num_value_heads=int(text.get("linear_num_value_heads", 32)),
            linear_key_head_dim=int(text.get("linear_key_head_dim", 128)),
            linear_value_head_dim=int(text.get("linear_value_head_dim", 128)),
            linear_conv_kernel_dim=int(text.get("linear_conv_kernel_dim", 4)),
            rms_norm_eps=float(text.get("rms_norm_eps", 1e-6)),
            max_position_embeddings=int(text.get("max_position_embeddings", 32768)),
            tie_word_embeddings=bool(top.get("tie_word_embeddings", False)),  # the outer flag
        )
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"config.json has a non-numeric size ({hf_folder.one_line(error)})") from None
    _check_sizes(config, layers)
    return config


def _check_sizes(c: Qwen35Config, layers: int) -> None:
    if len(c.layer_types) != layers or set(c.layer_types) - set(LAYER_TYPES):
        raise CheckpointError(
            f"config.json layer_types must name {layers} layers, each 'linear_attention' or 'full_attention'"
        )
    sizes = (c.vocab_size, c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim)
    if min(sizes) < 1 or c.num_attention_heads % c.num_key_value_heads:
        raise CheckpointError(
            f"config.json attention heads do not fit: {c.num_attention_heads} query heads, "
            f"{c.num_key_value_heads} KV heads"
        )
    if c.linear_num_key_heads < 1 or c.linear_num_value_heads % c.linear_num_key_heads:
        raise CheckpointError(
            f"config.json board heads do not fit: {c.linear_num_value_heads} value heads, "
            f"{c.linear_num_key_heads} key heads"
        )
    if c.rotary_dim % 2 or not 0 <= c.rotary_dim <= c.head_dim or c.linear_conv_kernel_dim < 1:
        raise CheckpointError(
            f"config.json rotary part {c.rotary_dim} of head_dim {c.head_dim} is not usable"
        )


def text_tensor_name(name: str) -> str | None:
    """A checkpoint tensor name → our model's name, or None for weights plain decoding does not use."""
    if name.startswith(UNUSED_PREFIXES):
        return None
    if name == "lm_head.weight":
        return name
    for prefix in TEXT_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name  # unexpected: reported by the shape check


def check_tensors(state: dict[str, torch.Tensor], expected: dict[str, tuple[int, ...]], tied: bool) -> None:
    """Every tensor the config implies (`expected`, name → shape) is present with its shape, and nothing
    else (one line if not); a tied head is not stored."""
    if tied:
        expected = {name: shape for name, shape in expected.items() if name != "lm_head.weight"}
    hf_folder.check_shapes(state, expected)


def check_vocabulary(tokenizer: BPETokenizer, model_vocab: int) -> None:
    """Every token id needs a row of the embedding table (Qwen pads its table far beyond the tokenizer)."""
    if tokenizer.vocab_size > model_vocab:
        raise CheckpointError(
            f"tokenizer.json has {tokenizer.vocab_size:,} tokens but the model's vocabulary has "
            f"{model_vocab:,}: they do not belong together"
        )


def weights_bytes(folder: Path | str, dtype: torch.dtype = torch.float32) -> int:
    """Bytes the text weights take once loaded in `dtype`, from the safetensors headers alone (the
    vision tower and multi-token head are not loaded, so not counted)."""
    from safetensors import safe_open

    elements = 0
    for path in hf_folder.weight_files(folder):
        with safe_open(str(path), framework="pt") as f:
            for name in f.keys():
                if text_tensor_name(name) is not None:
                    elements += _numel(f.get_slice(name).get_shape())
    return elements * torch.empty((), dtype=dtype).element_size()


def _numel(shape) -> int:
    n = 1
    for size in shape:
        n *= int(size)
    return n


def available_memory(meminfo: Path | str = "/proc/meminfo") -> int | None:
    """Bytes of memory the system can give a new allocation now (MemAvailable), or None where the
    file is absent or unreadable (not Linux): then the check is skipped, not guessed."""
    try:
        for line in Path(meminfo).read_text(encoding="ascii").splitlines():
            name, _, value = line.partition(":")
            if name == "MemAvailable":
                return int(value.split()[0]) * 1024  # the file counts kB
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None
    return None


def check_memory(
    folder: Path | str, dtype: torch.dtype, available: Callable[[], int | None] = available_memory
) -> None:
    """CheckpointError (one line) when the weights in `dtype` would not fit in the free memory."""
    from core.units import format_bytes

    free = available()
    need = weights_bytes(folder, dtype)
    if free is not None and need > free:
        raise CheckpointError(
            f"this checkpoint's weights need {format_bytes(need)} of memory in {str(dtype).removeprefix('torch.')}, "
            f"but this machine has {format_bytes(free)} free; close other programs or use a machine with more memory"
        )


@dataclass
class ReleasedFolder:
    """What a Qwen3.5 folder holds, read and checked: config.json as written (`top`) and its text part,
    our config (the head tied when the file stores none), the tokenizer and the text tensors."""

    folder: Path
    top: dict = field(repr=False)
    text: dict = field(repr=False)
    config: Qwen35Config
    tokenizer: BPETokenizer
    state: dict[str, torch.Tensor] = field(repr=False)

    @property
    def text_config(self) -> dict:
        """The text model's config.json as `save_pretrained` writes it for Qwen3_5ForCausalLM."""
        text = {**self.text, "model_type": "qwen3_5_text", "architectures": ["Qwen3_5ForCausalLM"]}
        return {**text, "tie_word_embeddings": self.config.tie_word_embeddings}


def read_folder(
    folder: Path | str,
    dtype: torch.dtype = torch.float32,
    available: Callable[[], int | None] = available_memory,
) -> ReleasedFolder:
    """Read a Qwen3.5 folder (either layout), CheckpointError if bad. Checked before any weight is read:
    config.json, tokenizer.json, every safetensors header, and that the weights fit in the free memory
    (`available()`, bytes). The tensors are read in `dtype`."""
    folder = Path(folder)
    top, text = read_config(folder)
    config = qwen35_config(text, top)
    tokenizer = BPETokenizer.from_folder(folder)
    check_vocabulary(tokenizer, config.vocab_size)
    hf_folder.check_weight_files(folder)
    check_memory(folder, dtype, available)
    state = hf_folder.read_tensors(folder, text_tensor_name, dtype)
    if ("lm_head.weight" in state) == config.tie_word_embeddings:
        # a stored head is used; none: the embedding
        config = replace(config, tie_word_embeddings="lm_head.weight" not in state)
    return ReleasedFolder(folder, top, text, config, tokenizer, state)


def spec_from_config(hf: dict, name: str = "Qwen3.5 checkpoint") -> ModelSpec:
    """The planner's ModelSpec for a Qwen3.5 config.json (core/plan/config.py reads both layouts)."""
    from core.plan.config import parse
    from core.plan.errors import ConfigError

    try:
        spec = parse(hf, key="qwen35_checkpoint", name=name).spec
    except ConfigError as error:
        raise CheckpointError(str(error)) from None
    return replace(spec, source="config.json of the local checkpoint")


def folder_spec(folder: Path | str, name: str | None = None) -> ModelSpec:
    """The ModelSpec of a Qwen3.5 folder from its config.json alone (no weights read)."""
    folder = Path(folder)
    top, text = read_config(folder)
    qwen35_config(text, top)
    return spec_from_config(top, name or folder.name)
