"""Keeping the fastest way a card runs a step (core.gpu.timing.ways): the fastest way is kept, a way that
fails is reported and left out, out of memory and Stop are not swallowed, off CUDA nothing is
tried; both benchmarks record the choice and the page says it in words."""

from __future__ import annotations

import dataclasses
import types

import pytest
import torch

from core.gpu.decode import ffn
from core.gpu.decode.models import StateDecoder, build
from core.gpu.output.report import moe_way_note, state_way_note
from core.gpu.presets import PRESETS
from core.gpu.suites import context_bench, moe_bench
from core.gpu.suites.context_bench import ContextResult, Series
from core.gpu.suites.moe_bench import MoeResult, MoeRow
from core.gpu.timing import bandwidth, bench_env, graphs, ways
from core.gpu.timing.errors import error_line
from core.gpu.timing.steps import Stopped, Timing
from tests.core.gpu.fake_nvml import FakeNvml

TINY = PRESETS["tiny"]
BW = bandwidth.Bandwidth(1e10, 1e9, "test")
pytestmark = pytest.mark.usefixtures("one_thread")


class _FakeCudaEnv:
    """What choose_fastest asks of a BenchEnv, with the device type of a GPU (the model stays on the CPU)."""

    device = types.SimpleNamespace(type="cuda")

    def free_memory(self) -> None:
        pass


def _fake_trials(monkeypatch, speeds: dict[str, float | Exception]) -> list[str]:
    """Every way in `speeds` can run; time_graphed answers `speeds[way]` tokens/s (or raises it)."""
    seen: list[str] = []

    def time_graphed(model, depth, tokens, n_steps, repeats, should_stop, deadline=None):
        seen.append(model.way)
        if isinstance(speeds[model.way], Exception):
            raise speeds[model.way]
        return Timing([speeds[model.way]] * repeats, "CUDA graph")

    monkeypatch.setattr(graphs, "time_graphed", time_graphed)
    monkeypatch.setattr(ffn, "way_available", lambda way, *args: way in speeds)
    monkeypatch.setattr(StateDecoder, "kernel_ways", lambda self: list(speeds))
    return seen


def test_ways_the_benchmark_was_told_to_skip_are_not_tried_but_the_pytorch_way_always_is(monkeypatch):
    seen = _fake_trials(monkeypatch, {"gather": 300.0, "grouped": 500.0, "triton": 900.0})
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    told = dataclasses.replace(TINY, skip_ways=("triton", "gather"))
    way, trials = ways.choose_fastest(model, told, _FakeCudaEnv(), torch.arange(8), 4)
    assert seen == ["gather", "grouped"] and way == "grouped" and set(trials) == {"gather", "grouped"}


@pytest.mark.parametrize(
    ("kind", "skip", "tried"),
    [
        ("attention", ("state:triton",), ["gather", "grouped", "triton"]),  # not the MoE's Triton
        ("attention", ("moe:triton",), ["gather", "grouped"]),
        ("attention", ("triton",), ["gather", "grouped"]),  # bare: that way in every part
        ("state", ("moe:triton",), ["torch", "triton"]),
        ("state", ("state:triton",), []),  # one way left: kept untried
        ("state", ("triton",), []),
    ],
)
def test_a_skip_list_names_a_way_in_its_part_or_bare_in_every_part(monkeypatch, kind, skip, tried):
    here = ["gather", "grouped", "triton"] if kind == "attention" else ["torch", "triton"]
    seen = _fake_trials(monkeypatch, dict.fromkeys(here, 100.0))
    model = build(kind, TINY, "cpu", torch.float32, ffn="moe" if kind == "attention" else "dense")
    told = dataclasses.replace(TINY, skip_ways=skip)
    way, trials = ways.choose_fastest(model, told, _FakeCudaEnv(), torch.arange(8), 4)
    assert seen == tried == list(trials) and way == here[0]


def test_the_fastest_way_is_kept_and_a_failing_way_is_reported(monkeypatch):
    seen = _fake_trials(
        monkeypatch, {"gather": 300.0, "grouped": RuntimeError("CUTLASS says no\nmore"), "triton": 900.0}
    )
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    way, trials = ways.choose_fastest(model, TINY, _FakeCudaEnv(), torch.arange(8), 4)
    assert seen == ["gather", "grouped", "triton"]
    assert way == "triton" and all(layer.way == "triton" for layer in model.moe_layers())
    assert trials == {"gather": 300.0, "grouped": "RuntimeError: CUTLASS says no", "triton": 900.0}
    assert model.cache.dev == []  # the trial's cache is released


def test_the_state_model_keeps_its_faster_way(monkeypatch):
    _fake_trials(monkeypatch, {"torch": 500.0, "triton": 400.0})
    model = build("state", TINY, "cpu", torch.float32)
    assert ways.choose_fastest(model, TINY, _FakeCudaEnv(), torch.arange(8), 0) == (
        "torch",
        {"torch": 500.0, "triton": 400.0},
    )
    assert model.way == "torch" and model.state == []


def test_out_of_memory_in_a_trial_keeps_the_first_way_untried(monkeypatch):
    _fake_trials(monkeypatch, {"gather": 300.0, "grouped": torch.OutOfMemoryError("CUDA out of memory")})
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    assert ways.choose_fastest(model, TINY, _FakeCudaEnv(), torch.arange(8), 4) == ("gather", None)
    assert model.way == "gather" and model.cache.dev == []


def test_stop_during_the_trials_gives_the_trial_cache_back(monkeypatch):
    _fake_trials(monkeypatch, {"gather": 300.0, "triton": 900.0})
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    with pytest.raises(Stopped):
        ways.choose_fastest(model, TINY, _FakeCudaEnv(), torch.arange(8), 4, should_stop=lambda: True)
    assert model.cache.dev == []


def test_off_cuda_the_first_way_is_kept_untried(monkeypatch):
    seen = _fake_trials(monkeypatch, {"gather": 1.0, "grouped": 2.0})
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe_grouped")
    env = types.SimpleNamespace(device=torch.device("cpu"))
    assert ways.choose_fastest(model, TINY, env, torch.arange(8), 4) == ("gather", {})
    assert seen == [] and model.way == "gather"
    dense = build("attention", TINY, "cpu", torch.float32)
    assert dense.kernel_ways() == ["torch"] and ways.choose_fastest(dense, TINY, _FakeCudaEnv(), None, 0) == (
        "torch",
        {},
    )
    with pytest.raises(ValueError, match="only as PyTorch ops"):
        dense.use_way("triton")


@pytest.fixture
def env():
    return bench_env.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))


def test_the_moe_row_records_the_way_kept_and_its_roofline_counts_that_way_s_bytes(monkeypatch, env):
    def choose(model, preset, env, tokens, depth, should_stop):
        model.use_way("grouped")  # reads the experts in place: no gathered copy to count
        return "grouped", {"gather": 1.0, "grouped": 2.0}

    monkeypatch.setattr(ways, "choose_fastest", choose)
    dense, moe = moe_bench.run_moe(TINY, env, BW).rows
    assert dense.way is None and moe.way == "grouped" and moe.way_trials == {"gather": 1.0, "grouped": 2.0}
    grouped = build("attention", TINY, "meta", torch.float32, ffn="moe_grouped")
    assert moe.bytes_per_token == grouped.traffic(TINY.moe_depth).total
    assert moe.tokens_per_s > 0 and moe.oom_message is None


def test_the_context_bench_records_the_state_model_s_way(monkeypatch, env):
    chosen = []

    def choose(model, preset, env, tokens, depth, should_stop):
        chosen.append((model.kind, depth))
        return "torch", {"torch": 500.0, "triton": "CompilationError: no"}

    monkeypatch.setattr(ways, "choose_fastest", choose)
    monkeypatch.setattr(StateDecoder, "kernel_ways", lambda self: ["torch", "triton"])
    result = context_bench.run_context(TINY, env, BW)
    attention, state = result.series
    assert chosen == [("fixed state", TINY.depths[0])]  # attention has one way: nothing to try
    assert attention.way is None and state.way == "torch"
    assert state.way_trials["triton"] == "CompilationError: no"
    assert len(state.points) == len(TINY.depths)


def _row(way: str | None, trials: dict | None) -> MoeRow:
    return MoeRow("experts (MoE)", 10, 2, 4, 1.0, 0.1, 2.0, way=way, way_trials=trials)


def test_the_page_says_how_the_experts_were_read():
    result = MoeResult("large", "H200", 1024, "2 shared + 6 of 254 routed", None, [_row(None, None)])
    assert moe_way_note(result) is None  # the dense row, or an older saved result
    result.rows.append(_row("triton", {"gather": 337.4, "grouped": "RuntimeError: no", "triton": 905.2}))
    note = moe_way_note(result)
    assert "fused Triton kernels, the fastest" in note
    assert "gathered copy (index_select + bmm): 337.4 tokens/s" in note
    assert "grouped GEMM (torch._grouped_mm): could not run (RuntimeError: no)" in note
    cpu = MoeResult("tiny", "CPU", 64, "", None, [_row("gather", {})])
    assert "through a gathered copy" in moe_way_note(cpu) and "NVIDIA GPU" in moe_way_note(cpu)


def test_the_page_says_how_the_state_step_ran():
    def result(way, trials):
        series = Series("fixed state", 1, 1, 1, way=way, way_trials=trials)
        return ContextResult(
            "large", "H200", "bfloat16", None, 1e12, 1e10, [Series("full attention", 1, 1, 1), series]
        )

    assert state_way_note(result(None, None)) is None
    note = state_way_note(result("triton", {"torch": 297.5, "triton": 401.0}))
    assert (
        "one fused Triton kernel a layer" in note and "PyTorch ops (a dozen kernels a layer): 297.5" in note
    )
    assert "could not run (Boom)" in state_way_note(result("torch", {"torch": 297.5, "triton": "Boom"}))


def test_the_cli_prints_the_ways_tried(capsys):
    from core.gpu.device.nvml import DeviceSnapshot
    from core.gpu.output.result import RunSettings, SuiteResult
    from core.gpu.output.summary import print_summary
    from core.gpu.suites.context_bench import DepthPoint

    point = DepthPoint(depth=0, tokens_per_s=400.0, std_tokens_per_s=1.0, samples_tokens_per_s=[400.0],
                       memory_bytes=0, spilled_bytes=0, bytes_per_token=1, predicted_tokens_per_s=600.0,
                       timing="CUDA graph", eager_tokens_per_s=120.0, graphed_tokens_per_s=400.0)  # fmt: skip
    series = Series(
        "fixed state", 1, 1, 1, [point], way="triton", way_trials={"torch": 297.5, "triton": 401.0}
    )
    row = MoeRow("experts (MoE)", 10, 2, 4, 900.0, 2.0, 1000.0, timing="CUDA graph", way="triton",
                 way_trials={"gather": 337.4, "grouped": "RuntimeError: no"})  # fmt: skip
    print_summary(SuiteResult(RunSettings("cuda"), DeviceSnapshot(True, name="H200"),
                              context=ContextResult("large", "cuda", "bf16", None, 1.0, 1.0, [series]),
                              moe=MoeResult("large", "cuda", 1024, "2 + 6 of 254", None, [row])))  # fmt: skip
    out = capsys.readouterr().out
    assert "ran as triton (trials: torch 297.5 t/s, triton 401.0 t/s)" in out
    assert "experts read by triton (trials: gather 337.4 t/s, grouped failed (RuntimeError: no))" in out


def test_a_way_that_fails_without_a_message_is_named_by_its_type(monkeypatch):
    _fake_trials(monkeypatch, {"gather": 300.0, "triton": RuntimeError()})  # str() is '': no first line
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    assert ways.choose_fastest(model, TINY, _FakeCudaEnv(), torch.arange(8), 4) == (
        "gather",
        {"gather": 300.0, "triton": "RuntimeError"},
    )
    assert error_line(ValueError("first\nsecond"), 3) == "ValueError: fir"
    assert error_line(ValueError("first\nsecond"), whole=True) == "ValueError: first\nsecond"
