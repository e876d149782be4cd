"""The validator (bench.gpu_validate) keeps what it measured when a check dies on a GPU: the first CUDA error
that poisons the process (an illegal access) must not take the run's figures with it."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from bench.gpu_validate import (
    decode_runs,
    preflight,
    runner,
    step1_decode,
    step6_newer_kernels,
    step7_end_to_end,
)
from core.gpu.decode import ffn
from core.gpu.presets import PRESETS
from core.gpu.timing import graphs
from core.gpu.timing.bench_env import BenchEnv


def test_a_check_that_dies_keeps_its_figures_so_far_and_the_file_is_written(validator, tmp_path, monkeypatch):
    """Check 1 itself: its first run measures, its second hits a sticky CUDA error (which check 1 does
    not swallow for an established run); what the first run measured is on disk."""
    runs = []

    def time_decode(data, kind, ffn, depths, preset, tokens, way=None):
        runs.append((kind, ffn))
        if len(runs) == 2:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        data[decode_runs.run_key(kind, ffn, depths[0], way)] = {"graphed_tokens_per_s": 123.0}

    monkeypatch.setattr(runner, "_bandwidth", lambda env, nbytes: SimpleNamespace(device_bytes_per_s=1e9))
    monkeypatch.setattr(validator, "time_decode", time_decode)
    validator.run("1 decode", lambda: step1_decode.run(validator))
    record = json.loads((tmp_path / "validate.json").read_text())["checks"]["1 decode"]
    assert "illegal memory access" in record["error"]
    assert runs == [("attention", "dense"), ("state", "dense")]  # the established runs come first
    assert record["data_so_far"]["attention/dense/d0"] == {"graphed_tokens_per_s": 123.0}
    assert record["expectations"][0]["status"] == "FAIL"


def test_clean_up_after_a_sticky_error_does_not_raise_it_again(monkeypatch, capsys):
    def poisoned() -> None:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(torch.cuda, "empty_cache", poisoned)
    BenchEnv.free_memory(SimpleNamespace(device=torch.device("cuda")))  # no CUDA needed: it only frees
    assert "illegal memory access" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("capability", "runs"), [((9, 0), True), ((10, 0), True), ((8, 9), False), ((12, 0), False)]
)
def test_the_grouped_gemm_is_offered_only_where_it_has_a_graphable_kernel(monkeypatch, capability, runs):
    """Elsewhere torch._grouped_mm loops over groups with their ends read on the host: no graph holds it."""
    if not hasattr(torch, "_grouped_mm"):
        pytest.skip("this PyTorch has no _grouped_mm")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    assert ffn.grouped_mm_available(torch.device("cuda"), torch.bfloat16, 1024, 256) is runs


def test_an_error_at_the_deep_run_keeps_the_depth_0_figures():
    data = {decode_runs.run_key("state", "dense", 0, "triton"): {"graphed_tokens_per_s": 900.0}}
    key = decode_runs.failed_key(data, "state", "dense", (0, 65536), "triton")
    assert key == decode_runs.run_key("state", "dense", 65536, "triton")
    assert decode_runs.failed_key({}, "state", "dense", (0, 65536), "triton") == decode_runs.run_key(
        "state", "dense", 0, "triton"
    )


def _measured(depth: int) -> dict:
    """What _time_decode stores for one run at one depth (figures of a plausible shape)."""
    return {"kernels_per_step": 40, "host_blocking_calls": {}, "eager_tokens_per_s": 100.0,
            "graphed_tokens_per_s": 300.0, "roofline_tokens_per_s": 400.0,
            "bytes_per_step": {"total": 1e6 if depth else 2e6}}  # fmt: skip


@pytest.fixture()
def fake_runs(validator, monkeypatch):
    """Checks 1 and 6 with their timing faked: every run is recorded as (kind, ffn, way); a run of a
    feed-forward kind in `fail` raises as a crashing kernel would; the one-layer helpers are stubbed."""
    runs, fail, parity = [], set(), {"grouped": 0.001}

    def time_decode(data, kind, ffn, depths, preset, tokens, way=None):
        runs.append((kind, ffn, way))
        if ffn in fail:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        for depth in depths:
            data[decode_runs.run_key(kind, ffn, depth, way)] = _measured(depth)

    monkeypatch.setattr(runner, "_bandwidth", lambda env, n: SimpleNamespace(device_bytes_per_s=1e9))
    monkeypatch.setattr(validator, "time_decode", time_decode)
    monkeypatch.setattr(step6_newer_kernels, "way_available", lambda way, *args: way in ("gather", "grouped"))
    monkeypatch.setattr(step6_newer_kernels, "_moe_parity", lambda preset, env: dict(parity))
    monkeypatch.setattr(step6_newer_kernels, "_state_parity", lambda preset, env: None)
    monkeypatch.setattr(
        step6_newer_kernels, "_moe_layer_speeds", lambda preset, env: {"dense": {"weight_bytes_per_s": 1e9}}
    )
    return SimpleNamespace(runs=runs, fail=fail, parity=parity)


def _record(tmp_path, name):
    return json.loads((tmp_path / "validate.json").read_text())["checks"][name]


def test_check_1_runs_only_the_ways_that_ran_on_the_first_h200(validator, fake_runs, tmp_path):
    validator.run("1 decode", lambda: step1_decode.run(validator))
    assert "error" not in _record(tmp_path, "1 decode")
    assert fake_runs.runs == [("attention", "dense", None), ("state", "dense", None),
                              ("attention", "dense_moe_size", None), ("attention", "moe", None)]  # fmt: skip


NOT_RUN_HERE = ["moe:triton", "state:triton"]  # the fakes run only the grouped GEMM of the newer ways


@pytest.mark.parametrize(
    ("fail", "grouped_parity", "skipped"),
    [(set(), 0.001, NOT_RUN_HERE), ({"moe_grouped"}, 0.001, ["moe:grouped", *NOT_RUN_HERE]),
     (set(), 0.5, ["moe:grouped", *NOT_RUN_HERE])],
    ids=["all-good", "grouped-crashes", "grouped-computes-otherwise"],
)  # fmt: skip
def test_a_newer_way_that_fails_in_check_6_is_kept_out_of_check_5(
    validator, fake_runs, tmp_path, fail, grouped_parity, skipped
):
    validator.run("1 decode", lambda: step1_decode.run(validator))
    fake_runs.runs.clear()
    fake_runs.fail.update(fail)
    fake_runs.parity["grouped"] = grouped_parity
    validator.run("6 newer kernels", lambda: step6_newer_kernels.run_here(validator))
    record = _record(tmp_path, "6 newer kernels")
    assert "error" not in record, record.get("traceback")
    assert fake_runs.runs == [("attention", "moe_grouped", None)]  # check 1's runs are its references
    assert record["data"]["skip_ways"] == skipped == validator.skip_ways
    command = step7_end_to_end.bench_command(validator, tmp_path / "bench.json")
    assert command[command.index("--skip-ways") + 1] == ",".join(skipped)  # a way not run is skipped too
    if fail:  # the crash is a finding of its own way, beside the references
        depth = PRESETS[validator.s.preset].moe_depth
        assert "illegal memory access" in record["data"][f"attention/moe_grouped/d{depth}"]["error"]
        assert record["data"]["moe_fastest"] == "moe"


def test_check_6_alone_measures_its_own_references(validator, fake_runs, tmp_path):
    validator.run("6 newer kernels", lambda: step6_newer_kernels.run_here(validator))
    assert "error" not in _record(tmp_path, "6 newer kernels")
    assert fake_runs.runs == [("state", "dense", None), ("attention", "dense_moe_size", None),
                              ("attention", "moe", None), ("attention", "moe_grouped", None)]  # fmt: skip


def test_a_capture_that_fails_to_end_leaves_the_stream_it_found(monkeypatch):
    """torch.cuda.graph ends the capture before it leaves its side stream; when ending raises, every
    capture here (the decode steps and the probes' graphed copies) puts the caller's stream back."""
    current = ["default"]

    class FailingGraph:
        def __init__(self, graph, capture_error_mode="global"):
            self.mode = capture_error_mode

        def __enter__(self):
            current[0] = "capture side stream"

        def __exit__(self, *exc):
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")

    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: current[0])
    monkeypatch.setattr(torch.cuda, "set_stream", lambda stream: current.__setitem__(0, stream))
    monkeypatch.setattr(torch.cuda, "graph", FailingGraph)
    ran = []
    with pytest.raises(RuntimeError, match="not permitted"):
        with graphs.capturing(object()):
            ran.append(current[0])
    assert ran == ["capture side stream"] and current == ["default"]


@pytest.mark.parametrize(
    ("state_run", "state_parity", "moe_parity", "skipped"),
    [
        ({"graphed_tokens_per_s": 900.0}, 0.001, 0.001, ["moe:grouped"]),
        ({"error": "RuntimeError: illegal memory access"}, 0.001, 0.001, ["moe:grouped", "state:triton"]),
        ({"graphed_tokens_per_s": 900.0}, 0.001, 0.5, ["moe:grouped", "moe:triton"]),
        ({"graphed_tokens_per_s": 900.0}, "no Triton here", 0.001, ["moe:grouped", "state:triton"]),
    ],
    ids=["both-good", "state-crashes", "moe-computes-otherwise", "state-unchecked"],
)
def test_a_failing_triton_kernel_keeps_only_its_own_part_out_of_check_5(
    state_run, state_parity, moe_parity, skipped
):
    """The MoE's Triton kernels and the fused state step are both called 'triton': the skip list names
    the part, so one failing cannot keep the other out of the end-to-end benchmark (the grouped GEMM,
    not run here, stays out: default-deny)."""
    preset = PRESETS["tiny"]
    runs = {decode_runs.run_key("state", "dense", 0, "triton"): state_run,
            f"attention/moe_triton/d{preset.moe_depth}": _measured(preset.moe_depth)}  # fmt: skip
    data = {"state_parity": state_parity, "moe_parity": {"triton": moe_parity}}
    assert step6_newer_kernels._ways_to_skip(runs, data, preset, True, ["moe_triton"]) == skipped


def test_a_way_that_fails_the_preflight_is_never_timed(validator, fake_runs, tmp_path, monkeypatch):
    """The first launch of a new kernel is where a sticky CUDA error is likeliest: one that fails to
    launch, capture or match in the preflight is not run in a decode model, and stays out of check 5."""
    monkeypatch.setattr(preflight, "run", lambda *args: {
        "toolchain": {"triton": None, "c_compiler_version": None, "libcuda_driver_version": None},
        "ways": {"moe:grouped": {"launched": True, "captured": False, "error": "capture failed"}}})  # fmt: skip
    validator.run("1 decode", lambda: step1_decode.run(validator))
    fake_runs.runs.clear()
    validator.run("6 newer kernels", lambda: step6_newer_kernels.run_here(validator))
    record = _record(tmp_path, "6 newer kernels")
    assert "error" not in record, record.get("traceback")
    assert fake_runs.runs == []  # the grouped GEMM was not timed
    assert record["data"]["skip_ways"] == ["moe:grouped", *NOT_RUN_HERE]
    preflight_verdict = next(
        x for x in record["expectations"] if x["what"].startswith("preflight: moe:grouped")
    )
    assert preflight_verdict["value"] == 0.0
