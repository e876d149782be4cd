"""The ways the checkpoint benchmark (core.gpu.suites.checkpoint_bench) steps a real model, behind one
protocol (core.gpu.timing.decode_timer.time_decode's): a GPT-2 folder in the course's own module over its
preallocated `KVCache` (core/models/gpt2.py); Qwen3 (dense) and Qwen3.5 (hybrid) folders in the
course's own modules over static buffers a CUDA graph can replay (core/gpu/decode/checkpoint_course.py);
and a Llama / Mistral / Qwen2 folder through transformers with its own cache
(core.models.hf_causal.HFDecoder). Plus the byte counts the benchmark keeps: cache rows and fixed
state on the real tensors, and distinct weights (a tied head once).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Protocol

import torch

from core.gpu.decode import checkpoint_course
from core.i18n import N_
from core.models import hf_causal


class Decoder(Protocol):
    device: torch.device
    vocab: int
    loader: str
    cache_kind: str
    pos: int

    def parameters(self) -> list[torch.Tensor]: ...
    def allocate(self, room: int) -> None: ...
    def fill(self, depth: int) -> None: ...
    def step(self, token: torch.Tensor) -> torch.Tensor: ...
    def cache_tensors(self) -> list[torch.Tensor]: ...
    def release(self) -> None: ...


class GPT2Decoder:
    """A GPT-2 folder in the course's module, stepped over its `KVCache` (core/models/gpt2.py):
    buffers for the whole window, allocated once; `length` says how many rows are real."""

    cache_kind = N_("course KVCache (preallocated for the window)")

    def __init__(self, folder: Path | str, device: torch.device, dtype: torch.dtype) -> None:
        from core.models.hf_gpt2 import load_gpt2

        self.device = torch.device(device)
        loaded = load_gpt2(folder, dtype=dtype)
        self.model = loaded.model.to(self.device).eval()
        self.vocab = self.model.config.vocab_size
        self.loader = N_("the course's GPT-2 module (core/models/gpt2.py)")
        self.cache = None

    def parameters(self) -> list[torch.Tensor]:
        return list(self.model.parameters())  # the tied head is the embedding's tensor: once

    def allocate(self, room: int) -> None:
        if self.cache is None:  # the window's buffers serve every depth
            with self.device:
                self.cache = self.model.new_cache()
        self.cache.length = 0

    def _forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (1, T) after the cached positions → logits of the last one (V,)."""
        # the module makes its position indices with torch.arange: on a GPU, make them there
        on_device = self.device if self.device.type != "cpu" else contextlib.nullcontext()
        with torch.no_grad(), on_device:
            logits, _ = self.model.forward_with_attention(ids, self.cache, last_only=True)  # (1, 1, V)
        return logits[0, -1]

    def fill(self, depth: int, seed: int = 0) -> None:
        hf_causal.random_prefill(self._forward, self.vocab, depth, self.device, seed)

    def step(self, token: torch.Tensor) -> torch.Tensor:
        return self._forward(token.view(1, 1))

    @property
    def pos(self) -> int:
        return 0 if self.cache is None else self.cache.length

    @pos.setter
    def pos(self, depth: int) -> None:
        if depth > self.pos:
            raise ValueError(f"cannot move forward to {depth}: the cache holds {self.pos} positions")
        self.cache.length = depth  # the rows past it are overwritten by the next steps

    def cache_tensors(self) -> list[torch.Tensor]:
        return [] if self.cache is None else [*self.cache.keys, *self.cache.values]  # each (B, H, T_max, Dh)

    def release(self) -> None:
        self.cache = None


def open_decoder(family: str, folder: Path, device: torch.device, dtype: torch.dtype) -> Decoder:
    """Load the weights onto the benchmark's device in its dtype (CheckpointError, one line, if bad)."""
    if family == "gpt2":
        return GPT2Decoder(folder, device, dtype)
    if family in checkpoint_course.FAMILIES:  # the course's own code, graph-capturable on CUDA
        return checkpoint_course.open_course_decoder(family, folder, device, dtype)
    return hf_causal.HFDecoder(folder, device, dtype)


def state_tensors(decoder: Decoder) -> list[torch.Tensor]:
    """What a decoder keeps at the same size at every depth (Qwen3.5's boards); none for the others."""
    return decoder.state_tensors() if hasattr(decoder, "state_tensors") else []


def rows_bytes(tensors: list[torch.Tensor], rows: int) -> int:
    """Bytes of the first `rows` positions of cache buffers shaped (B, H, T, D)."""
    return sum(t[:, :, :rows].numel() * t.element_size() for t in tensors)


def unique_bytes(tensors: list[torch.Tensor]) -> int:
    """Bytes of distinct tensors (a tied weight counted once)."""
    seen = {t.data_ptr(): t.numel() * t.element_size() for t in tensors}
    return sum(seen.values())
