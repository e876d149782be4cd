"""The copy bandwidth B_eff the roofline divides by: device-to-device, host-to-device and host memcpy.

A copy reads and writes every byte, so bandwidth = 2·n / t. Each speed is the median of `REPEATS` timed
copies after a warm-up, every reading kept (`samples_bytes_per_s`) so the page can show the spread: on a
shared CPU the best of a few copies is an outlier (one machine read 16.8, 58.9 and 101 GB/s in three runs).
On a CPU the main-memory buffer is sized from the machine — at least `LLC_MULTIPLE` × its last-level cache,
`UNKNOWN_CACHE_BYTES` where sysfs does not say it, never more than a share of free memory — so the copy
reads memory, not the cache; the copy speed of buffers that fit that cache is kept too: a tiny model read
from it runs faster than main memory allows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from core.gpu.decode import spill
from core.gpu.decode.kv_cache import empty_host_cache
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.cpu_cache import last_level_cache_bytes
from core.gpu.timing.spread import Spread, spread_of

MIB = 1024**2
REPEATS = 7  # timed copies per speed, after one untimed warm-up
CACHE_COPIES = 8  # copies per timed run within the cache (one such copy takes ~0.1 ms)
LLC_MULTIPLE = 4  # a CPU's main-memory buffer: at least this many last-level caches (with its copy: 8)
UNKNOWN_CACHE_BYTES = 512 * MIB  # …or this, where the cache size cannot be read
FREE_SHARE = 8  # …and never more than this share of free memory per buffer (two buffers: twice as much)


@dataclass
class Bandwidth:
    device_bytes_per_s: float  # device-to-device copy: (read + write) bytes / s, the median of the readings
    link_bytes_per_s: float  # host → device (pinned) on CUDA; memcpy on the CPU
    method: str
    host_bytes_per_s: float | None = None  # host memcpy (read + write): what CPU-computed layers get
    llc_bytes: int | None = None  # CPU only: its last-level cache; a step reading no more runs from it
    llc_bytes_per_s: float | None = None  # CPU only: copy speed of buffers that fit in that cache
    copy_bytes: int | None = None  # the device copy's buffer (each copy reads and writes it)
    samples_bytes_per_s: list[float] = field(default_factory=list)  # every timed device copy
    llc_samples_bytes_per_s: list[float] = field(default_factory=list)  # every timed copy within the cache

    def for_reading(self, nbytes: int) -> float:
        """The memory speed a step that reads `nbytes` can reach: on a CPU whose last-level cache holds
        them all, the cache's (the bytes stay there from one step to the next), else the copy speed
        of main memory. A ceiling must be the higher one where both could apply: a tiny model's 12 MB
        read from a 32 MiB cache beat a main-memory roofline by 30–50 % on a 2-core EPYC."""
        if self.uses_cache(nbytes):
            return max(self.llc_bytes_per_s, self.device_bytes_per_s)
        return self.device_bytes_per_s

    def uses_cache(self, nbytes: int) -> bool:
        """Whether a step reading `nbytes` gets the cache's speed (`for_reading`)."""
        return bool(
            self.llc_bytes
            and self.llc_bytes_per_s
            and nbytes <= self.llc_bytes
            and self.llc_bytes_per_s > self.device_bytes_per_s
        )

    def spread(self, nbytes: int | None = None) -> Spread | None:
        """The readings behind the speed `for_reading(nbytes)` uses (main memory's without `nbytes`);
        None for a speed with no readings kept (a spec sheet, a run from before they were kept)."""
        cache = nbytes is not None and self.uses_cache(nbytes)
        samples = self.llc_samples_bytes_per_s if cache else self.samples_bytes_per_s
        return spread_of(samples) if samples else None


def cpu_copy_bytes(requested: int, llc_bytes: int | None, available_bytes: int | None) -> int:
    """The CPU's main-memory copy buffer: `requested`, raised to `LLC_MULTIPLE` × the last-level cache
    (`UNKNOWN_CACHE_BYTES` without one) so the copy cannot run from the cache, then capped at
    1/`FREE_SHARE` of the free memory (never below 1 MiB) so the probe cannot push the machine into swap."""
    if requested < 1:
        raise ValueError(f"the copy buffer must be at least one byte, got {requested}")
    if llc_bytes is not None and llc_bytes < 0:
        raise ValueError(f"a cache size cannot be negative, got {llc_bytes}")
    size = max(requested, LLC_MULTIPLE * llc_bytes if llc_bytes else UNKNOWN_CACHE_BYTES)
    if available_bytes is not None and available_bytes > 0:
        size = min(size, max(available_bytes // FREE_SHARE, MIB))
    return size


def _rates(fn: Callable[[], None], sync: Callable[[], None], unit_bytes: float, repeats: int) -> list[float]:
    """One untimed run of `fn` (warm-up: page faults, caches), then the bytes/s of each of `repeats` timed
    runs, each moving `unit_bytes`."""
    fn()
    sync()
    rates = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        fn()
        sync()
        rates.append(unit_bytes / (time.perf_counter() - t0))
    return rates


def measure_copy_bandwidth(env: BenchEnv, nbytes: int, repeats: int = REPEATS) -> Bandwidth:
    """Copy an `nbytes` buffer (on a CPU: `cpu_copy_bytes` of it) `repeats` times after a warm-up; a copy
    reads and writes every byte, so bandwidth = 2·n / t, the median of the readings."""
    if env.device.type == "cuda":
        device, link = _copy_speeds(env, nbytes, repeats)
        env.free_memory()  # the buffers died with _copy_speeds' frame
        empty_host_cache()  # the pinned test buffer goes back to the OS, not to torch's cache
        host = _host_copy_speeds(min(nbytes, 256 * MIB), repeats)
        return Bandwidth(
            spread_of(device).median, spread_of(link).median, "device-to-device copy; pinned host-to-device copy",
            spread_of(host).median, copy_bytes=nbytes, samples_bytes_per_s=device,
        )  # fmt: skip
    cache = last_level_cache_bytes()
    size = cpu_copy_bytes(nbytes, cache, spill.host_available_bytes())
    device, _ = _copy_speeds(env, size, repeats)
    env.free_memory()
    main = spread_of(device).median
    in_cache = [] if cache is None else _cache_copy_speeds(cache, repeats)
    return Bandwidth(
        main, main / 2, "CPU memcpy (host and 'device' are the same memory)", main, cache,
        spread_of(in_cache).median if in_cache else None, size, device, in_cache,
    )  # fmt: skip


def _cache_copy_speeds(llc_bytes: int, repeats: int) -> list[float]:
    """(read + write) bytes/s of copying a buffer a quarter of the cache's size (source and
    destination together fill half of it), `CACHE_COPIES` copies per timed run (one is very short to time)."""
    return _host_copy_speeds(max(4096, llc_bytes // 4), repeats, CACHE_COPIES)


def _host_copy_speeds(nbytes: int, repeats: int, copies: int = 1) -> list[float]:
    """(read + write) bytes/s of host memcpy of an `nbytes` buffer, `copies` back to back per timed run."""
    src = torch.empty(nbytes, dtype=torch.uint8)
    dst = torch.empty_like(src)

    def run() -> None:
        for _ in range(copies):
            dst.copy_(src)

    return _rates(run, lambda: None, 2 * copies * nbytes, repeats)


def _copy_speeds(env: BenchEnv, nbytes: int, repeats: int) -> tuple[list[float], list[float]]:
    """Device-to-device copy speeds, and host → device ones on CUDA (on a CPU, the same copy halved:
    a host→host copy moves n bytes each way)."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=env.device)
    dst = torch.empty_like(src)
    device = _rates(lambda: dst.copy_(src), env.sync, 2 * nbytes, repeats)
    if env.device.type != "cuda":
        return device, [s / 2 for s in device]
    # never pin more than a safe share of free host RAM; with almost none free, copy from pageable memory
    size = spill.pinnable_bytes(nbytes)
    pin = size >= MIB
    size = size if pin else min(nbytes, 64 * MIB)
    host = torch.empty(size, dtype=torch.uint8, pin_memory=pin)
    return device, _rates(lambda: dst[:size].copy_(host, non_blocking=pin), env.sync, size, repeats)
