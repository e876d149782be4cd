"""bench/qwen35_cpu.py: the decode speed it prints sits beside a roofline computed from the same figures."""

from __future__ import annotations

import json

import pytest
import torch

from bench import qwen35_cpu
from core.plan.latency import KERNEL_FLOOR_S
from core.roofline import bandwidth_bound_tokens_per_s

pytest.importorskip("transformers")


@pytest.mark.slow
def test_tiny_run_reports_both_dtypes_against_their_roofline(tmp_path, capsys):
    out = tmp_path / "bench.json"
    args = ["--tiny", "--depth", "5", "--tokens", "3", "--repeats", "1", "--threads", "1", "--out", str(out)]
    assert qwen35_cpu.main(args) == 0
    report = json.loads(out.read_text())
    rows = {row["dtype"]: row for row in report["rows"]}
    assert set(rows) == {"float32", "bfloat16"}
    assert rows["bfloat16"]["bytes_per_token"] < rows["float32"]["bytes_per_token"]  # half the weight bytes
    for row in rows.values():
        roofline = bandwidth_bound_tokens_per_s(row["bytes_per_token"], report["copy_bandwidth"])
        assert row["roofline_tokens_per_s"] == pytest.approx(roofline)
        assert row["percent_of_roofline"] == pytest.approx(100 * row["tokens_per_s"] / roofline)
    printed = capsys.readouterr().out
    faster = max(rows.values(), key=lambda r: r["tokens_per_s"])["dtype"]
    assert f"{faster} is " in printed and "faster than" in printed


def test_verdict_names_the_faster_dtype_from_the_figures():
    rows = [
        {"dtype": "float32", "tokens_per_s": 10.0, "percent_of_roofline": 60.0},
        {"dtype": "bfloat16", "tokens_per_s": 15.0, "percent_of_roofline": 45.0, "percent_of_gemv": 90.0,
         "gemv_bandwidth": 12e9},
    ]  # fmt: skip
    text = qwen35_cpu.verdict(rows)
    assert text.startswith("bfloat16 is 1.50× faster than float32")
    assert "45% of its roofline" in text and "12.0 GB/s" in text and "90%" in text
    assert "F.linear" in text and "packed" not in text
    rows[1] |= {"percent_of_gemv": 121.0, "packed_products": True}  # faster than F.linear: said as such
    text = qwen35_cpu.verdict(rows)
    assert "121% of torch's F.linear" in text and "oneDNN's packed" in text
    rows[1]["percent_of_gemv"] = 40.0
    assert "outside its matrix products" in qwen35_cpu.verdict(rows)
    rows[0]["tokens_per_s"] = 30.0
    text = qwen35_cpu.verdict(rows)
    assert text.startswith("float32 is 2.00× faster than bfloat16") and "memory bandwidth" in text


def test_torch_dtype_names_run_as_the_short_ones(monkeypatch, tmp_path, capsys):
    """Issue 42: `--dtypes bfloat16` ended in a KeyError; torch's names now mean what the short ones do."""
    seen = []

    def fake_measure(folder, dtype, depth, tokens, repeats, step):
        seen.append(dtype)
        return {"dtype": str(dtype).removeprefix("torch."), "tokens_per_s": 10.0, "median_tokens_per_s": 10.0,
                "runs": [10.0], "bytes_per_token": 1e6, "gemv_bandwidth": 1e9, "percent_of_gemv": 1.0,
                "percent_of_own_products": 1.0, "params": 1, "ops_per_step": 9, "kernel_floor_s": 2.7e-5}  # fmt: skip

    monkeypatch.setattr(qwen35_cpu, "measure", fake_measure)
    monkeypatch.setattr(qwen35_cpu, "copy_bandwidth", lambda device, nbytes: 1e9)
    monkeypatch.setattr(qwen35_cpu, "_tiny", lambda folder, sizes, parser: tmp_path)
    assert qwen35_cpu.main(["--tiny", "--dtypes", "bfloat16"]) == 0
    assert qwen35_cpu.main(["--tiny", "--dtypes", "float32,bf16"]) == 0
    assert seen == [torch.bfloat16, torch.float32, torch.bfloat16]
    assert "bfloat16" in capsys.readouterr().out


def test_both_steps_are_timed_beside_their_own_matrix_products_and_counted(tmp_path, monkeypatch):
    """Issue 42: the lean step (the decoder's) and the eager one (the pages') over the same folder: speeds,
    the shares of GEMV from (step, probe) pairs, and the operations one step calls — the lean one fewer."""
    from bench.hf_tiny_qwen35 import make_checkpoint

    monkeypatch.setattr(qwen35_cpu, "GEMV_SHAPE", (256, 128))  # a small probe: the test checks the plumbing
    folder = make_checkpoint(tmp_path / "tiny")
    rows = {step: qwen35_cpu.measure(folder, torch.float32, 4, 3, 2, step) for step in qwen35_cpu.STEPS}
    for step, row in rows.items():
        assert row["step"] == step and len(row["runs"]) == 2 and row["tokens_per_s"] == max(row["runs"])
        assert row["percent_of_gemv"] > 0 and 0 < row["percent_of_own_products"]
        assert row["kernel_floor_s"] == pytest.approx(row["ops_per_step"] * KERNEL_FLOOR_S)
        assert row["ops_per_layer"] == pytest.approx(row["ops_per_step"] / 4)
        assert row["packed_products"] is False  # fp32 multiplies its dense matrices
    assert 0 < rows["lean"]["ops_per_step"] < rows["eager"]["ops_per_step"] / 2


@pytest.mark.parametrize(
    "args, words",
    [
        (["--tiny", "--dtypes", "bfloat16x"], "unknown dtype bfloat16x"),
        (["--tiny", "--dtypes", ","], "unknown dtype"),
        (["--tiny", "--size", "hidden_size"], "expected FIELD=N"),
        (["--tiny", "--size", "no_such_size=8"], "no such size"),
        (["--tiny", "--depth", "-1"], "must be at least 0"),
        (["--tiny", "--tokens", "zero"], "expected a whole number"),
        (["--tiny", "--repeats", "0"], "must be at least 1"),
        (["--size", "hidden_size=8", "somewhere"], "--size and --widths go with --tiny"),
        (["--widths", "0.8b", "somewhere"], "--size and --widths go with --tiny"),
        (["--tiny", "--widths", "9b"], "invalid choice: '9b'"),
        (["--tiny", "--step", "fast"], "invalid choice: 'fast'"),
        (["/no/such/folder"], "not a folder"),
        ([], "give a folder or --tiny"),
    ],
)
def test_bad_input_is_answered_in_one_line_with_exit_2(args, words, capsys):
    with pytest.raises(SystemExit) as stop:
        qwen35_cpu.main(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "error:" in err[-1] and words in err[-1], err
