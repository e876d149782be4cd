"""Qwen3.5 decoding over memory allocated once: the path a CUDA graph can capture.

`Qwen35.step` (core/models/qwen35.py) keeps Python-side caches that grow (`torch.cat` per token)
and boards that are new tensors each token — right for the pages' traces, impossible to replay as
a CUDA graph, which needs every tensor a step reads or writes at a fixed address. This runs the
same model's layers (the same weights, the same `gated_delta_rule` calls) over a `Qwen35StaticCache`:

* each attention layer: a `StaticKV` for `room` positions (core/models/static_kv.py), a row
  written in place per token;
* each Gated DeltaNet layer: its board (B, Hv, K, V, fp32) and its convolution window, made once —
  stored (B, kernel − 1, channels) so one token's taps are contiguous rows, seen by the layers as
  the (B, channels, kernel − 1) view they expect; a token's step updates both in place, a prompt's
  final board is copied in once.

A prompt (T > 1) runs the course's layers (the chunked form for the boards); a single token runs the
lean step (core/models/qwen35_lean.py: the same maths in fewer ops, its joined matrices prepared when
the cache is made) — what the CPU bench and the GPU checkpoint bench (one CUDA graph per repetition) time.

    cache = new_static_cache(model, room=512, device=device)
    logits = run_static(model, ids, cache)      # ids (B, T) after cache.position → (B, T, vocab)

The tests (tests/core/models/test_qwen35_static.py, test_qwen35_lean.py) check the logits equal
`Qwen35.step`'s at every step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from core.models.qwen35 import ATTENTION, BOARD, Qwen35
from core.models.qwen35_layers import BoardMemory, GatedAttention, rotate
from core.models.qwen35_lean import BoardViews, MLPViews, layer_views, lean_step
from core.models.qwen35_lean_weights import LeanWeights, prepare
from core.models.static_kv import StaticKV, attend


@dataclass
class Qwen35StaticCache:
    """Per layer a StaticKV (attention) or a BoardMemory whose tensors never move (boards)."""

    memory: list[StaticKV | BoardMemory]
    position: int = 0  # tokens read so far
    lean: LeanWeights | None = None  # the single-token step's joined weights (made with the cache)
    views: list[BoardViews | MLPViews] = field(default_factory=list)  # per layer, the lean step's scratch

    def kv_tensors(self) -> list[torch.Tensor]:
        """Every attention layer's key and value buffer, each (B, Hkv, room, Dh)."""
        return [t for m in self.memory if isinstance(m, StaticKV) for t in (m.keys, m.values)]

    def board_tensors(self) -> list[torch.Tensor]:
        """Every board layer's board (B, Hv, K, V) and convolution window (B, C, kernel − 1)."""
        return [t for m in self.memory if isinstance(m, BoardMemory) for t in (m.board, m.conv_window)]


def new_static_cache(
    model: Qwen35, room: int, batch: int = 1, device: torch.device | str = "cpu"
) -> Qwen35StaticCache:
    """Zeroed memory for `room` positions on `device`, in the model's dtype (boards in fp32)."""
    c, dtype = model.config, model.dtype()
    memory: list[StaticKV | BoardMemory] = []
    for layer in model.layers:
        if layer.kind == ATTENTION:
            memory.append(StaticKV.empty(batch, c.num_key_value_heads, room, c.head_dim, dtype, device))
        else:
            with torch.device(device):  # new_memory makes its zeros on the default device
                board = layer.linear_attn.new_memory(batch, dtype).board
                rows = torch.zeros(batch, c.linear_conv_kernel_dim - 1, c.conv_channels(), dtype=dtype)
            memory.append(BoardMemory(board, rows.transpose(1, 2)))  # (B, C, kernel − 1) view of the rows
    lean = prepare(model)
    views = [layer_views(layer, m) for m, layer in zip(memory, lean.layers, strict=True)]
    return Qwen35StaticCache(memory, lean=lean, views=views)


def gated_attention(attn: GatedAttention, x: torch.Tensor, kv: StaticKV, start: int) -> torch.Tensor:
    """Qwen3.5's gated attention (GatedAttention.forward's maths) over a static cache. x: (B, T, D)."""
    B, T, _ = x.shape
    q, gate = attn.q_proj(x).view(B, T, attn.heads, 2 * attn.dh).chunk(2, dim=-1)  # (B, T, H, Dh) each
    q = attn.q_norm(q).transpose(1, 2)  # (B, H, T, Dh)
    k = attn.k_norm(attn.k_proj(x).view(B, T, attn.kv_heads, attn.dh)).transpose(1, 2)  # (B, Hkv, T, Dh)
    v = attn.v_proj(x).view(B, T, attn.kv_heads, attn.dh).transpose(1, 2)  # (B, Hkv, T, Dh)
    positions = torch.arange(start, start + T, device=x.device)
    q, k = rotate(q, positions, attn.inv_freq), rotate(k, positions, attn.inv_freq)
    out = attend(q, k, v, kv, start).transpose(1, 2).reshape(B, T, -1)  # (B, T, H·Dh)
    return attn.o_proj(out * torch.sigmoid(gate.reshape(B, T, -1)))


def _board_layer(layer, h: torch.Tensor, memory: BoardMemory, chunk_size: int) -> torch.Tensor:
    """One token: the layer's own step, which (without gradients) fades, erases and writes the fixed
    board itself and overwrites the window in place (core/ops/in_place.py): nothing is copied back.
    A prompt: the chunked form hands back a new final board, copied once into the fixed one."""
    board, window = memory.board, memory.conv_window
    if h.shape[1] == 1:
        mixed, _ = layer.linear_attn.step(h, memory)
    else:
        scratch = BoardMemory(board, window)
        mixed = layer.linear_attn.prompt(h, scratch, chunk_size)
        board.copy_(scratch.board)  # (B, Hv, K, V), once per prompt
    if memory.board is not board or memory.conv_window is not window:
        raise RuntimeError(
            "a static board or window moved: the step must update them in place (under no_grad)"
        )
    return mixed


@torch.no_grad()
def run_static(
    model: Qwen35, ids: torch.Tensor, cache: Qwen35StaticCache, chunk_size: int = 64
) -> torch.Tensor:
    """ids (B, T) on the cache's device, after `cache.position` tokens → logits (B, T, vocab)."""
    if ids.shape[1] == 1:  # one token: the lean step over the same memory
        return lean_step(model, cache.lean, ids, cache).unsqueeze(1)  # (B, 1, vocab)
    start = cache.position
    x = model.embed_tokens(ids)  # (B, T, D)
    for layer, memory in zip(model.layers, cache.memory, strict=True):
        h = layer.input_layernorm(x)
        if layer.kind == BOARD:
            mixed = _board_layer(layer, h, memory, chunk_size)
        else:
            mixed = gated_attention(layer.self_attn, h, memory, start)
        x = layer.finish(x, mixed)
    cache.position = start + ids.shape[1]
    return model.lm_head(model.norm(x))
