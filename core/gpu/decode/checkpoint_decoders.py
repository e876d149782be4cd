"""The ways the checkpoint benchmark (core.gpu.suites.checkpoint_bench) steps a real model, behind one
protocol (core.gpu.timing.decode_timer.time_decode's): a GPT-2 folder in the course's own module over its
preallocated `KVCache` (core/models/gpt2.py); Qwen3 (dense) and Qwen3.5 (hybrid) folders in the
course's own modules over static buffers a CUDA graph can replay (core/gpu/decode/checkpoint_course.py);
and a Llama / Mistral / Qwen2 folder through transformers with its own cache
(core.models.hf_causal.HFDecoder). Plus the byte counts the benchmark keeps: cache rows and fixed
state on the real tensors, and distinct weights (a tied head once).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import torch

from core.gpu.decode import checkpoint_course
from core.gpu.decode.checkpoint_course import GPT2Decoder
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
