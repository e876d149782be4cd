"""The validator (bench.gpu_validate) trusts a newer way in check 5 only on check 6's word, and check 6 runs in
its own process under a hard limit: a crash, a hang or a mismatch there leaves the way out."""

from __future__ import annotations

import json
import sys
import time

import pytest

from bench.gpu_validate import child_run, preflight, runner, step6_newer_kernels, step7_end_to_end
from bench.gpu_validate.verdicts import expect, range_text

EVERY_WAY = ["moe:grouped", "moe:triton", "state:triton"]


def test_every_newer_way_is_denied_before_check_6_has_said_anything(validator):
    assert validator.skip_ways == EVERY_WAY == list(runner.NEWER_WAYS)
    command = step7_end_to_end.bench_command(validator, validator.folder / "bench.json")
    assert command[command.index("--skip-ways") + 1] == ",".join(EVERY_WAY)


def _child(exit_status=0, timed_out=False, killed=False):
    return child_run.ChildRun(exit_status, "output", 1.0, timed_out, killed)


def _write(tmp_path, record):
    file = tmp_path / "child.json"
    if record is not None:
        file.write_text(json.dumps({"checks": {"6 newer kernels": record}}))
    return file


WHOLE = {"data": {"skip_ways": ["moe:triton", "state:triton"]}, "expectations": []}


@pytest.mark.parametrize(
    ("run", "record", "skipped"),
    [
        (_child(), WHOLE, ["moe:triton", "state:triton"]),  # check 6 finished: its word is taken
        (_child(exit_status=-11), None, EVERY_WAY),  # crashed before writing its record
        (_child(exit_status=1), {"error": "RuntimeError: CUDA error", "data_so_far": {}, "expectations": []},
         EVERY_WAY),  # raised mid-check: no verdict
        (_child(exit_status=-15, timed_out=True), {"running": True, "data_so_far": {"x": 1}, "expectations": []},
         EVERY_WAY),  # hung, stopped at its limit with figures so far
        (_child(timed_out=True, killed=True), WHOLE, EVERY_WAY),  # a verdict from a process that was killed
    ],
    ids=["finished", "crashed", "raised", "hung", "killed"],
)  # fmt: skip
def test_check_6_s_verdict_is_taken_only_from_a_process_that_finished(
    validator, tmp_path, run, record, skipped
):
    result = step6_newer_kernels.child_record(validator, run, _write(tmp_path, record), 30.0)
    assert validator.skip_ways == skipped == result["skip_ways"]
    assert result["process"]["exit_status"] == run.exit_status
    finished = [x for x in result["expectations"] if x["what"].startswith("check 6's process")]
    assert [x["status"] for x in finished] == ["PASS" if not run.timed_out else "FAIL",
                                              "PASS" if skipped != EVERY_WAY else "FAIL"]  # fmt: skip
    if skipped == EVERY_WAY:
        assert "error" in result
    if record and record.get("data_so_far"):
        assert result["data_so_far"] == {"x": 1}  # what it measured before the limit is kept


def test_a_child_that_hangs_is_stopped_at_its_limit():
    t0 = time.perf_counter()
    run = child_run.run_with_limit([sys.executable, "-c", "import time; time.sleep(60)"], 1.0, 5.0)
    assert run.timed_out and not run.killed and run.exit_status == -15
    assert time.perf_counter() - t0 < 15


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace():
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    seen = []
    t0 = time.perf_counter()
    run = child_run.run_with_limit([sys.executable, "-c", code], 1.5, 1.0, echo=seen.append)
    assert run.timed_out and run.killed and run.exit_status == -9
    assert seen == ["ready"] and "ready" in run.output
    assert time.perf_counter() - t0 < 15


def test_a_child_that_finishes_keeps_its_status_and_output():
    run = child_run.run_with_limit([sys.executable, "-c", "print('done'); raise SystemExit(3)"], 30.0, 1.0)
    assert (run.exit_status, run.output.strip(), run.timed_out, run.killed) == (3, "done", False, False)


def test_an_expectation_without_a_range_is_info_never_pass():
    assert expect("x", 5.0)["status"] == "INFO"
    assert expect("x", 5.0, needs_cuda=False, cuda=False)["status"] == "INFO"
    assert expect("x", 5.0, 1, None)["status"] == "PASS"
    assert expect("x", None)["status"] == "FAIL"  # not measured at all is still a failure
    assert expect("x", 5.0, cuda=False)["status"] == "SKIP"
    assert range_text(expect("x", 5.0)) == "no range (recorded only)"


def test_the_summary_counts_info(validator):
    validator.out["checks"]["x"] = {"expectations": [expect("a", 1.0), expect("b", 1.0, 0, 2)]}
    validator.save()
    assert validator.out["summary"] == {"PASS": 1, "FAIL": 0, "SKIP": 0, "INFO": 1}


def test_the_preflight_without_cuda_records_the_toolchain_and_says_why_it_launched_nothing():
    import torch

    from core.gpu.presets import PRESETS

    result = preflight.run(PRESETS["tiny"], torch.device("cpu"), torch.float32)
    assert result["skipped"] == preflight.NO_CUDA and result["ways"] == {}
    tools = result["toolchain"]
    assert {"triton", "c_compiler", "c_compiler_version", "libcuda", "libcuda_driver_version"} <= set(tools)
    assert preflight.NO_CUDA in preflight.summary(result)


@pytest.mark.parametrize(
    ("result", "ok"),
    [
        ({"captured": True, "eager_difference": 0.004, "graphed_difference": 0.004}, True),
        ({"captured": True, "eager_difference": 0.004, "graphed_difference": 0.4}, False),  # replay differs
        ({"launched": True, "captured": False, "eager_difference": 0.0, "error": "capture failed"}, False),
        ({"launched": False, "captured": False, "error": "illegal memory access"}, False),
    ],
    ids=["good", "graph-computes-otherwise", "capture-fails", "launch-fails"],
)
def test_a_way_passes_the_preflight_only_launched_captured_and_matching(result, ok):
    assert preflight.passed(result) is ok


def test_a_preflight_launch_that_raises_is_kept_in_words_and_fails_the_way():
    import torch

    def crashing() -> torch.Tensor:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    result = preflight.launch_and_capture(crashing, torch.ones(3))
    assert not result["launched"] and "illegal memory access" in result["error"]
    assert not preflight.passed(result)


def test_the_preflight_compares_each_in_place_moe_way_with_the_gathered_one(monkeypatch):
    """Off CUDA nothing can be captured, so the launcher is stood in for: what reaches it is the
    layer running the way under test, and the layer is back on the gathered way afterwards."""
    import torch

    from core.gpu.decode.models import moe_layer
    from core.gpu.presets import PRESETS

    seen = []

    def launch(run, reference):
        out = run()
        diff = float((out - reference).abs().max())
        seen.extend([diff, layer.way])  # the way under test is the one launched
        return {"captured": True, "eager_difference": diff, "graphed_difference": diff}

    monkeypatch.setattr(preflight, "launch_and_capture", launch)
    torch.manual_seed(0)
    layer = moe_layer(PRESETS["tiny"], "cpu", torch.float32)
    h = torch.randn(1, PRESETS["tiny"].d_model)
    result = preflight._moe_way(layer, "grouped", h, layer(h))
    assert preflight.passed(result) and seen[0] < 1e-5 and seen[1] == "grouped" and layer.way == "gather"
