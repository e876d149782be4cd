"""The copy bandwidth B_eff the roofline divides by: device-to-device, host-to-device and host memcpy.

A copy reads and writes every byte, so bandwidth = 2·n / t, the best of a few repeats after a
warm-up. On a CPU the copy speed of buffers that fit its last-level cache is kept too: a tiny
model read from that cache runs faster than main memory allows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from core.gpu.decode import spill
from core.gpu.decode.kv_cache import empty_host_cache
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.cpu_cache import last_level_cache_bytes


@dataclass
class Bandwidth:
    device_bytes_per_s: float  # device-to-device copy: (read + write) bytes / s
    link_bytes_per_s: float  # host → device (pinned) on CUDA; memcpy on the CPU
    method: str
    host_bytes_per_s: float | None = None  # host memcpy (read + write): what CPU-computed layers get
    llc_bytes: int | None = None  # CPU only: its last-level cache; a step reading no more runs from it
    llc_bytes_per_s: float | None = None  # CPU only: copy speed of buffers that fit in that cache

    def for_reading(self, nbytes: int) -> float:
        """The memory speed a step that reads `nbytes` can reach: on a CPU whose last-level cache holds
        them all, the cache's (the bytes stay there from one step to the next), else the copy speed
        of main memory. A ceiling must be the higher one where both could apply: a tiny model's 12 MB
        read from a 32 MiB cache beat a main-memory roofline by 30–50 % on a 2-core EPYC."""
        if self.llc_bytes and self.llc_bytes_per_s and nbytes <= self.llc_bytes:
            return max(self.llc_bytes_per_s, self.device_bytes_per_s)
        return self.device_bytes_per_s


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
        empty_host_cache()  # the pinned test buffer goes back to the OS, not to torch's cache
        host_bw = _host_copy_speed(min(nbytes, 256 * 1024**2), repeats)
        return Bandwidth(device_bw, link_bw, "device-to-device copy; pinned host-to-device copy", host_bw)
    cache = last_level_cache_bytes()
    return Bandwidth(
        device_bw,
        link_bw,
        "CPU memcpy (host and 'device' are the same memory)",
        device_bw,
        cache,
        None if cache is None else _cache_copy_speed(cache, repeats),
    )


def _cache_copy_speed(llc_bytes: int, repeats: int) -> float:
    """(read + write) bytes/s of copying a buffer a quarter of the cache's size (source and
    destination together fill half of it), eight copies per timed run (one is too short to time)."""
    return _host_copy_speed(max(4096, llc_bytes // 4), repeats, copies=8)


def _host_copy_speed(nbytes: int, repeats: int, copies: int = 1) -> float:
    """(read + write) bytes/s of host memcpy of an `nbytes` buffer, `copies` back to back per timed run."""
    src = torch.empty(nbytes, dtype=torch.uint8)
    dst = torch.empty_like(src)

    def run() -> None:
        for _ in range(copies):
            dst.copy_(src)

    return 2 * copies * nbytes / _best_seconds(run, lambda: None, repeats)


def _copy_speeds(env: BenchEnv, nbytes: int, repeats: int) -> tuple[float, float]:
    src = torch.empty(nbytes, dtype=torch.uint8, device=env.device)
    dst = torch.empty_like(src)
    device_bw = 2 * nbytes / _best_seconds(lambda: dst.copy_(src), env.sync, repeats)
    if env.device.type != "cuda":
        return device_bw, device_bw / 2  # a host→host copy moves n bytes each way
    # never pin more than a safe share of free host RAM; with almost none free, copy from pageable memory
    size = spill.pinnable_bytes(nbytes)
    pin = size >= 1024**2
    size = size if pin else min(nbytes, 64 * 1024**2)
    host = torch.empty(size, dtype=torch.uint8, pin_memory=pin)
    return device_bw, size / _best_seconds(
        lambda: dst[:size].copy_(host, non_blocking=pin), env.sync, repeats
    )
