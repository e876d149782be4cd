"""The dtype a benchmark runs in: bf16 on Ampere and newer, fp16 on Volta and Turing, fp32 on the CPU."""

from __future__ import annotations

import torch


def pick_dtype(capability: tuple[int, int] | None) -> torch.dtype:
    """bf16 where the tensor cores have it (compute capability 8.0, Ampere, and newer); fp16 on
    Volta and Turing, where `is_bf16_supported()` says yes but bf16 is only emulated; fp32 on the CPU."""
    if capability is None:
        return torch.float32
    return torch.bfloat16 if tuple(capability) >= (8, 0) else torch.float16


def run_dtype(on_gpu: bool) -> torch.dtype:
    """The dtype a benchmark will run in, for the page's sizes before anything is built: as make_env
    picks it for CUDA device 0; fp32 on the CPU; bf16 for a reader's own card that this server
    cannot see (the public page's home command — fp16, on older cards, is the same two bytes)."""
    if not on_gpu:
        return torch.float32
    return pick_dtype(torch.cuda.get_device_capability(0)) if torch.cuda.is_available() else torch.bfloat16
