"""Operations per decode step (core.gpu.timing.kernels): the profiler's top-level aten ops on a CPU, a CUDA
graph's nodes read through the driver (a stand-in driver and graph here, so the GPU path runs without a
GPU), the device kernels of a profiled CUDA step (stand-in events), and the floor at the planner's constant."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from core.gpu.timing import graphs, kernels
from core.gpu.timing.steps import Timing
from core.plan.latency import KERNEL_FLOOR_S


def test_a_cpu_step_counts_the_ops_it_calls_not_the_ops_inside_them():
    x, w = torch.randn(1, 64), torch.randn(32, 64)

    def step():
        h = F.linear(x, w)  # one op (aten::linear calls t and mm inside)
        return torch.relu(h) + 1  # two more

    count, how = kernels.count_step(step, torch.device("cpu"))
    assert (count, how) == (3, kernels.CPU_OPS)
    assert kernels.count_step(lambda: None, torch.device("cpu"))[0] == 0


def test_the_floor_is_the_planners_constant_per_kernel():
    assert kernels.kernel_floor_s(500) == pytest.approx(500 * KERNEL_FLOOR_S)


def test_device_events_are_counted_and_host_ones_are_not():
    cuda, cpu = torch.autograd.DeviceType.CUDA, torch.autograd.DeviceType.CPU
    events = [SimpleNamespace(device_type=d) for d in (cuda, cpu, cuda, cuda, cpu)]
    assert kernels.device_ops(events) == 3


class FakeDriver:
    """cuGraphGetNodes(graph, NULL, &count) as the driver answers it: the count for a known graph."""

    def __init__(self, nodes: dict[int, int]):
        self.nodes = nodes

    def cuGraphGetNodes(self, graph, nodes, count):
        if nodes is not None or graph.value not in self.nodes:
            return 400  # CUDA_ERROR_INVALID_HANDLE
        count._obj.value = self.nodes[graph.value]  # count is byref(c_size_t)
        return 0


class KeptGraph:
    def __init__(self, handle: int):
        self.handle = handle

    def raw_cuda_graph(self) -> int:
        return self.handle


class DroppedGraph:
    def raw_cuda_graph(self) -> int:
        raise RuntimeError("keep_graph must be True")


def test_a_kept_graphs_nodes_are_read_through_the_driver():
    driver = FakeDriver({0x1234: 96})
    assert kernels.graph_nodes(KeptGraph(0x1234), driver) == 96
    assert kernels.graph_nodes(KeptGraph(0x9999), driver) is None  # the driver refused the handle
    assert kernels.graph_nodes(DroppedGraph(), driver) is None  # torch did not keep the graph
    assert kernels.graph_nodes(object(), driver) is None  # a stand-in with no graph at all


def test_a_graphed_timing_reports_nodes_per_step(monkeypatch):
    """time_graphed divides the captured graph's nodes by the steps captured in it."""

    class ReplayingGraph(KeptGraph):
        def replay(self):
            pass

    model = SimpleNamespace(device=torch.device("cpu"), pos=0)
    monkeypatch.setattr(graphs, "capture", lambda *args: ReplayingGraph(7))
    monkeypatch.setattr(kernels, "_libcuda", lambda: FakeDriver({7: 16 * 42}))
    timed = graphs.time_graphed(model, 0, torch.zeros(4, dtype=torch.long), 16, 2, should_stop=lambda: False)
    assert timed.kernels_per_step == 42 and timed.method == "CUDA graph"
    monkeypatch.setattr(kernels, "_libcuda", lambda: None)  # no driver library: no count, still a timing
    timed = graphs.time_graphed(model, 0, torch.zeros(4, dtype=torch.long), 16, 2, should_stop=lambda: False)
    assert timed.kernels_per_step is None and len(timed.samples_tokens_per_s) == 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_a_captured_graph_has_one_node_per_kernel():
    x = torch.randn(256, device="cuda")
    torch.cuda.synchronize()
    graph, kept = kernels.new_graph()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        (x * 2).add_(1)  # warm-up off the main stream, as torch.cuda.graph wants
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        y = x * 2  # one kernel
        y.add_(1)  # another
    if kept:
        graph.instantiate()
        assert kernels.graph_nodes(graph) == 2
    count, how = kernels.count_step(lambda: (x * 2).add_(1), torch.device("cuda"))
    assert (count, how) == (2, kernels.CUDA_KERNELS)


class CountingDecoder:
    """The timing protocol's `pos` and `step`: a step is two ops and moves one position on."""

    def __init__(self):
        self.pos, self.x = 5, torch.randn(4)

    def step(self, token):
        self.pos += 1
        return (self.x * 2).add_(1)


def test_per_step_takes_a_graphs_count_or_profiles_one_step_from_the_depth(monkeypatch):
    cpu, synced = torch.device("cpu"), []
    decoder = CountingDecoder()
    graphed = Timing([10.0], "CUDA graph", kernels_per_step=42.0)
    assert kernels.per_step(decoder, 3, graphed, torch.zeros(1), cpu, lambda: None) == (
        42.0,
        kernels.GRAPH_NODES,
    )
    assert decoder.pos == 5  # nothing stepped
    count, how = kernels.per_step(decoder, 3, Timing([10.0]), torch.zeros(1), cpu, lambda: synced.append(1))
    assert (count, how) == (2.0, kernels.CPU_OPS) and decoder.pos == 3 and synced

    def no_profiler(step, device):
        raise RuntimeError("CUPTI could not be loaded")

    monkeypatch.setattr(kernels, "count_step", no_profiler)
    assert kernels.per_step(decoder, 3, Timing([10.0]), torch.zeros(1), cpu, lambda: None) == (None, "")
    assert decoder.pos == 3
