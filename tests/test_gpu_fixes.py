"""The smaller fixes of issue 16, on the CPU: dtype by compute capability, the NVML handle of the CUDA
device, a counter that never moves, idle power after a rest, Stop inside a repetition with the cache
always released, and the time cap per depth."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from core.gpu import context_bench, moe_bench, nvml, timing
from core.gpu.energy import EnergyMeter
from core.gpu.models import AttentionDecoder, build
from core.gpu.presets import PRESETS
from tests.fake_nvml import FakeNvml

TINY = PRESETS["tiny"]
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def env():
    return timing.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))


@pytest.mark.parametrize(
    ("capability", "dtype"),
    [((7, 0), torch.float16), ((7, 5), torch.float16), ((8, 0), torch.bfloat16), ((8, 9), torch.bfloat16),
     ((9, 0), torch.bfloat16), (None, torch.float32)],
)  # fmt: skip
def test_bf16_only_where_the_tensor_cores_have_it(capability, dtype):
    assert timing.pick_dtype(capability) == dtype  # Volta/Turing emulate bf16: fp16 there


@pytest.mark.parametrize(("capability", "itemsize"), [((7, 5), 2), ((9, 0), 2)])
def test_the_page_sizes_models_in_the_dtype_the_benchmark_will_pick(monkeypatch, capability, itemsize):
    asked = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda i: asked.append(i) or capability)
    assert timing.run_dtype(True) == timing.pick_dtype(capability)  # as make_env: CUDA device 0
    assert timing.run_dtype(True).itemsize == itemsize and asked == [0, 0]
    assert timing.run_dtype(False) == torch.float32 and asked == [0, 0]  # the CPU asks no card


def test_a_readers_card_the_server_cannot_see_is_sized_in_two_bytes(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the public page's home command
    assert timing.run_dtype(True).itemsize == 2 and timing.run_dtype(False).itemsize == 4


class TwoCards(FakeNvml):
    """Two GPUs; NVML index 0 is the one CUDA does NOT use (CUDA ordered them by speed)."""

    BUS = {"00000000:01:00.0": 0, "00000000:41:00.0": 1}
    UUID = {"GPU-aaaa": 0, "GPU-bbbb": 1}

    def __init__(self, **kw):
        super().__init__(device_count=2, **kw)

    def nvmlDeviceGetHandleByPciBusId(self, bus_id):  # noqa: N802 — NVML's names
        self._call("nvmlDeviceGetHandleByPciBusId")
        if bus_id not in self.BUS:
            raise self.NVMLError("Not Found")
        return self.BUS[bus_id]

    def nvmlDeviceGetHandleByUUID(self, uuid):  # noqa: N802
        self._call("nvmlDeviceGetHandleByUUID")
        if uuid not in self.UUID:
            raise self.NVMLError("Not Found")
        return self.UUID[uuid]


def test_the_nvml_handle_is_the_cuda_devices_card():
    assert nvml.open_gpu(TwoCards(), 0, pci_bus_id="00000000:41:00.0").handle == 1
    assert nvml.open_gpu(TwoCards(), 0, pci_bus_id="00000000:99:00.0", uuid="GPU-bbbb").handle == 1  # by UUID
    assert nvml.open_gpu(TwoCards(), 0, pci_bus_id=None, uuid=None).handle == 0  # no CUDA: NVML's index
    assert (
        nvml.open_gpu(FakeNvml(), 0, pci_bus_id="00000000:41:00.0").handle == 0
    )  # bindings without the call


def test_probe_asks_for_the_cuda_devices_card(monkeypatch):
    monkeypatch.setattr(nvml, "cuda_pci_bus_id", lambda i=0: "00000000:41:00.0")
    monkeypatch.setattr(nvml, "cuda_uuid", lambda i=0: None)
    fake = TwoCards()
    assert nvml.probe(fake).available and "nvmlDeviceGetHandleByPciBusId" in fake.calls


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_counter_that_never_moves_is_not_zero_joules():
    clock = Clock()
    meter = EnergyMeter(lambda: 5e6, lambda: 80.0, clock=clock, background=False)
    meter.begin()
    for t in (1.0, 2.0):
        clock.now = t
        meter.record()
    clock.now = 3.0
    reading = meter.end()
    assert reading.method == "sampled power" and reading.joules == pytest.approx(240.0)
    stuck = EnergyMeter(lambda: 5e6, None, clock=clock, background=False)
    stuck.begin()
    clock.now = 10.0
    assert stuck.end() is None  # nothing else to read: no reading, never 0 J


def test_idle_is_read_after_a_rest(env):
    events = []
    meter = EnergyMeter(lambda: 1e6, lambda: 30.0, interval_s=0.01)
    meter.begin = lambda real=meter.begin: (events.append("idle window"), real())[1]
    preset = dataclasses.replace(TINY, idle_seconds=0.05, rest_seconds=0.1, energy_seconds=0.01)

    def progress(fraction, message):
        events.append(message)

    result = moe_bench.run_moe(preset, env, timing.Bandwidth(1e10, 1e9, "t"), progress=progress, meter=meter)
    first = events.index("idle window")
    assert any(m.startswith("resting") for m in events[:first])  # the rest comes before the idle window
    assert result.idle_watts == pytest.approx(30.0)


def test_stop_is_checked_inside_a_repetition():
    model = build("attention", TINY, "cpu", torch.float32)
    model.allocate(64)
    model.fill(8)
    calls = []
    real = model.step
    model.step = lambda t: (calls.append(1), real(t))[1]
    tokens = timing.random_tokens(TINY, torch.device("cpu"))
    with pytest.raises(timing.Stopped):
        timing.time_decode(model, 8, tokens, 16, 0, 3, lambda: None, should_stop=lambda: len(calls) >= 5)
    assert len(calls) == 5  # stopped after the fifth step, not at the end of the repetition


@pytest.mark.parametrize("budget", [None, 1024**2])
def test_stop_always_releases_the_cache(env, monkeypatch, budget):
    released = []
    real = AttentionDecoder.release
    monkeypatch.setattr(AttentionDecoder, "release", lambda self: (released.append(1), real(self))[1])
    steps = []
    real_step = AttentionDecoder.step

    def step(self, token):
        steps.append(1)
        return real_step(self, token)

    monkeypatch.setattr(AttentionDecoder, "step", step)
    result = context_bench.run_context(
        TINY,
        env,
        timing.Bandwidth(1e10, 1e9, "t"),
        budget,
        kinds=("attention",),
        should_stop=lambda: len(steps) > 70,
    )
    assert result.stopped and released and result.series[0].points
    assert result.series[0].pinned_after_release is None  # no CUDA: torch cannot say


def test_each_depth_has_a_time_cap(env):
    preset = dataclasses.replace(TINY, depth_seconds=1e-9, repeats=5, depths=(0, 256))
    result = context_bench.run_context(preset, env, timing.Bandwidth(1e10, 1e9, "t"), kinds=("attention",))
    for p in result.series[0].points:
        assert p.capped and len(p.samples_tokens_per_s) == 1  # one (cut-short) repetition, then on
    assert result.series[0].points[0].graph_note == "CUDA graphs need a CUDA device"


def test_cpu_timing_says_why_there_is_no_graph(env):
    model = build("state", TINY, "cpu", torch.float32)
    tokens = timing.random_tokens(TINY, torch.device("cpu"))
    measured = timing.time_at_depth(model, "state", TINY, env, tokens, 16)
    assert measured.graphed is None and measured.best is measured.eager and not measured.capped
    assert len(measured.eager.samples_tokens_per_s) == TINY.repeats


def test_eager_and_graphed_side_by_side_only_when_there_is_a_graph(env):
    from core.gpu import export, report

    result = context_bench.run_context(
        dataclasses.replace(TINY, depths=(0, 256)), env, timing.Bandwidth(1e10, 1e9, "t"), kinds=("state",)
    )
    assert "CUDA-graph tokens/s" not in report.context_rows(result)[0]  # the CPU page is unchanged
    for p in result.series[0].points:  # as a CUDA run would record it
        p.graphed_tokens_per_s, p.timing = 2 * p.eager_tokens_per_s, "CUDA graph"
    row = report.context_rows(result)[0]
    assert row["eager tokens/s"] == report.rate(result.series[0].points[0].eager_tokens_per_s)
    assert row["CUDA-graph tokens/s"] == report.rate(result.series[0].points[0].graphed_tokens_per_s)
    assert "CUDA graph" in export.to_csv(result)
    # the page's first table keeps five columns (a phone's width); the graphed figure is its headline
    headline = report.context_headline_rows(result)[0]
    assert list(headline) == list(report.HEADLINE_COLUMNS)
    assert headline["tokens/s (mean ± std)"].startswith(report.rate(result.series[0].points[0].tokens_per_s))


def test_the_headline_table_names_host_bytes_only_when_something_spilled(env):
    from core.gpu import report

    result = context_bench.run_context(
        dataclasses.replace(TINY, depths=(0, 256)),
        env,
        timing.Bandwidth(1e10, 1e9, "t"),
        kinds=("attention",),
    )
    assert "streamed from host" not in report.context_headline_rows(result)[0]
    result.series[0].points[-1].spilled_bytes = 3 * 2**20  # as a run past the budget records it
    rows = report.context_headline_rows(result)
    assert [r["streamed from host"] for r in rows] == ["—", "3.0 MiB"]
    assert len(rows) == len(report.context_rows(result)) == 2


def test_the_chart_draws_the_eager_line_only_beside_a_graphed_one(env):
    from core.figures.gpu import context_speed_figure

    result = context_bench.run_context(
        dataclasses.replace(TINY, depths=(0, 256)), env, timing.Bandwidth(1e10, 1e9, "t"), kinds=("state",)
    )
    names = [t.name for t in context_speed_figure(result).data]
    assert not any("eager" in n for n in names)  # a CPU run's chart is unchanged
    for p in result.series[0].points:
        p.graphed_tokens_per_s = 2 * p.eager_tokens_per_s
    assert "fixed state: eager (no CUDA graph)" in [t.name for t in context_speed_figure(result).data]


class EagerGraph:
    """Stands in for a captured CUDA graph on the CPU: replay() runs the same steps eagerly."""

    def __init__(self, model, depth, tokens, n_steps):
        self.args, self.replays = (model, depth, tokens, n_steps), 0

    def replay(self):
        from core.gpu.graphs import _run_steps

        self.replays += 1
        _run_steps(*self.args)


def test_graphed_timing_replays_once_per_repetition(monkeypatch):
    from core.gpu import graphs

    made = []
    monkeypatch.setattr(graphs, "capture", lambda *a: made.append(EagerGraph(*a)) or made[-1])
    model = build("attention", TINY, "cpu", torch.float32)
    model.allocate(64)
    model.fill(8)
    tokens = timing.random_tokens(TINY, torch.device("cpu"))
    timed = graphs.time_graphed(model, 8, tokens, 16, 3, should_stop=lambda: False)
    assert timed.method == "CUDA graph" and len(timed.samples_tokens_per_s) == 3 and not timed.capped
    assert made[0].replays == 1 + 3 and model.pos == 8  # one warm replay, then one per repetition
    capped = graphs.time_graphed(model, 8, tokens, 16, 3, should_stop=lambda: False, deadline=0.0)
    assert capped.capped and len(capped.samples_tokens_per_s) == 1
    with pytest.raises(timing.Stopped):
        graphs.time_graphed(model, 8, tokens, 16, 3, should_stop=lambda: True)
