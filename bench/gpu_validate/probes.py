"""Small measurements that check the benchmark's assumptions (used by the validator, bench.gpu_validate).

Each answers one question about the machine or about a decode step, on CUDA or (smaller,
for a dry run) on the CPU:

- `copy_bandwidth`: device-to-device copy speed of a buffer of a given size — at 2 GiB it
  defeats the L2 cache and reads DRAM; at L2 size it mostly does not (the gap shows why the
  benchmark's copy buffers are large);
- `gemv_bandwidth`: bytes/s of one matrix × vector product, the operation a batch-1 decode
  step is made of;
- `h2d_bandwidth`: host→device copy speed from pinned or pageable memory;
- `step_profile`: what one decode step launches, by the profiler — kernels, copies by
  direction, and host-blocking calls (a step that blocks the host cannot be graphed and
  measures Python, not memory).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from core.gpu.decode.kv_cache import empty_host_cache
from core.gpu.timing.graphs import Timer, capturing

# Runtime calls that make the host wait for the device.
BLOCKING_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy")


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def best_seconds(fn: Callable[[], object], device: torch.device, repeats: int = 5) -> float:
    """Fastest of `repeats` timed calls after one warm-up, device time (events) on CUDA."""
    fn()
    _sync(device)
    timer = Timer(device)
    best = math.inf
    for _ in range(repeats):
        timer.start()
        fn()
        best = min(best, timer.stop())
    return best


def copy_bandwidth(device: torch.device, nbytes: int, repeats: int = 5, min_total: int = 1 << 30) -> float:
    """(read + write) bytes/s of copying an `nbytes` buffer on the device.

    A small copy takes a few microseconds, about as long as launching it: so it is repeated
    until at least `min_total` bytes move per timed run, and on CUDA the repeats are captured as
    one graph, so the timing sees the copies and not the launches. A copy big enough on its own
    runs eagerly: captured in a graph, one 2 GiB device copy ran at 54–57 % of the H200's NVML
    peak instead of 79 % eagerly (docs/gpu-runs/2026-11-30-nvidia-h200: the first run, eager;
    after-l2-fix and after-moe-bmm, graphed), while 7.5 MiB copies, repeated in a graph, ran
    at 1.9× the graphed big copy — the L2 showing through.
    """
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    inner = max(1, min(256, min_total // max(1, nbytes)))
    if inner == 1:
        return 2 * nbytes / best_seconds(lambda: dst.copy_(src), device, repeats)

    def copies() -> None:
        for _ in range(inner):
            dst.copy_(src)

    return 2 * nbytes * inner / best_seconds(_graphed(copies, device), device, repeats)


def _graphed(fn: Callable[[], object], device: torch.device) -> Callable[[], object]:
    """`fn` captured as one CUDA graph (replayed by the returned callable); on the CPU, `fn` itself."""
    if device.type != "cuda":
        return fn
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        fn()  # warm up outside the capture, as torch.cuda.graph asks
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with capturing(graph):
        fn()
    return graph.replay


def gemv_bandwidth(device: torch.device, dtype: torch.dtype, rows: int, cols: int, repeats: int = 5) -> float:
    """Matrix bytes read per second by y = x W (x one row): a decode step's building block."""
    w = torch.randn(rows, cols, device=device).to(dtype)
    x = torch.randn(1, rows, device=device).to(dtype)
    return w.numel() * w.element_size() / best_seconds(lambda: x @ w, device, repeats)


def seconds_per_layer(
    layers: Sequence[Callable[[torch.Tensor], object]], h: torch.Tensor, repeats: int = 5
) -> float:
    """Seconds per call of `h` through each of `layers` in turn, captured as one CUDA graph on a
    GPU. Each layer has its own weights, so none is read from the L2 a second time."""

    def calls() -> None:
        for layer in layers:
            layer(h)

    return best_seconds(_graphed(calls, h.device), h.device, repeats) / len(layers)


def h2d_bandwidth(nbytes: int, pinned: bool, repeats: int = 5) -> float:
    """Host→device bytes/s from pinned (page-locked) or pageable host memory (CUDA only)."""
    speed = nbytes / _h2d_seconds(nbytes, pinned, repeats)
    empty_host_cache()  # the buffers died with _h2d_seconds' frame: hand the pinned pages back
    return speed


def _h2d_seconds(nbytes: int, pinned: bool, repeats: int) -> float:
    device = torch.device("cuda")
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
    dst = torch.empty(nbytes, dtype=torch.uint8, device=device)
    return best_seconds(lambda: dst.copy_(host, non_blocking=pinned), device, repeats)


def l2_bytes(device: torch.device) -> int | None:
    """The GPU's L2 cache size, or None (CPU, or a torch that does not say)."""
    if device.type != "cuda":
        return None
    return getattr(torch.cuda.get_device_properties(device), "L2_cache_size", None)


@dataclass
class StepProfile:
    """What one call launched: kernels, copies by direction, host-blocking runtime calls."""

    kernels: int = 0
    copies: dict[str, int] = field(default_factory=dict)  # "HtoD", "DtoH", "DtoD" → count
    blocking_calls: dict[str, int] = field(default_factory=dict)
    ops: int = 0  # top-level aten operators (what a CPU run can see)

    @property
    def syncs(self) -> int:
        return sum(self.blocking_calls.values())


STEP_RANGE = "decode step"


def _parent_name(event: object) -> str | None:
    parent = getattr(event, "cpu_parent", None)
    return None if parent is None else parent.name


def _inside(event: object, name: str) -> bool:
    """Whether a profiler event happened inside the range called `name`."""
    parent = getattr(event, "cpu_parent", None)
    while parent is not None:
        if parent.name == name:
            return True
        parent = parent.cpu_parent
    return False


def step_profile(step: Callable[[], object], device: torch.device) -> StepProfile:
    """Profile one call of `step` (already warmed up)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    _sync(device)
    with profile(activities=activities) as prof:
        with record_function(STEP_RANGE):
            step()
    out = StepProfile()
    copies: Counter[str] = Counter()
    blocking: Counter[str] = Counter()
    for e in prof.events():
        if cuda and e.device_type == torch.autograd.DeviceType.CUDA:
            name = e.name
            if name.startswith("Memcpy"):
                for kind in ("HtoD", "DtoH", "DtoD", "HtoH"):
                    if kind in name:
                        copies[kind] += 1
            elif not name.startswith("Memset"):
                out.kernels += 1
        elif e.name in BLOCKING_CALLS and _inside(e, STEP_RANGE):  # not the profiler's own sync
            blocking[e.name] += 1
        elif e.name.startswith("aten::") and _parent_name(e) == STEP_RANGE:
            out.ops += 1
            if e.name == "aten::copy_":
                copies["copy_"] += 1
    out.copies, out.blocking_calls = dict(copies), dict(blocking)
    return out
