"""Where a decode benchmark runs and how it is timed, llama-bench style.

Method (ggml-org/llama.cpp tools/llama-bench; reference/gpu-measurement.md §1.1, §5):
the device and its sync (`BenchEnv`), the copy bandwidth B_eff the roofline uses
(`measure_copy_bandwidth`), and `time_decode`: a short untimed warm-up, then `repeats`
repetitions of `n_steps` single-token steps with a device sync after each step; per
repetition tokens/s = n_steps / seconds, reported as mean ± sample std.
"""

from __future__ import annotations

import math
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from core.gpu import nvml as nvml_mod
from core.gpu.models import DecodeModel
from core.gpu.presets import Preset

Progress = Callable[[float, str], None]
ShouldStop = Callable[[], bool]
OomHook = Callable[[str, int], None]  # (series name, depth) → may raise torch.cuda.OutOfMemoryError


class Stopped(Exception):
    """The reader pressed Stop; partial results are kept."""


def no_progress(fraction: float, message: str) -> None:
    """The default progress callback: report nothing."""


def never() -> bool:
    """The default stop flag: never stop."""
    return False


def is_out_of_memory(error: BaseException) -> bool:
    """A CUDA OOM, or a CPU allocator failure."""
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    text = str(error).lower()
    return isinstance(error, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def oom_message(error: Exception) -> str:
    """An out-of-memory error's first line, kept as a result; any other error (Stop included) is raised again."""
    if not is_out_of_memory(error):
        raise error
    return str(error).splitlines()[0][:300]


class _Stoppable(Protocol):
    stopped: bool


@contextmanager
def stoppable(result: _Stoppable, progress: Progress) -> Iterator[None]:
    """Run a benchmark's body: Stop marks `result.stopped` and keeps what was measured; report the end."""
    try:
        yield
    except Stopped:
        result.stopped = True
    progress(1.0, "stopped" if result.stopped else "done")


# ------------------------------------------------------------------------------------------------
# Where the benchmark runs
# ------------------------------------------------------------------------------------------------


@dataclass
class BenchEnv:
    """The device the models run on, how to sync it, and NVML for that device (or None)."""

    device: torch.device
    dtype: torch.dtype
    snapshot: nvml_mod.DeviceSnapshot
    gpu: nvml_mod.NvmlGpu | None = None  # only when the models run on this NVIDIA GPU

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def free_memory(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    @property
    def device_label(self) -> str:
        if self.device.type == "cuda":
            return torch.cuda.get_device_name(self.device)
        threads = torch.get_num_threads()
        return f"CPU ({platform.processor() or platform.machine()}, {threads} thread{'s' if threads != 1 else ''})"


def make_env(device: str = "auto", nvml_module: Any = None) -> BenchEnv:
    """Pick CUDA when present (bf16), else the CPU (fp32); open NVML for the chosen GPU."""
    use_cuda = torch.cuda.is_available() and device in ("auto", "cuda")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda was asked for, but this PyTorch sees no CUDA GPU")
    if use_cuda:
        dev = torch.device("cuda", 0)
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        gpu = nvml_mod.open_gpu(nvml_module, 0, pci_bus_id=nvml_mod.cuda_pci_bus_id(0))
        snapshot = gpu.snapshot()
        return BenchEnv(dev, dtype, snapshot, gpu if isinstance(gpu, nvml_mod.NvmlGpu) else None)
    return BenchEnv(torch.device("cpu"), torch.float32, nvml_mod.probe(nvml_module))


# ------------------------------------------------------------------------------------------------
# Measurements
# ------------------------------------------------------------------------------------------------


@dataclass
class Bandwidth:
    device_bytes_per_s: float  # device-to-device copy: (read + write) bytes / s
    link_bytes_per_s: float  # host → device (pinned) on CUDA; memcpy on the CPU
    method: str


def _best_seconds(fn: Callable[[], None], sync: Callable[[], None], repeats: int) -> float:
    fn()  # warm-up
    sync()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def measure_copy_bandwidth(env: BenchEnv, nbytes: int, repeats: int = 5) -> Bandwidth:
    """Copy an `nbytes` buffer; a copy reads and writes every byte, so bandwidth = 2·n / t."""
    device_bw, link_bw = _copy_speeds(env, nbytes, repeats)
    env.free_memory()  # the buffers died with _copy_speeds' frame
    if env.device.type == "cuda":
        return Bandwidth(device_bw, link_bw, "device-to-device copy; pinned host-to-device copy")
    return Bandwidth(device_bw, link_bw, "CPU memcpy (host and 'device' are the same memory)")


def _copy_speeds(env: BenchEnv, nbytes: int, repeats: int) -> tuple[float, float]:
    src = torch.empty(nbytes, dtype=torch.uint8, device=env.device)
    dst = torch.empty_like(src)
    device_bw = 2 * nbytes / _best_seconds(lambda: dst.copy_(src), env.sync, repeats)
    if env.device.type != "cuda":
        return device_bw, device_bw / 2  # a host→host copy moves n bytes each way
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    return device_bw, nbytes / _best_seconds(lambda: dst.copy_(host, non_blocking=True), env.sync, repeats)


@dataclass
class Timing:
    samples_tokens_per_s: list[float]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples_tokens_per_s)

    @property
    def std(self) -> float:
        s = self.samples_tokens_per_s
        return statistics.stdev(s) if len(s) > 1 else 0.0


def time_decode(
    model: DecodeModel,
    depth: int,
    tokens: torch.Tensor,
    n_steps: int,
    warmup: int,
    repeats: int,
    sync: Callable[[], None],
    should_stop: ShouldStop = never,
) -> Timing:
    """Warm-up, then `repeats` × (restore depth d, `n_steps` steps, a sync after every step)."""
    model.pos = depth
    for i in range(warmup):
        model.step(tokens[i % len(tokens)])
    sync()
    samples = []
    for _ in range(repeats):
        if should_stop():
            raise Stopped
        model.pos = depth  # back to depth d: the rows past it are simply overwritten
        t0 = time.perf_counter()
        for i in range(n_steps):
            model.step(tokens[i % len(tokens)])
            sync()
        samples.append(n_steps / (time.perf_counter() - t0))
    return Timing(samples)


def time_at_depth(
    model: DecodeModel,
    label: str,
    preset: Preset,
    env: BenchEnv,
    tokens: torch.Tensor,
    depth: int,
    should_stop: ShouldStop = never,
    oom_hook: OomHook | None = None,
    resident_positions: int | None = None,
) -> Timing:
    """Allocate room for depth d and the timed steps, prefill to d (untimed), then `time_decode`.

    `oom_hook(label, depth)` lets tests run out of memory at a chosen depth; `resident_positions`
    keeps only that many cache positions on the device (the rest streamed from host memory).
    """
    if oom_hook is not None:
        oom_hook(label, depth)
    model.allocate(depth + max(preset.n_steps, preset.warmup) + 1, resident_positions)
    model.fill(depth)
    return time_decode(
        model, depth, tokens, preset.n_steps, preset.warmup, preset.repeats, env.sync, should_stop
    )


def random_tokens(preset: Preset, device: torch.device, n: int = 256) -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    return torch.randint(0, preset.vocab, (n,), generator=gen).to(device)
