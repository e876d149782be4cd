"""Whether this project's Triton kernels (core.gpu.moe_triton, core.gpu.state_triton) can run here.

Triton comes with CUDA PyTorch on Linux and is optional: without it the PyTorch paths run.
On the CPU the kernels run only in Triton's interpreter (TRITON_INTERPRET=1, set before Triton
is first imported), which the tests use to check them against the PyTorch paths.
"""

from __future__ import annotations

import os

import torch


def interpreted() -> bool:
    """Whether Triton runs its kernels in the CPU interpreter (read when the kernels are built)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def available(device: torch.device) -> bool:
    """Whether the kernels can run on `device`: Triton installed, and a CUDA device (or the CPU
    under Triton's interpreter)."""
    if not (device.type == "cuda" or (device.type == "cpu" and interpreted())):
        return False  # decided without importing Triton (hundreds of MB)
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True
