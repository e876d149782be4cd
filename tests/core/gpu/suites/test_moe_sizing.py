"""The MoE test's model is sized like real MoEs from the card: experts whose read outlasts a kernel
launch, as many as the free memory holds, and experts — not attention — deciding the step."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from core.gpu.decode.models import build
from core.gpu.presets import GIB, MIB, PRESETS
from core.gpu.suites import moe_sizing

# (free bytes, measured copy speed): a 12 GB card (RTX 3060-like), a 24 GB one (RTX 4090-like), and
# the H200 of docs/gpu-runs/2026-11-30-nvidia-h200 (its 2 GiB copy: 3.79 TB/s)
CARDS = {
    "12 GB": (int(11.5 * GIB), 360e9),
    "24 GB": (int(22.5 * GIB), 1.0e12),
    "141 GB": (int(139 * GIB), 3.79e12),
}


@pytest.mark.parametrize("card", CARDS)
def test_each_card_gets_experts_that_outlast_a_launch_and_fit_its_memory(card):
    free, bandwidth = CARDS[card]
    s = moe_sizing.size_moe(free, bandwidth, 2)
    assert s.expert_bytes / bandwidth >= moe_sizing.MIN_READ_S  # reading one expert ≥ 5 µs
    assert s.expert_read_us == pytest.approx(1e6 * s.expert_bytes / bandwidth)
    assert s.weight_bytes <= s.weight_budget_bytes <= moe_sizing.WEIGHT_SHARE * free
    assert s.attention_share <= moe_sizing.MAX_ATTENTION_SHARE  # the experts decide the step
    assert moe_sizing.MIN_EXPERTS <= s.n_experts <= moe_sizing.MAX_EXPERTS
    assert s.n_experts - s.n_shared >= 4 * s.top_k  # a real choice of experts
    assert s.expert_hidden % moe_sizing.HIDDEN_STEP == 0
    assert s.bytes_ratio > 2


def test_an_h200_gets_experts_of_deepseek_width_and_more_than_the_first_run_s():
    s = moe_sizing.size_moe(*CARDS["141 GB"], 2)
    assert s.expert_bytes >= 16 * MIB  # "≥ 16 MiB on a 3–4 TB/s card"
    first = PRESETS["large"]
    assert s.expert_bytes >= 8 * 2 * first.d_model * first.expert_hidden * 2  # ≥ 8× the first run's 2 MiB
    assert s.n_layers == 16 and s.weight_bytes > 30 * GIB  # the card's memory used, not a laptop's


def test_a_slower_card_gets_fewer_layers_not_too_few_experts():
    small, big = (moe_sizing.size_moe(*CARDS[c], 2) for c in ("24 GB", "141 GB"))
    assert small.n_layers < big.n_layers and small.n_experts >= moe_sizing.MIN_EXPERTS


def test_too_little_memory_is_refused_in_words():
    with pytest.raises(ValueError, match="experts"):
        moe_sizing.size_moe(1 * GIB, 1e12, 2)


@pytest.mark.parametrize("card", CARDS)
def test_the_sizes_are_what_the_built_models_hold_and_read(card):
    """The arithmetic against the decode models themselves (on the meta device: nothing allocated):
    the MoE's and its dense twin's weights, and the bytes each step reads."""
    s = moe_sizing.size_moe(*CARDS[card], 2)
    preset = moe_sizing.sized_preset(PRESETS["large"], s)
    moe = build("attention", preset, "meta", torch.bfloat16, "moe_grouped")
    dense = build("attention", preset, "meta", torch.bfloat16, "dense_moe_size")
    assert moe.total_params() * 2 == s.weight_bytes
    assert dense.total_params() == pytest.approx(moe.total_params(), rel=0.01)  # the same total
    assert moe.traffic(preset.moe_depth).persistent == pytest.approx(s.moe_step_bytes, rel=1e-3)
    assert dense.traffic(preset.moe_depth).persistent == pytest.approx(s.dense_step_bytes, rel=1e-3)
    assert preset.expert_hidden == s.expert_hidden and preset.n_layers == s.n_layers


def test_the_suite_runs_its_moe_test_at_the_card_s_sizes(monkeypatch):
    """`--moe-sized-by-card` (check 5's benchmark): the sizes come from the card's free memory and the
    copy speed the suite measured, the MoE test runs them, and the JSON says what they were."""
    from core.gpu.suites import pipeline
    from core.gpu.suites.pipeline import SuiteSpec
    from core.gpu.timing.bench_env import make_env

    seen = {}

    def sized(free, bandwidth, elem_bytes):
        seen.update(free=free, bandwidth=bandwidth, elem_bytes=elem_bytes)
        return moe_sizing.MoeSizing(64, 2, 64, 16, 2, 2, 32, 16384, 1.0, 0, 0, 1, 2, 0.3)  # tiny, for the CPU

    monkeypatch.setattr(moe_sizing, "size_moe", sized)
    env = make_env("cpu")
    try:
        tiny = PRESETS["tiny"]
        spec = SuiteSpec(dataclasses.replace(tiny, depths=(0,), depth_seconds=2.0), moe_sized_by_card=True)
        result = pipeline.run(spec, env)
    finally:
        env.close()
    assert seen["bandwidth"] == result.bandwidth.device_bytes_per_s and seen["elem_bytes"] == 4
    assert result.moe_sizing.n_experts == 16
    assert result.moe.experts == "2 shared + 2 of 14 routed" and result.moe.depth == 32
    written = json.loads(result.to_json())  # the JSON says what the sizes were
    assert written["moe_sizing"]["n_experts"] == 16 and written["moe"]["depth"] == 32


def test_the_cli_refuses_card_sizes_without_a_gpu():
    from core.gpu import bench

    with pytest.raises(SystemExit) as exit_info:
        bench.parse_args(["--device", "cpu", "--moe-sized-by-card", "--out", "/tmp/x.json"])
    assert exit_info.value.code == 2
