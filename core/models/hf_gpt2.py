"""Released GPT-2 weights (Hugging Face format) in the course's own GPT-2 module.

A Hugging Face GPT-2 folder holds `config.json`, `model.safetensors` (or shards listed in
`model.safetensors.index.json`) and `tokenizer.json` — the layout of
huggingface.co/openai-community/gpt2 and of `GPT2LMHeadModel.save_pretrained`. The tensor
names and the Conv1D layout follow transformers' `models/gpt2/modeling_gpt2.py`:

* `c_attn`, `c_proj`, `c_fc` are `Conv1D` layers that store their weight as (in, out), the
  transpose of `nn.Linear`'s (out, in) — so every one of them is transposed on the way in;
* the output head is tied to the token embedding `wte` (`tie_word_embeddings`, default true);
  a separate `lm_head.weight` is used when a checkpoint has one and unties them;
* names may carry a `transformer.` prefix (save_pretrained) or not (OpenAI's upload), and old
  files also store the causal-mask buffers `attn.bias` / `attn.masked_bias`, which are skipped.

`load_gpt2(folder)` returns a `LoadedGPT2`: our `GPT2` (core/models/gpt2.py, so `step`, the
KV cache and the traces work unchanged), its tokenizer (core/models/hf_tokenizer.py), the raw
config and a `core.specs.ModelSpec` built from it (for rooflines and cache sizes);
`folder_spec(folder)` gives that spec from config.json alone. Every
problem with the folder raises `CheckpointError` with a one-line message. Other families
(Llama, Qwen, …) are refused by name: this module reads GPT-2 only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from core.models import hf_folder
from core.models.gpt2 import GPT2, GPT2Config
from core.models.hf_tokenizer import BPETokenizer, CheckpointError, check_vocabulary
from core.specs.blocks import DenseMLP, SoftmaxAttention
from core.specs.model import ModelSpec

SUPPORTED_FAMILIES = ("gpt2",)
TANH_GELU = ("gelu_new", "gelu_pytorch_tanh", "gelu_fast")  # all GPT-2's tanh approximation
SKIPPED = ("attn.bias", "attn.masked_bias")  # causal-mask buffers of older files, not weights
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
OURS = {  # HF name inside block i → our name inside blocks.i
    "ln_1": "ln_1",
    "ln_2": "ln_2",
    "attn.c_attn": "attn.qkv",
    "attn.c_proj": "attn.proj",
    "mlp.c_fc": "mlp.up",
    "mlp.c_proj": "mlp.down",
}
TOP = {"wte.weight": "wte.weight", "wpe.weight": "wpe.weight", "ln_f.weight": "ln_f.weight"}
TOP |= {"ln_f.bias": "ln_f.bias", "lm_head.weight": "head.weight"}


def read_config(folder: Path | str) -> dict:
    """The folder's config.json as a dict, refusing anything that is not a GPT-2 checkpoint."""
    config = hf_folder.read_config(folder)
    path = Path(folder) / "config.json"
    family = config.get("model_type")
    if family not in SUPPORTED_FAMILIES:
        raise CheckpointError(
            f"unsupported model family {family!r} in {path.name}: this loader reads GPT-2 "
            f"checkpoints (model_type 'gpt2')"
        )
    activation = config.get("activation_function", "gelu_new")
    if activation not in TANH_GELU:
        raise CheckpointError(f"unsupported activation {activation!r} (GPT-2 uses gelu_new)")
    if config.get("scale_attn_by_inverse_layer_idx"):
        raise CheckpointError("unsupported: scale_attn_by_inverse_layer_idx (not GPT-2's attention)")
    return config


def gpt2_config(hf: dict) -> GPT2Config:
    """Our GPT2Config from a Hugging Face GPT-2 config dict (names as in transformers' GPT2Config)."""
    try:
        config = GPT2Config(
            vocab_size=int(hf.get("vocab_size", 50257)),
            block_size=int(hf.get("n_positions", hf.get("n_ctx", 1024))),
            n_layer=int(hf.get("n_layer", 12)),
            n_head=int(hf.get("n_head", 12)),
            d_model=int(hf.get("n_embd", 768)),
            d_mlp=int(hf.get("n_inner") or 0),
            layer_norm_eps=float(hf.get("layer_norm_epsilon", 1e-5)),
        )
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"config.json has a non-numeric size ({hf_folder.one_line(error)})") from None
    sizes = (config.vocab_size, config.block_size, config.n_layer, config.n_head, config.d_model)
    if min(sizes) < 1 or config.d_model % config.n_head:
        raise CheckpointError(
            f"config.json sizes do not fit together: n_embd {config.d_model}, n_head {config.n_head}"
        )
    return config


def spec_from_config(hf: dict, name: str = "GPT-2 checkpoint", key: str = "gpt2_checkpoint") -> ModelSpec:
    """A `core.specs.ModelSpec` for a GPT-2 config, for cache sizes and rooflines (same fields
    as core/specs/catalog.py's GPT-2 row, which this reproduces for GPT-2 small)."""
    c = gpt2_config(hf)
    params = _param_count(c, tied=hf.get("tie_word_embeddings", True))
    return ModelSpec(
        key=key,
        name=name,
        year=2019,
        source="config.json of the local checkpoint",
        hidden=c.d_model,
        num_layers=c.n_layer,
        vocab=c.vocab_size,
        context=c.block_size,
        attention=SoftmaxAttention(heads=c.n_head, kv_heads=c.n_head, head_dim=c.head_dim, bias=True),
        mlp=DenseMLP(intermediate=c.mlp_dim, gated=False, bias=True),
        published_params=params,
        published_active=params,
        tied_embeddings=bool(hf.get("tie_word_embeddings", True)),
        learned_positions=True,
        norm="layernorm",
    )


def catalog_spec(config: GPT2Config) -> ModelSpec:
    """The core/specs catalog row with this shape (GPT-2 small for the released 124M), else one
    built from the config itself — so a page can show the live cache beside a cited figure."""
    from core.specs import SPECS

    for spec in SPECS.values():
        same = (spec.hidden, spec.num_layers, spec.vocab, spec.context) == (
            config.d_model,
            config.n_layer,
            config.vocab_size,
            config.block_size,
        )
        if same and spec.learned_positions:
            return spec
    hf = {"n_embd": config.d_model, "n_layer": config.n_layer, "n_head": config.n_head}
    hf |= {"n_positions": config.block_size, "vocab_size": config.vocab_size, "n_inner": config.d_mlp}
    return spec_from_config(hf, name="this checkpoint's config.json")


def _param_count(c: GPT2Config, tied: bool) -> int:
    d, m = c.d_model, c.mlp_dim
    block = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * m + m) + (m * d + d)
    return (c.vocab_size + c.block_size) * d + c.n_layer * block + 2 * d + (0 if tied else c.vocab_size * d)


def read_tensors(folder: Path | str, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """Every tensor of the folder's safetensors file(s), HF names without the `transformer.` prefix."""
    from safetensors import SafetensorError, safe_open

    tensors: dict[str, torch.Tensor] = {}
    for path in hf_folder.weight_files(folder):
        if not path.is_file():
            raise CheckpointError(f"shard {path.name} listed in the index is missing")
        try:
            with safe_open(str(path), framework="pt") as f:
                for name in f.keys():
                    short = name.removeprefix("transformer.")
                    if short.split(".", 2)[-1] not in SKIPPED:
                        tensors[short] = f.get_tensor(name).to(dtype)
        except (SafetensorError, OSError, RuntimeError, ValueError) as error:
            raise CheckpointError(
                f"{path.name} is damaged or truncated ({hf_folder.one_line(error)}); download it again"
            ) from None
    return tensors


def to_our_names(tensors: dict[str, torch.Tensor], config: GPT2Config) -> dict[str, torch.Tensor]:
    """HF GPT-2 tensors → our GPT2's state dict: Conv1D weights transposed, shapes checked."""
    state: dict[str, torch.Tensor] = {}
    for name, tensor in tensors.items():
        if name in TOP:
            state[TOP[name]] = tensor
            continue
        parts = name.split(".", 2)  # h, i, rest
        if len(parts) != 3 or parts[0] != "h" or not parts[1].isdigit():
            raise CheckpointError(f"unexpected tensor {name!r}: not a GPT-2 weight")
        module, _, kind = parts[2].rpartition(".")
        if module not in OURS or kind not in ("weight", "bias"):
            raise CheckpointError(f"unexpected tensor {name!r}: not a GPT-2 weight")
        if parts[2] in CONV1D:
            # Conv1D (in, out) → Linear (out, in) as a transposed *view*: the numbers stay laid out
            # (in, out), as transformers keeps them. One token's matrix-vector product reads a
            # weight too big for the CPU's caches about 20 % faster that way on x86 (bench/
            # generation.py --real); the values, and so the logits, are the same.
            tensor = tensor.t()
        state[f"blocks.{parts[1]}.{OURS[module]}.{kind}"] = tensor
    if "wte.weight" in state:
        state.setdefault("head.weight", state["wte.weight"])  # tied, as GPT-2 was trained
    with torch.device("meta"):  # shapes only, no memory
        expected = {k: tuple(v.shape) for k, v in GPT2(config, init=False).state_dict().items()}
    hf_folder.check_shapes(state, expected)
    return state


@dataclass
class LoadedGPT2(hf_folder.LoadedCheckpoint):
    """A released GPT-2 in our GPT2 module, with its tokenizer, folder and config.json."""

    model: GPT2
    read_spec = staticmethod(spec_from_config)


def load_gpt2(folder: Path | str, dtype: torch.dtype = torch.float32, name: str | None = None) -> LoadedGPT2:
    """A Hugging Face GPT-2 folder → our GPT2 in eval mode + tokenizer + config (CheckpointError if bad).

    The weights are read in `dtype` (float32 by default, so logits match transformers' to 1e-5).
    """
    folder = Path(folder)
    hf = read_config(folder)
    config = gpt2_config(hf)
    tokenizer = BPETokenizer.from_folder(folder)
    check_vocabulary(tokenizer, config.vocab_size)
    state = to_our_names(read_tensors(folder, dtype), config)
    with torch.device("meta"):
        model = GPT2(config, init=False)
    model.load_state_dict(state, assign=True)
    if hf.get("tie_word_embeddings", True):
        model.head.weight = model.wte.weight  # one matrix, counted once
    model.meta = {"source": str(folder), "hf_config": hf}
    return LoadedGPT2(model.eval(), tokenizer, folder, hf, name or folder.name)


def folder_spec(folder: Path | str, name: str | None = None) -> ModelSpec:
    """The ModelSpec of a GPT-2 folder from its config.json alone (no weights read): for a
    roofline or a cache-size prediction before loading. CheckpointError as `load_gpt2`."""
    folder = Path(folder)
    return spec_from_config(read_config(folder), name or folder.name)
