"""The batch sweep's released pair: Qwen3-8B's and Qwen3.5-9B's shapes from their configs, built with random
weights. The built model must hold what the planner counts (weights and bytes per sequence), a batched step
must compute what each sequence alone computes and move the bytes it says, and bad shapes are refused."""

from __future__ import annotations

import json

import pytest
import torch

from core.gpu.decode import pair_shapes
from core.gpu.decode.pair_decoder import PairDecoder, delta_step_
from core.gpu.decode.pair_shapes import PAIR, PairScale, per_sequence_bytes, planned, planner_max_batch
from core.gpu.decode.traffic import trace_persistent_bytes
from core.gpu.presets import GIB, MIB
from core.ops import gated_delta_rule
from core.plan import PlanInputs, parse, plan
from core.plan.config import SHIPPED_CONFIGS

TINY = PairScale(layers=4, vocab=256, width_divisor=32)


def test_the_pair_is_a_gqa_dense_model_and_a_3_to_1_hybrid_of_equal_width():
    dense, hybrid = (planned(kind).spec for kind in PAIR)
    assert dense.hidden == hybrid.hidden == 4096
    assert dense.num_layers == 36 and set(dense.layer_kinds()) == {"gqa"}
    assert (dense.attention.heads, dense.attention.kv_heads, dense.attention.head_dim) == (32, 8, 128)
    assert hybrid.num_layers == 32 and hybrid.layer_kinds()[:4] == ["gated_delta"] * 3 + ["gqa"]
    assert hybrid.num_full_attention_layers == 8 and hybrid.linear.v_heads == 32
    assert dense.total_params() == pytest.approx(8.19e9, rel=0.01)  # Qwen3-8B
    assert hybrid.total_params() == pytest.approx(8.95e9, rel=0.01)  # Qwen3.5-9B's text model


def test_at_16k_a_dense_sequence_holds_about_4x_a_hybrid_one_by_the_configs_arithmetic():
    dense, hybrid = (per_sequence_bytes(planned(kind), 16384, 2) for kind in PAIR)
    assert dense == 36 * 2 * 8 * 128 * 2 * 16384 == int(2.25 * GIB)  # keys and values, every layer
    state = 32 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 32 * 128) * 2  # fp32 board + conv window, per layer
    assert hybrid == 8 * 2 * 4 * 256 * 2 * 16384 + 24 * state  # 512 MiB of cache + 24 boards
    assert hybrid == pytest.approx(561.125 * MIB)
    assert 3.5 < dense / hybrid < 4.5  # where the synthetic pair differs by 128×


def test_qwen3_5_9b_has_the_shapes_transformers_gives_qwen3_5():
    transformers = pytest.importorskip("transformers")
    reference = transformers.Qwen3_5TextConfig()
    text = pair_shapes.released_config("qwen3_5_9b")["text_config"]
    for key in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "num_key_value_heads", "head_dim", "linear_num_key_heads", "linear_num_value_heads",
                "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim"):  # fmt: skip
        assert text[key] == getattr(reference, key), key


@pytest.mark.parametrize("kind", PAIR)
def test_the_built_model_holds_every_parameter_the_planner_counts(kind):
    model = planned(kind)
    built = PairDecoder(model, 1, "meta", torch.bfloat16)  # the full shapes, nothing allocated
    assert built.total_params() == model.spec.total_params()
    assert built.sequence_bytes(16384) == per_sequence_bytes(model, 16384, 2)


@pytest.mark.parametrize("kind", PAIR)
def test_allocated_memory_is_the_planners_bytes_per_sequence(kind):
    model = planned(kind, TINY)
    built = PairDecoder(model, 3, "cpu", torch.float32)
    built.allocate(40)
    assert built.memory_bytes() == 3 * per_sequence_bytes(model, 40, 4)


@pytest.mark.parametrize("kind", PAIR)
def test_the_bytes_of_a_step_are_what_it_touches(kind):
    built = PairDecoder(planned(kind, TINY), 3, "cpu", torch.float32)
    built.allocate(40)
    built.fill(20)
    watched = list(built.parameters()) + built.persistent_memory()
    traced, _ = trace_persistent_bytes(lambda: built.step(torch.arange(3)), watched)
    assert built.traffic(20).persistent == traced


@pytest.mark.parametrize("kind", PAIR)
def test_a_batched_step_computes_what_each_sequence_alone_computes(kind):
    torch.manual_seed(3)
    model = planned(kind, TINY)
    tokens = torch.tensor([7, 42, 200])
    many = PairDecoder(model, 3, "cpu", torch.float32)
    many.allocate(16)
    many.fill(5)
    start = [t.clone() for t in many.persistent_memory()]
    steps = [many.step(tokens), many.step(tokens.flip(0))]
    for b in range(3):
        alone = PairDecoder(model, 1, "cpu", torch.float32)
        alone.load_state_dict(many.state_dict())
        alone.allocate(16)
        for mine, s0 in zip(alone.persistent_memory(), start, strict=True):
            mine.copy_(s0[b : b + 1])
        alone.pos = 5
        first, second = alone.step(tokens[b : b + 1]), alone.step(tokens.flip(0)[b : b + 1])
        torch.testing.assert_close(first[0], steps[0][b], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(second[0], steps[1][b], rtol=1e-4, atol=1e-5)


def test_the_hybrids_state_step_is_the_gated_delta_rule():
    torch.manual_seed(0)
    b, h, dk, dv = 2, 4, 8, 6
    state = torch.randn(b, h, dk, dv)
    q, k = (torch.nn.functional.normalize(torch.randn(b, h, dk), dim=-1) for _ in range(2))
    v, beta, alpha = torch.randn(b, h, dv), torch.rand(b, h), torch.rand(b, h) * 0.9 + 0.05
    reference = gated_delta_rule.step(state.clone(), q, k, v, beta_t=beta, g_t=alpha.log(), scale=dk**-0.5)
    out = delta_step_(state, q * dk**-0.5, k, v, beta, alpha)
    torch.testing.assert_close(state, reference.state, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out, reference.output, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", PAIR)
def test_the_planners_largest_batch_is_the_planners_own_on_a_card_it_knows(kind):
    model = planned(kind)
    card = plan(model, PlanInputs(context=16384, card="h200"))
    from core.plan.cards import card as card_of

    assert planner_max_batch(model, card_of("h200").memory_bytes, 16384, 2) == card.max_batch


def test_a_cut_down_pair_keeps_every_layers_shapes():
    cut = PairScale(layers=4, vocab=16384)
    for kind in PAIR:
        full, small = planned(kind).spec, planned(kind, cut).spec
        assert small.num_layers == 4 and small.vocab == 16384 and small.hidden == full.hidden
        assert small.attention == full.attention and small.linear == full.linear and small.mlp == full.mlp
    assert planned("state", cut).spec.layer_kinds() == ["gated_delta"] * 3 + ["gqa"]  # the 3:1 pattern kept
    assert planned("attention", PairScale(layers=40)).spec.num_layers == 36  # never more than released


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: PairScale(layers=6), "multiple of 4"),
        (lambda: PairScale(layers=0), "multiple of 4"),
        (lambda: PairScale(vocab=0), "vocab"),
        (lambda: PairScale(width_divisor=0), "width_divisor"),
        (lambda: planned("state", PairScale(width_divisor=3)), "not a multiple of width_divisor 3"),
        (lambda: planned("both"), "unknown kind"),
        (lambda: pair_shapes.released_config("llama"), "unknown pair model"),
        (lambda: PairDecoder(planned("attention", TINY), 0, "meta", torch.float32), "batch"),
    ],
)
def test_bad_shapes_are_refused_in_words(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_models_it_cannot_build_are_refused_in_words():
    deepseek = parse(json.loads((SHIPPED_CONFIGS / "deepseek_v3.json").read_text()))
    with pytest.raises(ValueError, match="softmax attention"):
        PairDecoder(deepseek, 1, "meta", torch.bfloat16)


def test_on_a_141_gb_card_the_sweep_and_the_planner_agree_and_the_hybrid_fits_about_4x():
    from core.gpu.presets import PRESETS
    from core.gpu.suites.batch_bench import max_batch
    from core.gpu.timing.decode_timer import steps_room

    free, room = 139 * GIB, steps_room(PRESETS["large"], 16384)
    fits = {}
    for kind in PAIR:
        model = planned(kind)
        weights = PairDecoder(model, 1, "meta", torch.bfloat16).weight_bytes()
        ours = max_batch(free, weights, per_sequence_bytes(model, room, 2))
        theirs = planner_max_batch(model, free, 16384, 2)
        assert 0.97 <= theirs / ours <= 1.0  # only the planner's runtime reserve between them
        fits[kind] = ours
    assert 45 <= fits["attention"] <= 50 and 3.5 <= fits["state"] / fits["attention"] <= 4.5
