"""Qwen3 (dense) in the course's own code, decoding over a KV cache allocated once.

Qwen3 (Qwen team, 2025; transformers 5.24 `models/qwen3/modeling_qwen3.py`) is the plain
full-attention model Qwen3.5 grew from: every layer is attention + SwiGLU MLP, so its cache grows
a K row and a V row per token in every layer. Its attention has what Qwen3.5's attention layers
have, less two things: RMSNorm on q and k per head (a plain weight, `Qwen3RMSNorm`, not Qwen3.5's
`1 + w`), rotary position on the whole head (not a quarter of it), grouped KV heads — and no
output gate. Tensor names are transformers' (`model.layers.0.self_attn.q_proj.weight`, …), so a
released folder's state dict loads as it is; a head tied to the embedding is the embedding itself.

There is no eager twin here: the oracle is transformers' own Qwen3 (tests/core/models/test_qwen3.py).
The static cache (core/models/static_kv.py) is what the GPU page's checkpoint benchmark captures
as a CUDA graph (core/gpu/decode/checkpoint_course.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn

from core.models import hf_folder
from core.models.hf_tokenizer import CheckpointError
from core.models.qwen35_layers import RMSNormBase, SwiGLU, rotate
from core.models.static_kv import StaticKV, attend


@dataclass(frozen=True)
class Qwen3Config:
    """The sizes, named as in transformers' `Qwen3Config`."""

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rope_theta: float
    rms_norm_eps: float = 1e-6
    attention_bias: bool = False
    tie_word_embeddings: bool = False
    max_position_embeddings: int = 40960


def qwen3_config(hf: dict) -> Qwen3Config:
    """Our config from a Qwen3 config.json; CheckpointError (one line) for what this module does not do."""
    if hf.get("model_type") != "qwen3":
        raise CheckpointError(f"not a Qwen3 checkpoint: model_type {str(hf.get('model_type'))[:60]!r}")
    rope = hf.get("rope_parameters") or hf.get("rope_scaling") or {}
    if not isinstance(rope, dict) or rope.get("rope_type", rope.get("type", "default")) != "default":
        raise CheckpointError("unsupported rotary scaling in config.json (this Qwen3 module does 'default')")
    if hf.get("use_sliding_window") or "sliding_attention" in (hf.get("layer_types") or ()):
        raise CheckpointError("unsupported: sliding-window layers (this Qwen3 module keeps every token)")
    if hf.get("hidden_act", "silu") != "silu":
        raise CheckpointError(f"unsupported activation {str(hf.get('hidden_act'))[:40]!r} (Qwen3 uses silu)")
    try:
        heads = int(hf["num_attention_heads"])
        config = Qwen3Config(
            vocab_size=int(hf["vocab_size"]),
            hidden_size=int(hf["hidden_size"]),
            intermediate_size=int(hf["intermediate_size"]),
            num_hidden_layers=int(hf["num_hidden_layers"]),
            num_attention_heads=heads,
            num_key_value_heads=int(hf.get("num_key_value_heads") or heads),
            head_dim=int(hf.get("head_dim") or int(hf["hidden_size"]) // heads),
            rope_theta=float(rope.get("rope_theta", hf.get("rope_theta", 10000.0))),
            rms_norm_eps=float(hf.get("rms_norm_eps", 1e-6)),
            attention_bias=bool(hf.get("attention_bias", False)),
            tie_word_embeddings=bool(hf.get("tie_word_embeddings", False)),
            max_position_embeddings=int(hf.get("max_position_embeddings", 40960)),
        )
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as error:
        raise CheckpointError(f"config.json lacks or garbles a size ({hf_folder.one_line(error)})") from None
    if min(config.num_key_value_heads, config.head_dim) < 1 or heads % config.num_key_value_heads:
        raise CheckpointError(f"config.json heads do not fit: {heads} query, {config.num_key_value_heads} KV")
    return config


class RMSNorm(RMSNormBase):
    """x / rms(x) in fp32, cast back, times a plain weight (Qwen3RMSNorm)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * self.normalized(x).to(x.dtype)


class Attention(nn.Module):
    """Qwen3's attention: q/k norm per head, rotary on the whole head, grouped KV heads, no gate."""

    def __init__(self, c: Qwen3Config) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.dh = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        bias = c.attention_bias
        self.q_proj = nn.Linear(c.hidden_size, self.heads * self.dh, bias=bias)
        self.k_proj = nn.Linear(c.hidden_size, self.kv_heads * self.dh, bias=bias)
        self.v_proj = nn.Linear(c.hidden_size, self.kv_heads * self.dh, bias=bias)
        self.o_proj = nn.Linear(self.heads * self.dh, c.hidden_size, bias=bias)
        self.q_norm = RMSNorm(self.dh, c.rms_norm_eps)
        self.k_norm = RMSNorm(self.dh, c.rms_norm_eps)
        self.register_buffer("inv_freq", inverse_frequencies(c), persistent=False)

    def forward(self, x: torch.Tensor, kv: StaticKV, start: int) -> torch.Tensor:
        """x: (B, T, D) at positions start … start + T − 1 → (B, T, D); writes T rows of `kv`."""
        B, T, _ = x.shape
        q = self.q_norm(self.q_proj(x).view(B, T, self.heads, self.dh)).transpose(1, 2)  # (B, H, T, Dh)
        k = self.k_norm(self.k_proj(x).view(B, T, self.kv_heads, self.dh)).transpose(1, 2)  # (B, Hkv, T, Dh)
        v = self.v_proj(x).view(B, T, self.kv_heads, self.dh).transpose(1, 2)  # (B, Hkv, T, Dh)
        positions = torch.arange(start, start + T, device=x.device)
        q, k = rotate(q, positions, self.inv_freq), rotate(k, positions, self.inv_freq)
        return self.o_proj(attend(q, k, v, kv, start).transpose(1, 2).reshape(B, T, -1))


def inverse_frequencies(c: Qwen3Config) -> torch.Tensor:
    """Rotary turning rates of the head's channel pairs, every channel turning (Dh / 2,)."""
    return 1.0 / (c.rope_theta ** (torch.arange(0, c.head_dim, 2, dtype=torch.float) / c.head_dim))


class Layer(nn.Module):
    """Pre-norm block: x + attention(norm(x)), then + MLP(norm(·)) (Qwen3DecoderLayer)."""

    def __init__(self, c: Qwen3Config) -> None:
        super().__init__()
        self.self_attn = Attention(c)
        self.mlp = SwiGLU(c)  # Qwen3.5's, which reads only hidden_size and intermediate_size
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)

    def forward(self, x: torch.Tensor, kv: StaticKV, start: int) -> torch.Tensor:
        h = x + self.self_attn(self.input_layernorm(x), kv, start)
        return h + self.mlp(self.post_attention_layernorm(h))


@dataclass
class Qwen3Cache:
    """One StaticKV per layer and the tokens read so far."""

    layers: list[StaticKV]
    position: int = 0

    def kv_tensors(self) -> list[torch.Tensor]:
        return [t for kv in self.layers for t in (kv.keys, kv.values)]  # each (B, Hkv, room, Dh)


class Qwen3(nn.Module):
    """Qwen3ForCausalLM's weights with the `model.` prefix dropped."""

    def __init__(self, config: Qwen3Config) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(Layer(config) for _ in range(config.num_hidden_layers))
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight

    def dtype(self) -> torch.dtype:
        return self.embed_tokens.weight.dtype

    def new_cache(self, room: int, batch: int = 1, device: torch.device | str = "cpu") -> Qwen3Cache:
        c = self.config
        make = StaticKV.empty
        return Qwen3Cache(
            [make(batch, c.num_key_value_heads, room, c.head_dim, self.dtype(), device) for _ in self.layers]
        )

    @torch.no_grad()
    def forward(self, ids: torch.Tensor, cache: Qwen3Cache) -> torch.Tensor:
        """ids (B, T) on the cache's device, after `cache.position` tokens → logits (B, T, vocab)."""
        start = cache.position
        x = self.embed_tokens(ids)  # (B, T, D)
        for layer, kv in zip(self.layers, cache.layers, strict=True):
            x = layer(x, kv, start)
        cache.position = start + ids.shape[1]
        return self.lm_head(self.norm(x))


def tensor_name(name: str) -> str | None:
    """A checkpoint tensor name → ours (the `model.` prefix dropped)."""
    return name.removeprefix("model.")


def load_qwen3(folder: Path | str, dtype: torch.dtype = torch.float32) -> Qwen3:
    """A Qwen3 folder (config.json + safetensors) → our Qwen3 in eval mode (CheckpointError if bad)."""
    config = qwen3_config(hf_folder.read_config(folder))
    hf_folder.check_weight_files(folder)
    state = hf_folder.read_tensors(folder, tensor_name, dtype)
    if "lm_head.weight" not in state:  # a folder without a stored head ties it to the embedding
        from dataclasses import replace

        config = replace(config, tie_word_embeddings=True)
    with torch.device("meta"):
        model = Qwen3(config)
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    if config.tie_word_embeddings:
        expected.pop("lm_head.weight")
        state.pop("lm_head.weight", None)
    wrong = sorted(set(expected) ^ set(state)) or [
        k for k in expected if tuple(state[k].shape) != expected[k]
    ]
    if wrong:
        raise CheckpointError(f"the weights do not fit config.json, e.g. tensor {wrong[0]}")
    model.load_state_dict(state, strict=False, assign=True)
    if config.tie_word_embeddings:
        model.lm_head.weight = model.embed_tokens.weight
    for layer in model.layers:  # computed, not stored: made on the CPU (the model was built on meta)
        layer.self_attn.inv_freq = inverse_frequencies(config)
    return model.eval()
