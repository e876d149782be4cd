"""bench/moe.py: dense against an MoE of released experts' shapes, the MoE each way it runs here; every
batched way checked against the per-expert loop, the speed ratio set against the byte ratio."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench import moe
from core.gpu.suites import moe_sizing

ROOT = Path(__file__).resolve().parents[2]


def tiny(shape: str = "fine") -> moe_sizing.MoeSizing:
    """The shape's sizing with its widths cut so a test runs in a second (the counts as on a CPU)."""
    return dataclasses.replace(moe_sizing.cpu_sizing(shape, 1.0, 4), d_model=64, expert_hidden=16)


def test_a_tiny_run_prints_each_way_against_dense_with_its_share_of_the_byte_ratio():
    lines: list[str] = []
    rows = moe.run_shape(tiny(), tokens=2, repeats=1, say=lines.append)
    names = [r.name for r in rows]
    assert names[0] == "dense" and names[-1] == moe.WAYS["loop"] and moe.WAYS["gather"] in names
    dense, *moes = rows
    sizing = tiny()
    expert = 3 * sizing.d_model * sizing.expert_hidden * 4
    router = sizing.d_model * (sizing.n_experts - sizing.n_shared) * 4
    assert dense.bytes_per_token == sizing.n_layers * sizing.n_experts * expert  # every expert, every token
    for r in moes:  # the router, the shared expert and the top-k routed ones
        assert r.bytes_per_token == sizing.n_layers * ((sizing.n_shared + sizing.top_k) * expert + router)
        # each ratio is one repetition's against the dense repetition run just before it
        assert r.vs_dense == [m / d for m, d in zip(r.rates, dense.rates, strict=True)] and len(r.rates) == 1
    text = "\n".join(lines)
    assert text.count("vs the per-expert loop: largest difference") == len(moes) - 1
    assert text.count("of the byte ratio") == len(moes)


@pytest.mark.parametrize("way", ["gather", "grouped"])
def test_each_batched_way_matches_the_loop_for_both_shapes(way):
    for shape in moe_sizing.SHAPES:
        stack = moe.build(tiny(shape), moe=True)
        if way not in stack.ways():
            pytest.skip(f"{way} does not run here")
        assert moe.differs_from_loop(stack, way, 64) < 1e-5


def test_a_way_that_differs_from_the_loop_stops_the_run(monkeypatch):
    real = torch.nn.Module.__call__

    def broken(self, *args):  # every batched MoE layer a little off (the loop calls no module)
        out = real(self, *args)
        return out + 0.01 if isinstance(self, moe.MoEFFN) else out

    monkeypatch.setattr(torch.nn.Module, "__call__", broken)
    with pytest.raises(AssertionError, match="differs from the per-expert loop"):
        moe.run_shape(tiny(), tokens=1, repeats=1, say=lambda line: None)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--shape", "huge"], "invalid choice"),
        (["--tokens", "0"], "at least 1"),
        (["--repeats", "x"], "whole number"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_status_2(args, words):
    done = subprocess.run([sys.executable, "-m", "bench.moe", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 2 and words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
