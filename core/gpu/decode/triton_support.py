"""Whether this project's Triton kernels (core.gpu.decode.moe_triton, core.gpu.decode.state_triton) can run here.

Triton comes with CUDA PyTorch on Linux and is optional: without it the PyTorch paths run.
On the CPU the kernels run only in Triton's interpreter (TRITON_INTERPRET=1, set before Triton
is first imported), which the tests use to check them against the PyTorch paths. On a GPU, Triton
builds its small C launcher the first time a kernel runs: that needs a C compiler and Python's
headers, which a bare GPU image may lack — then the PyTorch paths run, and `missing_toolchain` says why.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import torch


def interpreted() -> bool:
    """Whether Triton runs its kernels in the CPU interpreter (read when the kernels are built)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def missing_toolchain() -> str | None:
    """What Triton lacks to build its launcher on a GPU (as triton/runtime/build.py looks for it:
    $CC, else gcc, else clang; and Python.h), or None when both are here."""
    if not (os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")):
        return "no C compiler (gcc, clang or $CC)"
    include = sysconfig.get_paths().get("include")
    if not include or not Path(include, "Python.h").is_file():
        return f"no Python.h in {include} (the python3-dev package)"
    return None


def available(device: torch.device) -> bool:
    """Whether the kernels can run on `device`: Triton installed, and a CUDA device with the tools
    Triton builds its launcher with (or the CPU under Triton's interpreter, which builds nothing)."""
    if not (device.type == "cuda" or (device.type == "cpu" and interpreted())):
        return False  # decided without importing Triton (hundreds of MB)
    if device.type == "cuda" and missing_toolchain() is not None:
        return False
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True
