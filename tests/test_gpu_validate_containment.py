"""bench/gpu_validate.py keeps what it measured when a check dies on a GPU: the first CUDA error
that poisons the process (an illegal access) must not take the run's figures with it."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from bench import gpu_validate
from core.gpu import ffn
from core.gpu.cli_io import StopOnSignal
from core.gpu.timing import BenchEnv, make_env


@pytest.fixture()
def validator(tmp_path):
    env = make_env("cpu")
    with StopOnSignal() as stop:
        yield gpu_validate.Validator(env, gpu_validate.DRY, tmp_path, 60.0, stop)
    env.close()


def test_a_check_that_dies_keeps_its_figures_so_far_and_the_file_is_written(validator, tmp_path, monkeypatch):
    """Check 1 itself: its first run measures, its second hits a sticky CUDA error (which check 1 does
    not swallow for an established run); what the first run measured is on disk."""
    runs = []

    def time_decode(data, kind, ffn, depths, preset, tokens, way=None):
        runs.append((kind, ffn))
        if len(runs) == 2:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        data[gpu_validate._key(kind, ffn, depths[0], way)] = {"graphed_tokens_per_s": 123.0}

    monkeypatch.setattr(
        gpu_validate, "_bandwidth", lambda env, nbytes: SimpleNamespace(device_bytes_per_s=1e9)
    )
    monkeypatch.setattr(validator, "_time_decode", time_decode)
    validator.run("1 decode", validator.decode)
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
    data = {gpu_validate._key("state", "dense", 0, "triton"): {"graphed_tokens_per_s": 900.0}}
    key = gpu_validate._failed_key(data, "state", "dense", (0, 65536), "triton")
    assert key == gpu_validate._key("state", "dense", 65536, "triton")
    assert gpu_validate._failed_key({}, "state", "dense", (0, 65536), "triton") == gpu_validate._key(
        "state", "dense", 0, "triton"
    )
