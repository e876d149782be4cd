"""Where a decode benchmark runs and how it is timed, llama-bench style.

Method (ggml-org/llama.cpp tools/llama-bench; docs/sources.md §6.1, §6.5):
the device and its sync (`BenchEnv`), the copy bandwidth B_eff the roofline uses
(`measure_copy_bandwidth`), and `time_decode`: a short untimed warm-up, then `repeats`
repetitions of `n_steps` single-token steps with a device sync after each step; per
repetition tokens/s = n_steps / seconds, reported as mean ± sample std. On CUDA,
`time_at_depth` also replays each repetition as one CUDA graph (core.gpu.graphs), as
llama.cpp and vLLM run their decode, so launch overhead no longer hides the memory wall.
"""

from __future__ import annotations

import math
import platform
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch

from core.gpu import graphs, spill
from core.gpu import nvml as nvml_mod
from core.gpu.kv_cache import empty_host_cache
from core.gpu.models import DecodeModel
from core.gpu.presets import Preset
from core.gpu.steps import Stopped, Timing, token_at  # noqa: F401 (re-exported: callers import them from here)

Progress = Callable[[float, str], None]
ShouldStop = Callable[[], bool]
OomHook = Callable[[str, int], None]  # (series name, depth) → may raise torch.cuda.OutOfMemoryError


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


def error_line(error: BaseException, limit: int = 200, whole: bool = False) -> str:
    """'TypeName: message' for the page, the CLI or a JSON: the first line of the message (the
    whole of it with `whole`), cut at `limit`; an empty message leaves the type name alone."""
    text = str(error) if whole else (str(error).splitlines() or [""])[0]
    return f"{type(error).__name__}: {text[:limit]}" if text else type(error).__name__


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
        from core.gpu.spill import host_available_bytes  # only here: spill imports this module's kin

        return host_available_bytes() or 0

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


# ------------------------------------------------------------------------------------------------
# Measurements
# ------------------------------------------------------------------------------------------------


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


def last_level_cache_bytes(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int | None:
    """The size of the CPU's outermost cache, from Linux sysfs (`index*/level`, `index*/size` such
    as '32768K'); None where the files are missing or unreadable (macOS, Windows, containers)."""
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    best: tuple[int, int] | None = None
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text().strip())
            kind = (index / "type").read_text().strip() if (index / "type").exists() else "Unified"
            size = (index / "size").read_text().strip()
            nbytes = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
        except (OSError, ValueError, IndexError):  # unreadable, or an empty or odd size
            continue
        if kind != "Instruction" and nbytes > 0 and (best is None or level > best[0]):
            best = (level, nbytes)
    return None if best is None else best[1]


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


class SpeedPoint:
    """What a measured point with `tokens_per_s` and `predicted_tokens_per_s` (its roofline) says
    per token: milliseconds, and how close it came to the roofline."""

    tokens_per_s: float
    predicted_tokens_per_s: float

    @property
    def ms_per_token(self) -> float:
        return 1000.0 / self.tokens_per_s

    @property
    def percent_of_roofline(self) -> float:
        return 100.0 * self.tokens_per_s / self.predicted_tokens_per_s


@dataclass
class DepthTiming:
    """Eager and (on CUDA) graphed timings at one depth; `best` is the graphed one when there is one."""

    eager: Timing
    graphed: Timing | None = None
    graph_note: str | None = None  # why there is no graphed figure

    @property
    def best(self) -> Timing:
        return self.graphed if self.graphed is not None else self.eager

    @property
    def capped(self) -> bool:
        return self.eager.capped or (self.graphed is not None and self.graphed.capped)


def time_decode(
    model: DecodeModel,
    depth: int,
    tokens: torch.Tensor,
    n_steps: int,
    warmup: int,
    repeats: int,
    sync: Callable[[], None],
    should_stop: ShouldStop = never,
    deadline: float | None = None,
) -> Timing:
    """Warm-up, then `repeats` × (back to depth d, `n_steps` steps, a sync after every step).

    Stop is checked before every step. Past `deadline` (a `time.perf_counter()` value) no new
    repetition starts; a first repetition cut short still counts the steps it timed.
    """
    model.pos = depth
    for i in range(warmup):
        model.step(token_at(tokens, i))
    sync()
    timer = graphs.Timer(model.device)
    samples: list[float] = []
    capped = False
    for _ in range(repeats):
        if deadline is not None and samples and time.perf_counter() > deadline:
            capped = True
            break
        model.pos = depth  # back to depth d: the rows past it are simply overwritten
        timer.start()
        done = 0
        for i in range(n_steps):
            if should_stop():
                raise Stopped
            model.step(token_at(tokens, i))
            sync()
            done += 1
            if deadline is not None and time.perf_counter() > deadline and i + 1 < n_steps:
                capped = True
                break
        seconds = timer.stop()
        if capped and samples:
            break  # a cut-short repetition is not comparable with the whole ones
        samples.append(done / seconds)
        if capped:
            break
    return Timing(samples, "eager", capped)


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
    allocate: bool = True,
    graphed: bool = True,
) -> DepthTiming:
    """Allocate room for depth d and the timed steps (unless already allocated), prefill to d
    (untimed), time eager steps, then — on CUDA — the same steps replayed as one CUDA graph.

    `oom_hook(label, depth)` lets tests run out of memory at a chosen depth; `resident_positions`
    keeps only that many cache positions on the device (the rest streamed from host memory).
    Each depth gets `preset.depth_seconds` of timing at most (the deadline covers both ways).
    """
    if oom_hook is not None:
        oom_hook(label, depth)
    if allocate:
        model.allocate(steps_room(preset, depth), resident_positions)
    model.fill(depth)
    deadline = time.perf_counter() + preset.depth_seconds
    eager = time_decode(
        model, depth, tokens, preset.n_steps, preset.warmup, preset.repeats, env.sync, should_stop, deadline
    )
    result = DepthTiming(eager)
    if not (graphed and preset.use_graphs):
        return result
    if env.device.type != "cuda":
        result.graph_note = "CUDA graphs need a CUDA device"
        return result
    if time.perf_counter() > deadline:
        result.graph_note = "not graphed: the depth's time cap was spent on the eager steps"
        return result
    if not getattr(model, "graphable", True):
        result.graph_note = "not graphable: the CPU layers wait for the host"
        return result
    try:
        result.graphed = graphs.time_graphed(
            model, depth, tokens, preset.n_steps, preset.repeats, should_stop, deadline
        )
    except Stopped:
        raise
    except Exception as error:  # a graph that cannot be captured leaves the eager figure standing
        if is_out_of_memory(error):
            raise
        result.graph_note = f"graph capture failed: {error_line(error)}"
    finally:
        env.free_memory()
    return result


def steps_room(preset: Preset, depth: int) -> int:
    """Positions a depth needs: the prefill, the timed steps (or the warm-up), one spare."""
    return depth + max(preset.n_steps, preset.warmup) + 1


def random_tokens(preset: Preset, device: torch.device, n: int = 256) -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    return torch.randint(0, preset.vocab, (n,), generator=gen).to(device)
