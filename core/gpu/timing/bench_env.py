"""Where a benchmark runs: the device, its dtype and sync, and NVML for the same physical GPU.

`make_env` picks CUDA when present, else the CPU in fp32; `BenchEnv` is what every suite and
timer is handed, so the device, its memory and its clean-up are asked in one place.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from typing import Any

import torch

from core.gpu.decode import spill
from core.gpu.device import nvml as nvml_mod
from core.gpu.timing.errors import error_line
from core.gpu.timing.precision import pick_dtype


@dataclass
class BenchEnv:
    """The device the models run on, how to sync it, and NVML for that device (or None)."""

    device: torch.device
    dtype: torch.dtype
    snapshot: nvml_mod.DeviceSnapshot
    gpu: nvml_mod.NvmlGpu | None = None  # only when the models run on this NVIDIA GPU
    outside_torch_bytes: int = 0  # device memory in use that torch's allocator does not hold (context, …)

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def free_memory(self) -> None:
        """Hand cached blocks back to the driver. After a sticky CUDA error (an illegal access
        poisons every later call in the process) this raises too; that error was recorded where
        it happened, so clean-up says so on stderr instead of raising it again and losing results."""
        if self.device.type == "cuda":
            try:
                torch.cuda.empty_cache()
            except RuntimeError as error:
                print(f"free_memory: {error_line(error, 200)}", file=sys.stderr, flush=True)

    def close(self) -> None:
        """Close the NVML handle (pairs the nvmlInit of make_env); safe to call twice."""
        if self.gpu is not None:
            self.gpu.close()

    def free_bytes(self) -> int:
        """Memory free for new tensors now: the GPU's, after cached blocks are handed back; else the
        host's (MemAvailable), 0 where it cannot say."""
        if self.device.type == "cuda":
            self.free_memory()
            return torch.cuda.mem_get_info(self.device)[0]
        return spill.host_available_bytes() or 0

    def held_bytes(self) -> int:
        """Device memory this process holds now: the CUDA context and everything torch reserved."""
        if self.device.type != "cuda":
            return 0
        return self.outside_torch_bytes + torch.cuda.memory_reserved(self.device)

    @property
    def device_label(self) -> str:
        if self.device.type == "cuda":
            return torch.cuda.get_device_name(self.device)
        threads = torch.get_num_threads()
        return f"CPU ({platform.processor() or platform.machine()}, {threads} thread{'s' if threads != 1 else ''})"


def make_env(device: str = "auto", nvml_module: Any = None) -> BenchEnv:
    """Pick CUDA when present, else the CPU (fp32); open NVML for the same physical GPU."""
    use_cuda = torch.cuda.is_available() and device in ("auto", "cuda")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda was asked for, but this PyTorch sees no CUDA GPU")
    if use_cuda:
        dev = torch.device("cuda", 0)
        torch.cuda.init()
        dtype = pick_dtype(torch.cuda.get_device_capability(dev))
        gpu = nvml_mod.open_gpu(
            nvml_module, 0, pci_bus_id=nvml_mod.cuda_pci_bus_id(0), uuid=nvml_mod.cuda_uuid(0)
        )
        snapshot = gpu.snapshot()
        free, total = torch.cuda.mem_get_info(dev)
        outside = max(0, total - free - torch.cuda.memory_reserved(dev))
        return BenchEnv(dev, dtype, snapshot, gpu if isinstance(gpu, nvml_mod.NvmlGpu) else None, outside)
    return BenchEnv(torch.device("cpu"), torch.float32, nvml_mod.probe(nvml_module))
