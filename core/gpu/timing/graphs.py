"""Decode steps replayed as one CUDA graph, timed with CUDA events.

Launched one by one, a decode step of a few-billion-parameter model issues hundreds of small
kernels, and Python plus launch latency (tens of µs each) can take longer than the step's
memory traffic; llama.cpp and vLLM both capture their decode as CUDA graphs for this reason.
The positions of a repetition are known before it runs (depth d, d + 1, …), so all its
`n_steps` steps are captured once — after a warm-up on a side stream, as `torch.cuda.graph`
requires — and every repetition is one `replay()`. Events recorded on the stream around the
work time it on the device, not the host. The graph keeps its node list, so a repetition also says how
many operations one step ran (core.gpu.timing.kernels.graph_nodes ÷ the steps captured).

`Timer` is the clock both ways share: CUDA events on a GPU, `perf_counter` on the CPU.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import torch

from core.gpu.timing import kernels
from core.gpu.timing.steps import Stopped, Timing, token_at

if TYPE_CHECKING:
    from core.gpu.decode.models import DecodeModel


class Timer:
    """start() … stop() → seconds: CUDA events on a CUDA device, perf_counter elsewhere."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self._t0 = 0.0
        if self.cuda:
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)

    def start(self) -> None:
        if self.cuda:
            self._start.record()
        else:
            self._t0 = time.perf_counter()

    def stop(self) -> float:
        if not self.cuda:
            return time.perf_counter() - self._t0
        self._end.record()
        self._end.synchronize()
        return self._start.elapsed_time(self._end) / 1000.0


def _run_steps(model: DecodeModel, depth: int, tokens: torch.Tensor, n_steps: int) -> None:

    model.pos = depth
    for i in range(n_steps):
        model.step(token_at(tokens, i))


def capture(model: DecodeModel, depth: int, tokens: torch.Tensor, n_steps: int) -> torch.cuda.CUDAGraph:
    """Warm up on a side stream, then capture `n_steps` steps from depth d as one graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        _run_steps(model, depth, tokens, n_steps)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph, kept = kernels.new_graph()
    with capturing(graph):
        _run_steps(model, depth, tokens, n_steps)
    if kept:
        graph.instantiate()  # what capture_end does for a graph it does not keep: the first replay only warms
    return graph


@contextlib.contextmanager
def capturing(graph: torch.cuda.CUDAGraph) -> Iterator[None]:
    """torch.cuda.graph(graph), with other threads (the page) free to use CUDA meanwhile, that leaves
    the stream it found current even when it fails: torch.cuda.graph ends the capture before it leaves
    its side stream, so when ending fails that stream would stay current for all the process runs next."""
    before = torch.cuda.current_stream()
    try:
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            yield
    except BaseException:
        torch.cuda.set_stream(before)
        raise


def time_graphed(
    model: DecodeModel,
    depth: int,
    tokens: torch.Tensor,
    n_steps: int,
    repeats: int,
    should_stop: Callable[[], bool],
    deadline: float | None = None,
) -> Timing:
    """Capture once, replay `repeats` times (one warm replay first), tokens/s per replay."""

    graph = capture(model, depth, tokens, n_steps)
    nodes = kernels.graph_nodes(graph)  # the operations captured, where the graph's node list can be read
    try:
        graph.replay()  # warm: the first replay uploads the graph
        if model.device.type == "cuda":
            torch.cuda.synchronize(model.device)
        timer = Timer(model.device)
        samples: list[float] = []
        capped = False
        for _ in range(repeats):
            if should_stop():
                raise Stopped
            if deadline is not None and samples and time.perf_counter() > deadline:
                capped = True
                break
            timer.start()
            graph.replay()
            samples.append(n_steps / timer.stop())
        return Timing(samples, "CUDA graph", capped, nodes / n_steps if nodes else None)
    finally:
        del graph
        model.pos = depth
