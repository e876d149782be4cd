"""The numbers behind the Engineer depth's worked examples agree with core/ops and core/specs: the chunked
rule's example and costs (core/ops/chunk_example.py), KDA's gate bound (core/ops/kda.py), AttnRes costs
(core/plan/attn_res.py), expert reads per step (core/plan/expert_bytes.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.ops.chunk_example import chunk_costs, chunk_example
from core.ops.kda import gate_bounds
from core.plan.attn_res import attn_res_costs
from core.plan.expert_bytes import expert_reads
from core.specs import KIMI_K3, LLAMA3_8B


def test_chunk_example_is_the_ut_transform_and_matches_the_recurrence():
    ex = chunk_example()
    eye = np.eye(len(ex["beta"]))
    assert np.allclose((eye + ex["L"]) @ ex["T"], np.diag(ex["beta"]))
    assert np.allclose(ex["W"], ex["T"] @ ex["K"]) and np.allclose(ex["U"], ex["T"] @ ex["V"])
    assert np.allclose(np.triu(ex["L"]), 0)
    # the board after chunk 1 is S0 + Kᵀ(U − W S0) with S0 = 0
    assert np.allclose(ex["boards"][0], ex["K"].T @ ex["U"])
    assert ex["max_gap"] < 1e-12


def test_chunk_costs():
    c = chunk_costs(8192, 64, 128)
    assert c["sequential_chunked"] == 128 and c["sequential_recurrent"] == 8192
    assert c["inside_chunks"] == 8192 * 64 * 128 and c["handovers"] == 8192 * 128**2


def test_k3_gate_bound():
    b = gate_bounds(-5.0, 64)
    assert b["min_keep_per_step"] == pytest.approx(0.0067, abs=1e-4)
    f32_max = float(np.finfo(np.float32).max)
    assert (
        math.exp(5.0 * b["steps_to_overflow_f32"])
        > f32_max
        > math.exp(5.0 * (b["steps_to_overflow_f32"] - 1))
    )


def test_attn_res_costs_for_k3():
    c = attn_res_costs(KIMI_K3)
    assert c["max_sources"] == 9 and c["mixes_per_token"] == 187
    no_attn_res = KIMI_K3.__class__(**{**KIMI_K3.__dict__, "attn_res_block_size": None})
    assert c["params"] == KIMI_K3.total_params() - no_attn_res.total_params()
    assert c["share_of_weight_flops"] < 0.001
    with pytest.raises(ValueError):
        attn_res_costs(LLAMA3_8B)


def test_expert_reads_grow_with_batch_but_fall_per_token():
    rows = expert_reads(KIMI_K3, 4.25, [1, 16, 256])
    assert rows[0]["experts"] == pytest.approx(16)
    assert rows[0]["step_bytes"] < rows[1]["step_bytes"] < rows[2]["step_bytes"]
    assert rows[0]["per_token_bytes"] > rows[1]["per_token_bytes"] > rows[2]["per_token_bytes"]
