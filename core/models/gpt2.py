"""A tiny GPT-2 over UTF-8 bytes, with and without a KV cache.

The shape is GPT-2's (Radford et al. 2019, "Language Models are Unsupervised
Multitask Learners"; layout as in nanoGPT's model.py): learned token and position
embeddings, pre-LayerNorm blocks of causal multi-head attention and a 4x GELU
MLP, a final LayerNorm, and the output head tied to the token embedding.

Two ways to generate, same weights, same numbers:

* `use_cache=False` — what any transformer does without a cache: every step feeds the
  whole text again and recomputes every position's keys and values. (GPT-2's own 2019
  sampling code already kept them: `past` / `presents` in openai/gpt-2 `src/sample.py`.)
* `use_cache=True`  — keys and values of earlier positions never change, so keep
  them (`KVCache`) and run only the newest position through the model.

`GPT2.step(token, cache)` returns a `core.trace.Trace` (the model protocol,
core/models/protocol.py); `core.generation` drives whole generations (sampling, runs
with and without the cache, the live comparison of the KV cache page).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from core.models.protocol import ModelBase, load_weights, read_checkpoint, write_checkpoint
from core.trace import LayerTrace, Trace, as_array

CHECKPOINT = Path(__file__).resolve().parents[2] / "assets" / "gpt2" / "model.pt"


@dataclass
class GPT2Config:
    vocab_size: int = 256  # one token per byte (core.tokenizer)
    block_size: int = 256  # context window, in bytes
    n_layer: int = 4
    n_head: int = 4
    d_model: int = 128
    d_mlp: int = 0  # MLP width; 0 → 4 × d_model, as in GPT-2 (HF config `n_inner`)
    layer_norm_eps: float = 1e-5  # HF config `layer_norm_epsilon`

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    @property
    def mlp_dim(self) -> int:
        return self.d_mlp or 4 * self.d_model


def kv_bytes_per_token(config: GPT2Config, bytes_per_element: int = 4) -> int:
    """Cache growth per token: one key and one value of d_model numbers in every layer."""
    return 2 * config.n_layer * config.d_model * bytes_per_element


class KVCache:
    """Per-layer keys and values of every position seen so far, one row per token.

    Buffers are allocated once for the whole context window (as inference engines
    do) and filled row by row; `length` says how many rows are real.
    """

    def __init__(self, config: GPT2Config, batch_size: int = 1, dtype: torch.dtype = torch.float32):
        shape = (batch_size, config.n_head, config.block_size, config.head_dim)  # (B, H, T_max, Dh)
        # Rows past `length` are never read (store and layer_arrays slice to it), so the buffers
        # need no zeroing: GPT-2 small's window is 75 MB of fp32 keys and values.
        self.keys = [torch.empty(shape, dtype=dtype) for _ in range(config.n_layer)]
        self.values = [torch.empty(shape, dtype=dtype) for _ in range(config.n_layer)]
        self.length = 0  # positions stored in every layer
        self.capacity = config.block_size
        self.bytes_per_token = kv_bytes_per_token(config, torch.finfo(dtype).bits // 8) * batch_size

    def store(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the new rows k, v (B, H, T_new, Dh) after `length`; return all rows so far."""
        start, end = self.length, self.length + k.size(2)
        if end > self.capacity:
            raise ValueError(f"KV cache full: {end} positions > context window {self.capacity}")
        self.keys[layer][:, :, start:end] = k
        self.values[layer][:, :, start:end] = v
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]  # (B, H, T, Dh)

    def advance(self, n: int) -> None:
        """Called once per forward pass, after every layer stored its n new rows."""
        self.length += n

    @property
    def nbytes(self) -> int:
        """Bytes of the rows actually held (not of the preallocated buffer)."""
        return self.length * self.bytes_per_token

    def layer_arrays(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """Numpy copies of one layer's cached keys and values: (H, T, Dh) each, batch 0."""
        return as_array(self.keys[layer][0, :, : self.length]), as_array(
            self.values[layer][0, :, : self.length]
        )


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPT2Config):
        super().__init__()
        self.n_head, self.head_dim = config.n_head, config.head_dim
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)

    def forward(
        self, x: torch.Tensor, layer: int, cache: KVCache | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, T_new, C) → output (B, T_new, C) and attention weights (B, H, T_new, T)."""
        B, T_new, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)  # 3 × (B, T_new, C)
        q = q.view(B, T_new, self.n_head, self.head_dim).transpose(1, 2)  # (B, H, T_new, Dh)
        k = k.view(B, T_new, self.n_head, self.head_dim).transpose(1, 2)  # (B, H, T_new, Dh)
        v = v.view(B, T_new, self.n_head, self.head_dim).transpose(1, 2)  # (B, H, T_new, Dh)
        past = 0
        if cache is not None:
            past = cache.length
            k, v = cache.store(layer, k, v)  # (B, H, T, Dh) with T = past + T_new
        T = k.size(2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)  # (B, H, T_new, T)
        # New position i (absolute past + i) may look at keys 0 .. past + i, never later ones.
        query_pos = torch.arange(past, past + T_new).view(T_new, 1)
        key_pos = torch.arange(T).view(1, T)
        scores = scores.masked_fill(key_pos > query_pos, float("-inf"))
        weights = F.softmax(scores, dim=-1)  # (B, H, T_new, T)
        y = weights @ v  # (B, H, T_new, Dh)
        y = y.transpose(1, 2).contiguous().view(B, T_new, C)  # (B, T_new, C)
        return self.proj(y), weights


class MLP(nn.Module):
    def __init__(self, config: GPT2Config):
        super().__init__()
        self.up = nn.Linear(config.d_model, config.mlp_dim)
        self.down = nn.Linear(config.mlp_dim, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x), approximate="tanh"))  # GPT-2's tanh GELU


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, config: GPT2Config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.mlp = MLP(config)

    def forward(
        self, x: torch.Tensor, layer: int, cache: KVCache | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        a, weights = self.attn(self.ln_1(x), layer, cache)
        x = x + a
        x = x + self.mlp(self.ln_2(x))
        return x, weights


class GPT2(ModelBase, nn.Module):
    """`init=False` skips the random initialisation (the weights are about to be loaded,
    e.g. by core/models/hf_gpt2.py, and drawing 124M random numbers first is wasted time)."""

    def __init__(self, config: GPT2Config, init: bool = True):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)  # token embedding
        self.wpe = nn.Embedding(config.block_size, config.d_model)  # learned positions
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.wte.weight  # tied embeddings, as in GPT-2
        if not init:
            return
        self.apply(self._init_weights)
        for name, p in self.named_parameters():  # GPT-2's scaled init of residual projections
            if name.endswith("proj.weight") or name.endswith("down.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward_with_attention(
        self, idx: torch.Tensor, cache: KVCache | None = None, last_only: bool = False
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """idx (B, T_new) → logits (B, T_new, V) and each layer's weights (B, H, T_new, T).

        With a cache, idx holds only the new positions; they continue after `cache.length`.
        `last_only`: logits of the newest position only (B, 1, V) — all that generating needs;
        with a 50,257-token vocabulary the output head is the largest matrix, so running it
        over every position of a prompt would cost more than the rest (transformers' generate
        does the same, `logits_to_keep=1`).
        """
        B, T_new = idx.shape
        past = cache.length if cache is not None else 0
        if past + T_new > self.config.block_size:
            raise ValueError(
                f"{past + T_new} positions exceed the context window of {self.config.block_size}"
            )
        pos = torch.arange(past, past + T_new)  # (T_new,)
        x = self.wte(idx) + self.wpe(pos)  # (B, T_new, C)
        all_weights = []
        for layer, block in enumerate(self.blocks):
            x, weights = block(x, layer, cache)
            all_weights.append(weights)
        if cache is not None:
            cache.advance(T_new)
        if last_only:
            x = x[:, -1:]  # (B, 1, C)
        return self.head(self.ln_f(x)), all_weights  # (B, T_new or 1, V)

    def forward(self, idx: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        return self.forward_with_attention(idx, cache)[0]

    # -- the model protocol (core/models/protocol.py) ---------------------------------------------

    def new_cache(self, batch_size: int = 1) -> KVCache:
        return KVCache(self.config, batch_size, dtype=self.wte.weight.dtype)

    def cache_bytes_per_token(self) -> int:
        return kv_bytes_per_token(self.config, self.element_bytes())

    def state_bytes(self) -> int:
        return 0  # all of GPT-2's memory is the growing cache

    @classmethod
    def load(cls, path: Path | str = CHECKPOINT) -> GPT2:
        """The shipped tiny GPT-2 in eval mode (raises FileNotFoundError if not trained yet)."""
        rebuild = "python -m core.train gpt2"
        blob = read_checkpoint(path, rebuild)
        model = cls(GPT2Config(**blob["config"]))
        state = dict(blob["state_dict"])
        if "wte.weight" in state:  # the tied head is saved once, as the embedding
            state.setdefault("head.weight", state["wte.weight"])
        load_weights(model, state, path, rebuild)
        model.head.weight = model.wte.weight
        model.meta = {k: v for k, v in blob.items() if k not in ("config", "state_dict")}
        return model.eval()

    def save(self, path: Path | str, meta: dict | None = None) -> None:
        """Config + weights (the tied head stored once) + metadata beside them."""
        state = {k: v for k, v in self.state_dict().items() if k != "head.weight"}
        write_checkpoint(path, {"config": asdict(self.config), "state_dict": state, **(meta or {})})

    @torch.no_grad()
    def step(self, token: int, cache: KVCache, record_cache: bool = True) -> Trace:
        """Feed one byte after the cached ones; the Trace's token is the greedy next byte."""
        started = time.perf_counter()
        position = cache.length
        logits, weights = self.forward_with_attention(torch.tensor([[int(token)]]), cache, last_only=True)
        wall_ms = (time.perf_counter() - started) * 1000
        return gpt2_trace(
            self,
            cache,
            int(logits[0, -1].argmax()),
            position,
            logits[0, -1],
            weights,
            1,
            wall_ms,
            record_cache,
        )


def gpt2_trace(
    model: GPT2,
    cache: KVCache | None,
    token: int,
    position: int,
    logits: torch.Tensor,
    weights: list[torch.Tensor],
    computed: int,
    wall_ms: float,
    record_cache: bool,
) -> Trace:
    """The Trace of one forward pass: each layer's newest attention row (and cache copies if asked)."""
    cache_bytes = cache.nbytes if cache is not None else 0
    per_layer = cache_bytes // model.config.n_layer
    layers = []
    for i, w in enumerate(weights):
        keys = values = None
        if cache is not None and record_cache:
            keys, values = cache.layer_arrays(i)
        layers.append(
            LayerTrace(
                index=i,
                kind="attention",
                memory="cache",
                memory_bytes=per_layer,
                keys=keys,
                values=values,
                attention=as_array(w[0, :, -1]),  # (H, T) of the newest position
            )
        )
    return Trace(
        token=token,
        position=position,
        logits=as_array(logits),
        layers=layers,
        positions_computed=computed,
        cache_bytes=cache_bytes,
        state_bytes=0,
        wall_ms=wall_ms,
    )
