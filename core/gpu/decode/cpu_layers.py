"""The other way a cache outgrows VRAM: llama.cpp / Ollama partial offload — layers that do not fit
run on the CPU.

The lesson's published numbers (llama-bench `-ngl`, Ollama's "88 % GPU" at a larger num_ctx;
docs/sources.md §7.4) come from this, not from streaming: the first `n_gpu` layers
keep their weights and KV cache in VRAM and run on the GPU; the rest keep theirs in host RAM and
are computed by the CPU, at host memory bandwidth; only the hidden state (one row) crosses the
link, twice per step. How many layers fit is decided like Ollama does it, from the context the
cache is allocated for: weights + that layer's cache at `max_len` positions, layer after layer,
until the budget (minus embedding, head, context and workspace) is spent.

The step waits for the host (the CPU layers need the hidden state), so it cannot be graphed;
`graphable = False` tells the timer so.
"""

from __future__ import annotations

import torch
from torch import nn

from core.gpu.decode.kv_cache import KVCache
from core.gpu.decode.models import AttentionDecoder, _rms
from core.gpu.decode.traffic import Traffic
from core.gpu.presets import Preset


def layers_that_fit(budget_bytes: int, held_bytes: int, layer_bytes: int, n_layers: int) -> int:
    """How many whole layers (weights + cache) fit in what the budget leaves after `held_bytes`."""
    if layer_bytes <= 0:
        return n_layers
    return max(0, min(n_layers, (budget_bytes - held_bytes) // layer_bytes))


class CpuLayersDecoder(nn.Module):
    """Full attention whose last layers (weights and cache) live and run on the CPU."""

    kind = "full attention, CPU layers"
    graphable = False

    def __init__(
        self,
        preset: Preset,
        device: torch.device | str,
        dtype: torch.dtype,
        budget_bytes: int,
        held_bytes: int,
    ) -> None:
        super().__init__()
        self.inner = AttentionDecoder(preset, "dense", device, dtype)  # embedding, blocks, head
        self.preset, self.device, self.dtype = preset, self.inner.device, dtype
        self.budget_bytes, self.held_bytes = budget_bytes, held_bytes
        self.host = torch.device("cpu")
        self.n_gpu = preset.n_layers
        self.caches: list[KVCache] = []
        self.pos = 0

    # -- sizes (as DecodeModel) ---------------------------------------------------------------
    @property
    def elem_bytes(self) -> int:
        return self.inner.elem_bytes

    def total_params(self) -> int:
        return self.inner.total_params()

    def active_weight_bytes(self) -> int:
        return self.inner.active_weight_bytes()

    def memory_bytes(self, depth: int) -> int:
        return self.inner.memory_bytes(depth)

    def bytes_per_position(self) -> int:
        return self.inner.bytes_per_position()

    def layer_weight_bytes(self) -> int:
        block = self.inner.blocks[0]
        return sum(p.numel() for p in block.parameters()) * self.elem_bytes

    def fixed_bytes(self) -> int:
        """What stays on the device whatever the split: embedding, head, context, workspace."""
        return self.held_bytes + (self.inner.embed.numel() + self.inner.head.numel()) * self.elem_bytes

    def gpu_layers_for(self, max_len: int) -> int:
        per_layer = self.layer_weight_bytes() + max_len * self.bytes_per_position() // self.preset.n_layers
        return layers_that_fit(self.budget_bytes, self.fixed_bytes(), per_layer, self.preset.n_layers)

    def layer_device(self, layer: int) -> torch.device:
        return self.device if layer < self.n_gpu else self.host

    # -- life cycle ------------------------------------------------------------------------------
    def allocate(self, max_len: int, resident_positions: int | None = None) -> None:
        """Split the layers for a cache of `max_len` positions, move them, allocate each layer's cache."""
        self.release()
        self.n_gpu = self.gpu_layers_for(max_len)
        p = self.preset
        for layer, block in enumerate(self.inner.blocks):
            block.to(self.layer_device(layer))
            cache = KVCache(1, p.n_heads, p.head_dim, self.layer_device(layer), self.dtype)
            cache.allocate(max_len)
            self.caches.append(cache)

    def release(self) -> None:
        self.caches = []

    def fill(self, depth: int) -> None:
        for cache in self.caches:
            cache.fill(depth)
        self.pos = depth

    def persistent_tensors(self) -> list[torch.Tensor]:
        return list(self.inner.parameters()) + [t for c in self.caches for t in c.dev]

    # -- one step ----------------------------------------------------------------------------------
    @torch.inference_mode()
    def step(self, token: torch.Tensor) -> torch.Tensor:
        """Decode one token → logits (vocab,); the hidden state goes to the host and back once each."""
        p, m = self.preset, self.inner
        x = m.embed.index_select(0, token.reshape(1))  # (1, D) on the device
        for layer, block in enumerate(m.blocks):
            x = x.to(self.layer_device(layer))  # a no-op except at the device → host boundary
            qkv = (_rms(x) @ block.wqkv).view(3, p.n_heads, p.head_dim)
            out = self.caches[layer].attend(0, self.pos, qkv[0], qkv[1:])  # (H, Dh)
            x = x + out.reshape(1, p.d_model) @ block.wo
            x = x + block.ffn(_rms(x))
        x = x.to(self.device)
        self.pos += 1
        return (_rms(x) @ m.head)[0]

    def traffic(self, pos: int) -> Traffic:
        """Bytes a step moves; those of the CPU layers also counted in `cpu_side`."""
        m, e = self.inner, self.elem_bytes
        total = Traffic(weights=m.embed[0].numel() * e + m.head.numel() * e)
        for layer, block in enumerate(m.blocks):
            weights = (block.wqkv.numel() + block.wo.numel()) * e
            part = Traffic(weights=weights) + block.ffn.traffic() + self.caches_traffic(layer, pos)
            if layer >= self.n_gpu:
                part = part + Traffic(cpu_side=part.total)
            total = total + part
        if self.n_gpu < self.preset.n_layers:
            hidden = 2 * self.preset.d_model * e  # the hidden state, there and back
            total = total + Traffic(scratch=hidden, host_link=hidden)
        return total

    def caches_traffic(self, layer: int, pos: int) -> Traffic:
        if layer < len(self.caches):
            return self.caches[layer].traffic(pos)
        row = 2 * self.preset.d_model * self.elem_bytes
        return Traffic(cache_read=(pos + 1) * row, cache_write=row)
