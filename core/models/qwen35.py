"""Qwen3.5's text model — a released 3 : 1 hybrid — in the course's own code, stepped token by token.

Qwen3.5 (Qwen team, 2026; transformers 5.24 `models/qwen3_5/modeling_qwen3_5.py`) stacks layers
of two kinds, listed in its config's `layer_types` (three Gated DeltaNet layers, then one full
attention layer, repeated — `full_attention_interval: 4`):

* a **Gated DeltaNet** layer keeps a fixed board per value head (K × V numbers; 16 heads of
  128 × 128 in the 0.8B) plus a 3-token convolution window: the same size after 10 tokens or 10,000.
  Each token fades the whole board by one rate α per head, erases what the board held under its
  key, and writes its value with strength β (core/ops/gated_delta_rule.py);
* a **gated attention** layer keeps a K row and a V row per token read — the KV cache, which grows —
  and multiplies its output by a learned sigmoid gate.

Kimi Linear and Kimi K3 use the same 3 : 1 idea with KDA (a fade rate per key channel) and MLA (a
compressed cache) instead. Layer code: core/models/qwen35_layers.py; reading a released folder:
core/models/hf_qwen35.py (`load_qwen35` below builds the model from it).

The protocol (core/models/protocol.py): `new_cache()`, `step(token, cache) -> Trace` and the byte
counts. Beyond it, `prefill(prompt, cache)` reads a whole prompt at once through the chunked form
(`gated_delta_rule.chunk`), and `next_logits(token, cache)` is `step` without the trace (benches).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn as nn

from core.models.hf_folder import LoadedCheckpoint
from core.models.hf_qwen35 import (
    ReleasedFolder,
    available_memory,
    check_tensors,
    read_folder,
    spec_from_config,
)
from core.models.protocol import ModelBase, greedy_run
from core.models.qwen35_layers import (
    BoardMemory,
    BoardStep,
    DecoderLayer,
    KVMemory,
    Qwen35Config,
    ZeroCenteredRMSNorm,
)
from core.trace import LayerTrace, Trace, as_array

BOARD, ATTENTION = "linear_attention", "full_attention"  # the two `layer_types` values


@dataclass
class Qwen35Cache:
    """Decoding memory for one sequence: per layer a board (BoardMemory) or a KV cache (KVMemory)."""

    memory: list[BoardMemory | KVMemory]
    position: int = 0  # tokens read so far
    last_steps: dict[int, BoardStep] = field(default_factory=dict, repr=False)  # per board layer, last token

    def cache_bytes(self) -> int:
        return sum(m.nbytes() for m in self.memory if isinstance(m, KVMemory))

    def state_bytes(self) -> int:
        return sum(m.nbytes() for m in self.memory if isinstance(m, BoardMemory))


class Qwen35(ModelBase, nn.Module):
    """The Qwen3.5 text model (Qwen3_5ForCausalLM's weights, names without the `model.` prefix)."""

    def __init__(self, config: Qwen35Config) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(config, kind) for kind in config.layer_types)
        self.norm = ZeroCenteredRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        self.meta: dict = {}

    @property
    def kinds(self) -> tuple[str, ...]:
        return self.config.layer_types

    def dtype(self) -> torch.dtype:
        return self.embed_tokens.weight.dtype

    # -- memory ------------------------------------------------------------------------------

    def new_cache(self, batch: int = 1) -> Qwen35Cache:
        return Qwen35Cache([layer.new_memory(batch, self.dtype()) for layer in self.layers])

    def cache_bytes_per_token(self) -> int:
        return self.kinds.count(ATTENTION) * self.config.kv_bytes_per_token(self.element_bytes())

    def state_bytes(self) -> int:
        """Boards (fp32) and convolution windows (weights' dtype) of every Gated DeltaNet layer."""
        c = self.config
        window = c.conv_channels() * (c.linear_conv_kernel_dim - 1) * self.element_bytes()
        return self.kinds.count(BOARD) * (c.board_bytes(4) + window)

    # -- running -----------------------------------------------------------------------------

    def _run(self, ids: torch.Tensor, cache: Qwen35Cache, chunk_size: int, keep_parts: bool):
        """ids: (B, T) after `cache.position` tokens → logits (B, T, vocab), attention weights per layer."""
        x = self.embed_tokens(ids)  # (B, T, D)
        weights: dict[int, torch.Tensor] = {}
        cache.last_steps = {}
        for i, (layer, memory) in enumerate(zip(self.layers, cache.memory, strict=True)):
            h = layer.input_layernorm(x)
            if layer.kind == BOARD and ids.shape[1] == 1:
                mixed, cache.last_steps[i] = layer.linear_attn.step(h, memory, keep_parts)
            elif layer.kind == BOARD:
                mixed = layer.linear_attn.prompt(h, memory, chunk_size)
            else:
                mixed, weights[i] = layer.self_attn(h, memory)
            x = layer.finish(x, mixed)
        cache.position += ids.shape[1]
        return self.lm_head(self.norm(x)), weights

    @torch.no_grad()
    def prefill(self, prompt: list[int], cache: Qwen35Cache, chunk_size: int = 64) -> torch.Tensor:
        """Read a whole prompt at once (boards through the chunked form) → logits (T, vocab)."""
        if not prompt:
            raise ValueError("prompt must hold at least one token")
        logits, _ = self._run(torch.tensor([prompt]), cache, chunk_size, keep_parts=False)
        return logits[0]

    @torch.no_grad()
    def forward(self, ids: torch.Tensor, chunk_size: int = 64) -> torch.Tensor:
        """ids: (B, T) from an empty cache → logits (B, T, vocab)."""
        return self._run(ids, self.new_cache(ids.shape[0]), chunk_size, keep_parts=False)[0]

    def logits(self, ids: torch.Tensor, chunk_size: int = 64) -> torch.Tensor:
        """`forward` with gradients (training the shipped miniature, core/train/recipes/qwen35_mini.py)."""
        return self._run(ids, self.new_cache(ids.shape[0]), chunk_size, keep_parts=False)[0]

    @torch.no_grad()
    def next_logits(self, token: int, cache: Qwen35Cache) -> torch.Tensor:
        """One token (boards through `gated_delta_rule.step`) → logits (vocab,); no trace is built."""
        return self._run(torch.tensor([[int(token)]]), cache, 64, keep_parts=False)[0][0, 0]

    @torch.no_grad()
    def step(self, token: int, cache: Qwen35Cache, keep_parts: bool = False) -> Trace:
        """Feed one token and return its Trace: per board layer the board (Hv, K, V) after the token
        and this token's α and β per head (`parts["alpha"]`, `parts["beta"]`, each (Hv,)); per
        attention layer the cached keys and values (Hkv, T, Dh) and this token's weights (H, T).
        `keep_parts` adds the op's decayed / erase / write boards (Hv, K, V)."""
        started = time.perf_counter()
        position = cache.position
        logits, weights = self._run(torch.tensor([[int(token)]]), cache, 64, keep_parts)
        logits = logits[0, 0]
        wall_ms = (time.perf_counter() - started) * 1000
        layers = [self._layer_trace(i, cache, weights) for i in range(len(self.layers))]
        return Trace(
            token=int(logits.argmax()),
            position=position,
            logits=as_array(logits),
            layers=layers,
            positions_computed=1,
            cache_bytes=cache.cache_bytes(),
            state_bytes=cache.state_bytes(),
            wall_ms=wall_ms,
        )

    def _layer_trace(self, i: int, cache: Qwen35Cache, weights: dict[int, torch.Tensor]) -> LayerTrace:
        memory = cache.memory[i]
        if isinstance(memory, BoardMemory):
            board_step = cache.last_steps[i]
            parts = {"alpha": as_array(board_step.alpha), "beta": as_array(board_step.beta)}
            parts |= {name: as_array(part) for name, part in board_step.parts.items()}
            return LayerTrace(
                i, "gated_delta", "state", memory.nbytes(), state=as_array(memory.board[0]), parts=parts
            )
        return LayerTrace(
            i,
            "attention",
            "cache",
            memory.nbytes(),
            keys=as_array(memory.keys[0]),  # (Hkv, T, Dh)
            values=as_array(memory.values[0]),
            attention=as_array(weights[i][0, :, -1]),  # (H, T)
        )

    @torch.no_grad()
    def run(self, prompt: list[int], new_tokens: int = 0, keep_parts: bool = False) -> list[Trace]:
        """Step through `prompt` token by token, then continue greedily; one Trace per token fed."""
        return greedy_run(self, prompt, new_tokens, keep_parts, "token")

    # -- the protocol's checkpoint calls: a released folder in, the same layout out ----------------

    @classmethod
    def load(cls, path: Path | str = "", dtype: torch.dtype = torch.float32) -> Qwen35:
        """A Qwen3.5 folder (either layout) → the model, eval mode (read by core/models/hf_qwen35.py)."""
        return cls.from_folder(read_folder(path, dtype))

    @classmethod
    def from_folder(cls, released: ReleasedFolder) -> Qwen35:
        """The model from a read folder's tensors (built on the meta device, the tensors assigned, not
        copied), in eval mode; a tied head is the embedding itself; `meta` says where it came from."""
        config = released.config
        with torch.device("meta"):
            model = cls(config)
            expected = {name: tuple(t.shape) for name, t in model.state_dict().items()}
        check_tensors(released.state, expected, config.tie_word_embeddings)
        model.load_state_dict(released.state, strict=False, assign=True)
        if config.tie_word_embeddings:
            model.lm_head.weight = model.embed_tokens.weight
        for layer in model.layers:  # the rotary frequencies are computed, not stored: make them here
            if layer.kind == "full_attention":
                steps = torch.arange(0, config.rotary_dim, 2, dtype=torch.float) / config.rotary_dim
                layer.self_attn.inv_freq = 1.0 / (config.rope_theta**steps)
        model.meta = {
            "source": str(released.folder),
            "hf_config": released.top,
            "hf_text_config": released.text_config,
        }
        return model.eval()

    def save(self, path: Path | str, meta: dict | None = None) -> None:
        """Write `model.safetensors` (Qwen3_5ForCausalLM names) and the config.json it was read from."""
        import json

        from safetensors.torch import save_file

        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        state = {f"model.{n}": t.contiguous() for n, t in self.state_dict().items() if n != "lm_head.weight"}
        if not self.config.tie_word_embeddings:
            state["lm_head.weight"] = self.lm_head.weight.contiguous()
        save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
        hf = dict(self.meta.get("hf_text_config") or {})
        (folder / "config.json").write_text(json.dumps({**hf, **(meta or {})}, indent=2), encoding="utf-8")


@dataclass
class LoadedQwen35(LoadedCheckpoint):
    """A released Qwen3.5 in our Qwen35 module, with its tokenizer, folder and config.json."""

    model: Qwen35
    read_spec = staticmethod(spec_from_config)


def load_qwen35(
    folder: Path | str,
    dtype: torch.dtype = torch.float32,
    name: str | None = None,
    available: Callable[[], int | None] = available_memory,
) -> LoadedQwen35:
    """A Qwen3.5 folder (either layout) → our Qwen35 in eval mode + tokenizer (CheckpointError if bad),
    everything checked before a weight is read (core/models/hf_qwen35.read_folder). The weights are
    read in `dtype` (fp32 by default, so logits match transformers' to 1e-4 relative)."""
    released = read_folder(folder, dtype, available)
    model = Qwen35.from_folder(released)
    return LoadedQwen35(
        model, released.tokenizer, released.folder, released.top, name or released.folder.name
    )
