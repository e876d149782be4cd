"""The MoE test's experts are a released MoE's — Qwen3.5-MoE's fine-grained ones or DeepSeek-V3's large
ones, shapes from their configs — with as many layers as the card holds, or a few on a CPU."""

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


def test_the_two_shapes_are_their_configs_experts():
    fine, large = moe_sizing.moe_shape("fine"), moe_sizing.moe_shape("large")
    # Qwen3.5-35B-A3B: hidden 2,048, moe_intermediate_size 512; gate, up and down in bf16
    assert (fine.model, fine.d_model, fine.expert_hidden) == ("Qwen3.5-35B-A3B", 2048, 512)
    assert fine.expert_bytes(2) == 3 * 2048 * 512 * 2 == 6 * MIB
    # DeepSeek-V3: hidden 7,168, moe_intermediate_size 2,048
    assert (large.model, large.d_model, large.expert_hidden) == ("DeepSeek-V3", 7168, 2048)
    assert large.expert_bytes(2) == 3 * 7168 * 2048 * 2 == 84 * MIB
    for shape in (fine, large):  # 256 routed, 8 per token, one shared
        assert (shape.routed, shape.top_k, shape.shared) == (256, 8, 1)


@pytest.mark.parametrize("shape", moe_sizing.SHAPES)
@pytest.mark.parametrize("card", CARDS)
def test_each_card_gets_the_released_experts_and_fits_its_memory(card, shape):
    free, bandwidth = CARDS[card]
    s = moe_sizing.size_moe(free, bandwidth, 2, shape)
    released = moe_sizing.moe_shape(shape)
    assert s.expert_bytes == released.expert_bytes(2) and s.gated and s.shape == shape
    assert s.expert_read_us == pytest.approx(1e6 * s.expert_bytes / bandwidth)
    assert s.weight_bytes <= s.weight_budget_bytes <= moe_sizing.WEIGHT_SHARE * free
    assert (s.top_k, s.n_shared) == (released.top_k, released.shared)  # per token as released
    assert moe_sizing.MIN_ROUTED <= s.n_experts - s.n_shared <= released.routed
    assert 1 <= s.n_layers <= moe_sizing.MAX_LAYERS and s.bytes_ratio > 2


def test_an_h200_holds_every_released_expert_of_both():
    fine, large = (moe_sizing.size_moe(*CARDS["141 GB"], 2, shape) for shape in moe_sizing.SHAPES)
    assert fine.n_experts == large.n_experts == 257  # 256 routed + 1 shared, as released
    assert fine.n_layers == 16 and large.n_layers == 2 and large.weight_bytes > 40 * GIB
    assert fine.expert_read_us < 2 < large.expert_read_us  # a fine-grained expert reads in less than a launch


def test_a_small_card_gets_one_layer_of_fewer_large_experts():
    s = moe_sizing.size_moe(*CARDS["12 GB"], 2, "large")
    assert s.n_layers == 1 and moe_sizing.MIN_ROUTED <= s.n_experts - 1 < 256


def test_a_cpu_runs_a_few_experts_of_the_released_shape():
    for shape in moe_sizing.SHAPES:
        s = moe_sizing.cpu_sizing(shape, 5e9, 4)
        layers, routed, top_k = moe_sizing.CPU_COUNTS[shape]
        assert s.expert_bytes == moe_sizing.moe_shape(shape).expert_bytes(4)  # the released shape, in fp32
        assert (s.n_layers, s.n_experts - s.n_shared, s.top_k) == (layers, routed, top_k)
        assert s.weight_bytes < 4 * GIB and s.bytes_ratio > 2


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: moe_sizing.size_moe(1 * GIB, 1e12, 2, "large"), "experts"),
        (lambda: moe_sizing.size_moe(*CARDS["24 GB"], 2, "huge"), "unknown MoE shape"),
        (lambda: moe_sizing.cpu_sizing("kimi", 1e9, 4), "unknown MoE shape"),
    ],
)
def test_bad_sizes_are_refused_in_words(call, words):
    with pytest.raises(ValueError, match=words):
        call()


@pytest.mark.parametrize("shape", moe_sizing.SHAPES)
@pytest.mark.parametrize("card", CARDS)
def test_the_sizes_are_what_the_built_models_hold_and_read(card, shape):
    """The arithmetic against the decode models themselves (on the meta device: nothing allocated):
    the MoE's and its dense twin's weights, and the bytes each step reads."""
    s = moe_sizing.size_moe(*CARDS[card], 2, shape)
    preset = moe_sizing.sized_preset(PRESETS["large"], s)
    moe = build("attention", preset, "meta", torch.bfloat16, "moe_grouped")
    dense = build("attention", preset, "meta", torch.bfloat16, "dense_moe_size")
    assert moe.total_params() * 2 == s.weight_bytes
    assert dense.total_params() == pytest.approx(moe.total_params(), rel=0.01)  # the same total
    assert moe.traffic(preset.moe_depth).persistent == pytest.approx(s.moe_step_bytes, rel=1e-3)
    assert dense.traffic(preset.moe_depth).persistent == pytest.approx(s.dense_step_bytes, rel=1e-3)
    layer = moe.moe_layers()[0]
    assert layer.gated and layer.w1[0].numel() + layer.w2[0].numel() == 3 * s.d_model * s.expert_hidden
    assert preset.expert_hidden == s.expert_hidden and preset.n_layers == s.n_layers


def _tiny_sizing(**changes):
    """A sizing small enough to run on a CPU in a test (the shape's name and the gated experts kept)."""
    sizing = moe_sizing.MoeSizing(
        64, 2, 64, 16, 2, 2, 32, 16384, 1.0, 0, 0, 1, 2, 0.3, shape="fine", gated=True
    )
    return dataclasses.replace(sizing, **changes)


def test_the_suite_runs_its_moe_test_at_the_card_s_sizes(monkeypatch):
    """`--moe-sized-by-card` (check 5's benchmark): the sizes come from the card's free memory and the
    copy speed the suite measured, the MoE test runs them, and the JSON says what they were."""
    from core.gpu import pipeline
    from core.gpu.pipeline import SuiteSpec
    from core.gpu.timing.bench_env import make_env

    seen = {}

    def sized(free, bandwidth, elem_bytes, shape="large"):
        seen.update(free=free, bandwidth=bandwidth, elem_bytes=elem_bytes, shape=shape)
        return _tiny_sizing()

    monkeypatch.setattr(moe_sizing, "size_moe", sized)
    env = make_env("cpu")
    try:
        tiny = PRESETS["tiny"]
        spec = SuiteSpec(dataclasses.replace(tiny, depths=(0,), depth_seconds=2.0), moe_sized_by_card=True)
        result = pipeline.run(spec, env)
    finally:
        env.close()
    assert seen["bandwidth"] == result.bandwidth.device_bytes_per_s and seen["elem_bytes"] == 4
    assert seen["shape"] == "large"  # sized by the card alone: DeepSeek-V3's experts
    assert result.moe_sizing.n_experts == 16 and result.moe.shape == "fine"
    assert result.moe.experts == "2 shared + 2 of 14 routed" and result.moe.depth == 32
    written = json.loads(result.to_json())  # the JSON says what the sizes were, and the MoE's share
    assert written["moe_sizing"]["n_experts"] == 16 and written["moe"]["depth"] == 32
    moe = result.moe
    assert moe.speed_ratio == pytest.approx(moe.rows[1].tokens_per_s / moe.rows[0].tokens_per_s)
    assert moe.bytes_ratio == pytest.approx(moe.rows[0].bytes_per_token / moe.rows[1].bytes_per_token)
    assert written["moe"]["share_of_bytes_ratio"] == pytest.approx(moe.speed_ratio / moe.bytes_ratio)


def test_a_shape_on_a_cpu_runs_the_cpu_sizes(monkeypatch):
    from core.gpu import pipeline
    from core.gpu.pipeline import SuiteSpec
    from core.gpu.timing.bench_env import make_env

    asked = []
    monkeypatch.setattr(
        moe_sizing, "cpu_sizing", lambda shape, bw, e: asked.append(shape) or _tiny_sizing(shape=shape)
    )
    monkeypatch.setattr(moe_sizing, "size_moe", lambda *a, **k: pytest.fail("a CPU is not sized as a card"))
    env = make_env("cpu")
    try:
        spec = SuiteSpec(
            dataclasses.replace(PRESETS["tiny"], depth_seconds=2.0), context=False, moe_shape="large"
        )
        result = pipeline.run(spec, env)
    finally:
        env.close()
    assert asked == ["large"] and result.moe.shape == "large" and result.moe_sizing.shape == "large"
    assert result.moe.share_of_bytes_ratio is not None


def test_the_cli_refuses_card_sizes_without_a_gpu_and_unknown_shapes():
    from core.gpu import bench

    for flags in (["--device", "cpu", "--moe-sized-by-card"], ["--moe-shape", "huge"]):
        with pytest.raises(SystemExit) as exit_info:
            bench.parse_args([*flags, "--out", "/tmp/x.json"])
        assert exit_info.value.code == 2
