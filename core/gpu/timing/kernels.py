"""How many operations (kernels) one decode step runs, and the floor that count sets beside its bytes'.

A step is a chain of operations, each waiting for the one before it, and each takes some time however few
bytes it reads (core/plan/latency.py). So next to the bytes' floor (bytes ÷ bandwidth, core.roofline) a
measured step has a kernel floor — its operations × `KERNEL_FLOOR_S`, the planner's stated 3 µs a kernel
(one constant, imported, not restated). Counted three ways, by where the step ran:

* **CUDA graph** — the nodes of the captured graph (kernels, copies, memsets), read through the driver's
  `cuGraphGetNodes` on the graph torch keeps (`torch.cuda.CUDAGraph(keep_graph=True).raw_cuda_graph()`),
  ÷ the steps captured in it;
* **eager on CUDA** — the kernels, copies and memsets torch.profiler records on the device in one step;
* **CPU** — the aten operations one step calls (torch.profiler: every `aten::` event with no `aten::`
  event above it; the ops those call inside, such as `linear`'s `mm`, are the same op's work).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Iterable
from typing import Any

import torch

from core.gpu.timing.errors import is_out_of_memory
from core.gpu.timing.steps import Timing
from core.plan import latency

GRAPH_NODES = "CUDA graph nodes"
CUDA_KERNELS = "CUDA kernels (torch.profiler)"
CPU_OPS = "aten ops (torch.profiler)"


def kernel_floor_s(kernels: float) -> float:
    """The shortest a step of `kernels` operations can take, one after another (core.plan.latency's
    KERNEL_FLOOR_S, read where it is defined: one constant for the planner and the measurements)."""
    return kernels * latency.KERNEL_FLOOR_S


class KernelFloors:
    """The two floors of a measured point that holds `kernels_per_step` (None: not counted) and says its
    `bytes_floor_s` (its bytes ÷ the bandwidth; None: no roofline): the same properties and JSON keys for
    every suite's points (context, MoE, batch, checkpoint)."""

    kernels_per_step: float | None
    kernels_counted: str  # how: GRAPH_NODES, CUDA_KERNELS or CPU_OPS ("" where not counted)
    bytes_floor_s: float | None

    @property
    def kernel_floor_s(self) -> float | None:
        """Its operations one after another at the planner's floor per kernel (core.plan.latency)."""
        return None if self.kernels_per_step is None else kernel_floor_s(self.kernels_per_step)

    @property
    def kernel_bound(self) -> bool:
        """The kernel floor is above the bytes' floor: the operation count, not the bytes, limits it."""
        kernel, nbytes = self.kernel_floor_s, self.bytes_floor_s
        return kernel is not None and nbytes is not None and kernel > nbytes

    def floors_ms(self) -> dict[str, float | None]:
        """Both floors in milliseconds, as a point's JSON carries them beside its fields (derived keys:
        dropped when the JSON is read back)."""
        kernel, nbytes = self.kernel_floor_s, self.bytes_floor_s
        return {
            "bytes_floor_ms": None if nbytes is None else 1000 * nbytes,
            "kernel_floor_ms": None if kernel is None else 1000 * kernel,
        }


def top_level_ops(events: Iterable[Any]) -> int:
    """`aten::` events with no `aten::` event above them: the operations a step itself called."""
    count = 0
    for event in events:
        if not event.name.startswith("aten::"):
            continue
        parent = event.cpu_parent
        while parent is not None and not parent.name.startswith("aten::"):
            parent = parent.cpu_parent
        count += parent is None
    return count


def device_ops(events: Iterable[Any]) -> int:
    """Events that ran on the CUDA device: kernels, copies, memsets."""
    cuda = torch.autograd.DeviceType.CUDA
    return sum(1 for event in events if event.device_type == cuda)


def count_step(step: Callable[[], object], device: torch.device) -> tuple[int, str]:
    """Run `step` once under torch.profiler → (its operations, how they were counted): device kernels on
    CUDA, top-level aten ops elsewhere."""
    from torch.profiler import ProfilerActivity, profile

    on_cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_cuda else [])
    with torch.no_grad(), profile(activities=activities) as prof:
        step()
        if on_cuda:
            torch.cuda.synchronize(device)
    events = prof.events()
    return (device_ops(events), CUDA_KERNELS) if on_cuda else (top_level_ops(events), CPU_OPS)


def per_step(
    model: Any,
    depth: int,
    timed: Timing,
    token: torch.Tensor,
    device: torch.device,
    sync: Callable[[], None],
) -> tuple[float | None, str]:
    """Operations per step of a decoder (the timing protocol's `pos`, `step`) just timed at `depth`: the
    graph's nodes ÷ its steps when the steps were replayed as one and its node list could be read, else one
    untimed step from depth d under torch.profiler; (None, "") where the profiler cannot run here."""
    if timed.kernels_per_step is not None:
        return timed.kernels_per_step, GRAPH_NODES
    model.pos = depth
    try:
        count, how = count_step(lambda: model.step(token), device)
    except Exception as error:  # a profiler that cannot start (no CUPTI) leaves the count out, not the run
        if is_out_of_memory(error):
            raise
        return None, ""
    finally:
        sync()
        model.pos = depth
    return float(count), how


@functools.cache
def _libcuda() -> Any | None:
    """The CUDA driver library, or None where there is none (no GPU driver on this machine)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    lib.cuGraphGetNodes.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    lib.cuGraphGetNodes.restype = ctypes.c_int
    return lib


def graph_nodes(graph: Any, driver: Any | None = None) -> int | None:
    """Nodes in a captured CUDA graph (torch.cuda.CUDAGraph made with keep_graph=True), or None where they
    cannot be read: a graph torch did not keep, a stand-in without `raw_cuda_graph`, no driver library."""
    raw = getattr(graph, "raw_cuda_graph", None)
    if raw is None:
        return None
    try:
        handle = int(raw())
    except (RuntimeError, TypeError, ValueError):  # keep_graph was False, or no graph was captured
        return None
    driver = driver if driver is not None else _libcuda()
    if driver is None or not handle:
        return None
    count = ctypes.c_size_t(0)
    status = driver.cuGraphGetNodes(ctypes.c_void_p(handle), None, ctypes.byref(count))
    return int(count.value) if status == 0 else None


def new_graph() -> tuple[torch.cuda.CUDAGraph, bool]:
    """A CUDA graph that keeps its node list after capture (so `graph_nodes` can read it), where this
    torch offers that (`keep_graph`, torch ≥ 2.7), and whether it does; a plain one otherwise. A kept
    graph is instantiated by its first replay, or by `instantiate()` after capture."""
    try:
        return torch.cuda.CUDAGraph(keep_graph=True), True
    except TypeError:
        return torch.cuda.CUDAGraph(), False
