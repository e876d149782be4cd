"""Two-layer tiny models for associative recall that differ only in their token mixer.

The comparison follows Zoology (arXiv 2312.04927): same embedding, same blocks,
same MLPs, same projections and short convolutions — only the rule that moves information
between positions changes:

    attention    softmax attention; keeps every key and value (a cache that grows per token)
    linear       linear attention: adds k vᵀ to a fixed K×V board        (core/ops/linear_attention.py)
    delta        DeltaNet: erases what the board returned for k, then writes (core/ops/delta_rule.py)
    gated_delta  Gated DeltaNet: the delta rule plus one fade rate per head (core/ops/gated_delta_rule.py)
    kda          Kimi Delta Attention: the delta rule plus a fade rate per key channel (core/ops/kda.py)
    hybrid       a KDA layer, then an attention layer (the Kimi Linear / K3 mix, in miniature)

The mixers are in core/recall/mixers.py, the config in recall_config.py, and a reader's own
sequence in recall_reader.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn

from core.models.layers import RMSNorm
from core.models.protocol import ModelBase, load_weights, read_checkpoint, write_checkpoint
from core.recall.config import BYTES_PER_ELEMENT, RecallModelConfig
from core.recall.mixers import FixedStateMixer, SoftmaxAttention
from core.trace import LayerTrace, Trace, as_array


@dataclass
class LayerMemory:
    """What one layer holds after reading a sequence (numpy copies for pictures)."""

    index: int
    kind: str
    state: np.ndarray | None = None  # (H, K, V) the fixed board, state layers
    keys: np.ndarray | None = None  # (H, T, Dh) the cache, attention layers
    values: np.ndarray | None = None  # (H, T, Dh)


@dataclass
class RecallReadout:
    logits: torch.Tensor  # (B, T, vocab)
    memories: list[list[LayerMemory]] = field(default_factory=list)  # per batch row, per layer


@dataclass
class RecallCache:
    """Decoding memory of one sequence: per layer the short convolution's window and the K/V cache
    (attention) or the board (fixed-state mixers)."""

    windows: list[torch.Tensor]  # per layer (B, conv_size − 1, 3·D): the last projected q, k, v
    memory: list  # per layer (keys, values) each (B, H, T, Dh), or a board (B, H, K, V)
    position: int = 0  # tokens read so far


class Block(nn.Module):
    """Pre-norm block: x + mixer(norm(x)), then x + MLP(norm(x))."""

    def __init__(self, cfg: RecallModelConfig, kind: str) -> None:
        super().__init__()
        self.norm1 = RMSNorm(cfg.d_model)
        self.mixer = SoftmaxAttention(cfg) if kind == "attention" else FixedStateMixer(cfg, kind)
        self.norm2 = RMSNorm(cfg.d_model)
        hidden = cfg.mlp_ratio * cfg.d_model
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, hidden), nn.GELU(), nn.Linear(hidden, cfg.d_model))

    def forward(self, x: torch.Tensor, keep_memory: bool = False):
        y, memory = self.mixer(self.norm1(x), keep_memory)
        x = x + y
        return x + self.mlp(self.norm2(x)), memory

    def step(self, x: torch.Tensor, window: torch.Tensor, memory, keep_parts: bool = True):
        """`forward` for one token x (B, 1, D), carrying the mixer's window and memory."""
        y, window, memory, parts = self.mixer.step(self.norm1(x), window, memory, keep_parts)
        x = x + y
        return x + self.mlp(self.norm2(x)), window, memory, parts


class RecallModel(ModelBase, nn.Module):
    """Embedding → 2 blocks → norm → logits over the whole vocabulary."""

    def __init__(self, cfg: RecallModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg, kind) for kind in cfg.layer_kinds)
        self.norm = RMSNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) → logits (B, T, vocab)."""
        return self.read(tokens, keep_memory=False).logits

    def read(self, tokens: torch.Tensor, keep_memory: bool = True) -> RecallReadout:
        """Run a whole sequence; with keep_memory, also return each layer's board or cache."""
        x = self.embed(tokens)  # (B, T, D)
        per_layer = []
        for block in self.blocks:
            x, memory = block(x, keep_memory)
            per_layer.append(memory)
        logits = self.head(self.norm(x))  # (B, T, vocab)
        readout = RecallReadout(logits)
        if keep_memory:
            for b in range(tokens.shape[0]):
                row = []
                for i, (block, memory) in enumerate(zip(self.blocks, per_layer, strict=True)):
                    kind = block.mixer.kind
                    if kind == "attention":
                        keys, values = memory
                        row.append(LayerMemory(i, kind, keys=keys[b].numpy(), values=values[b].numpy()))
                    else:
                        row.append(LayerMemory(i, kind, state=memory[b].numpy()))
                readout.memories.append(row)
        return readout

    # --- memory accounting: what the model must keep to go on reading -----------------------------

    def state_elements(self) -> int:
        """Numbers in the fixed boards (all layers), independent of sequence length."""
        return sum(block.mixer.state_elements() for block in self.blocks)

    def cache_elements_per_token(self) -> int:
        """Numbers the attention layers add to their K/V cache for every token read."""
        return sum(block.mixer.cache_elements_per_token() for block in self.blocks)

    def conv_elements(self) -> int:
        """The short convolutions' rolling window (kernel − 1 past q, k, v per layer), fixed size."""
        return sum((block.mixer.conv.size - 1) * 3 * self.cfg.d_model for block in self.blocks)

    def state_bytes(self) -> int:
        """Fixed memory (float32): the boards and the convolution windows; `memory_bytes(T)` adds the cache."""
        return (self.state_elements() + self.conv_elements()) * BYTES_PER_ELEMENT

    def cache_bytes_per_token(self) -> int:
        return self.cache_elements_per_token() * BYTES_PER_ELEMENT

    # --- one token at a time, and the checkpoint (the model protocol, core/models/protocol.py) ----

    def new_cache(self, batch: int = 1) -> RecallCache:
        dtype, width = self.embed.weight.dtype, 3 * self.cfg.d_model  # the window holds q, k and v
        windows = [torch.zeros(batch, b.mixer.conv.size - 1, width, dtype=dtype) for b in self.blocks]
        return RecallCache(windows, [b.mixer.new_memory(batch, dtype) for b in self.blocks])

    @torch.no_grad()
    def step(self, token: int, cache: RecallCache, keep_parts: bool = True) -> Trace:
        """Feed one token (batch of one); the Trace's token is the model's top guess for the next."""
        started = time.perf_counter()
        x = self.embed(torch.tensor([[int(token)]]))  # (1, 1, D)
        layers = []
        for i, block in enumerate(self.blocks):
            x, cache.windows[i], cache.memory[i], parts = block.step(
                x, cache.windows[i], cache.memory[i], keep_parts
            )
            layers.append(_layer_trace(i, block.mixer, cache.memory[i], parts))
        logits = self.head(self.norm(x))[0, 0]  # (vocab,)
        position, cache.position = cache.position, cache.position + 1
        return Trace(
            token=int(logits.argmax()),
            position=position,
            logits=as_array(logits),
            layers=layers,
            positions_computed=1,
            cache_bytes=cache.position * self.cache_bytes_per_token(),
            state_bytes=self.state_bytes(),
            wall_ms=(time.perf_counter() - started) * 1000,
        )

    @classmethod
    def load(cls, path) -> RecallModel:
        """Rebuild a model from `save`, in eval mode; `model.meta` holds what was saved beside it."""
        blob = read_checkpoint(path, "python -m core.train recall")
        model = cls(RecallModelConfig(**blob["config"]))
        load_weights(model, blob["state_dict"], path, "python -m core.train recall")  # strict=True
        model.meta = blob.get("extra", {})
        return model.eval()

    def save(self, path, meta: dict | None = None) -> None:
        """Weights + config (+ e.g. recorded accuracy) in one small file."""
        blob = {"config": self.cfg.to_dict(), "state_dict": self.state_dict(), "extra": meta or {}}
        write_checkpoint(path, blob)


def _layer_trace(index: int, mixer: nn.Module, memory, parts: dict) -> LayerTrace:
    """One layer's memory after a step, as numpy copies of sequence 0."""
    if mixer.kind == "attention":
        keys, values = (as_array(t[0]) for t in memory)  # (H, T, Dh) each
        nbytes = keys.shape[1] * mixer.cache_elements_per_token() * BYTES_PER_ELEMENT
        attention = as_array(parts["attention"][0])  # (H, T)
        return LayerTrace(index, "attention", "cache", nbytes, keys=keys, values=values, attention=attention)
    board = as_array(memory[0])  # (H, K, V)
    named = {name: as_array(part[0]) for name, part in parts.items()}
    return LayerTrace(
        index, mixer.kind, "state", mixer.state_elements() * BYTES_PER_ELEMENT, state=board, parts=named
    )


def build_model(mixer: str, d_model: int, n_heads: int = 1, seed: int = 0, **kwargs) -> RecallModel:
    """A freshly initialised model; the seed fixes the initial weights."""
    torch.manual_seed(seed)
    return RecallModel(RecallModelConfig(mixer=mixer, d_model=d_model, n_heads=n_heads, **kwargs))
