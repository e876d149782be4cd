"""Roofline and spill model: hand calculations on a made-up card, and the shapes the lessons rely on."""

from __future__ import annotations

import pytest

from core.roofline import (
    CARDS,
    DEFAULT_CARD,
    Card,
    Width,
    active_weight_bytes,
    bandwidth_bound_tokens_per_s,
    decode_bytes_per_token,
    hybrid_memory_bytes,
    mechanism_macs_per_token,
    mechanism_memory_bytes,
    predict,
    predicted_tokens_per_second,
    slowdown,
    speed_curve,
    spill_context,
    spill_split,
    spill_time_per_token,
    weight_bytes,
)
from core.specs import GPT2, SPECS, DenseMLP, LinearAttention, ModelSpec, SoftmaxAttention

# A made-up card with round numbers: 1,000 B of VRAM, 100 B/s inside, 10 B/s over the link.
TOY_CARD = Card("toy", vram_bytes=1000, bandwidth_bytes_per_s=100, host_link_bytes_per_s=10, source="test")


def tiny_spec(linear: bool = False) -> ModelSpec:
    """A one-layer model with a hand-countable size: hidden 2, vocab 1, tied embeddings."""
    return ModelSpec(
        key="tiny",
        name="tiny",
        year=2026,
        source="test",
        hidden=2,
        num_layers=1,
        vocab=1,
        context=10_000,
        attention=SoftmaxAttention(heads=1, kv_heads=1, head_dim=2),
        mlp=DenseMLP(intermediate=2, gated=False),
        tied_embeddings=True,
        published_params=0,
        published_active=0,
        linear=LinearAttention("kda", 1, 1, 2, 2, conv_kernel=1) if linear else None,
        kinds=("kda",) if linear else (),
    )


def test_generic_roofline_by_hand():
    assert bandwidth_bound_tokens_per_s(50, 100) == 2.0
    with pytest.raises(ValueError):
        bandwidth_bound_tokens_per_s(0, 100)
    assert spill_split(300, 1000) == (300, 0)
    assert spill_split(1300, 1000) == (1000, 300)
    assert spill_split(300, 1000, resident_unread_bytes=900) == (100, 200)
    # 1,000 B in VRAM at 100 B/s (10 s) + 300 B over the link at 10 B/s (30 s)
    assert spill_time_per_token(1300, 1000, 100, 10) == pytest.approx(40.0)
    assert spill_time_per_token(500, 1000, 100, 10) == pytest.approx(5.0)


def test_tiny_spec_sizes_by_hand():
    spec = tiny_spec()
    # table 1·2 (tied), attention 4·(2·2)=16, MLP 2·2·2=8, 2 LayerNorm-free RMSNorms 2·2 + final 2
    assert spec.total_params() == 2 + 16 + 8 + 4 + 2 == 32
    assert spec.kv_cache_bytes_per_token() == 2 * 2 * 2  # K and V, 2 dims, 2 bytes
    assert weight_bytes(spec, 2.0) == 64
    assert decode_bytes_per_token(spec, 10, weight_bytes_per_param=2.0) == 64 + 80


def test_spill_point_is_exactly_where_bytes_exceed_budget():
    spec = tiny_spec()
    # 64 B of weights; 8 B per token; 1,000 B card → contexts up to (1000-64)/8 = 117 fit
    assert spill_context(spec, TOY_CARD, 2.0) == 118
    fits = predict(spec, 117, TOY_CARD, 2.0)
    spills = predict(spec, 118, TOY_CARD, 2.0)
    assert fits.resident_bytes <= 1000 and not fits.spilled
    assert spills.resident_bytes > 1000 and spills.spilled
    assert spills.spilled_bytes == pytest.approx(64 + 118 * 8 - 1000)


def test_predicted_speed_by_hand():
    spec = tiny_spec()
    # in VRAM: (64 + 8·100) B at 100 B/s
    assert predicted_tokens_per_second(spec, 100, TOY_CARD, 2.0) == pytest.approx(100 / 864)
    # context 200: 1,664 B read, 1,000 in VRAM (10 s) + 664 over the link (66.4 s)
    assert predicted_tokens_per_second(spec, 200, TOY_CARD, 2.0) == pytest.approx(1 / (10 + 66.4))
    # a budget override and a reserve shrink the card
    assert spill_context(spec, TOY_CARD, 2.0, vram_budget_bytes=500) == (500 - 64) // 8 + 1
    assert spill_context(spec, TOY_CARD, 2.0, reserve_bytes=500) == (500 - 64) // 8 + 1


def test_weights_that_do_not_fit_are_a_result_not_a_crash():
    small = Card("small", vram_bytes=50, bandwidth_bytes_per_s=100, host_link_bytes_per_s=10, source="test")
    result = predict(tiny_spec(), 10, small, 2.0)
    assert not result.weights_fit and result.tokens_per_s is None
    assert predicted_tokens_per_second(tiny_spec(), 10, small, 2.0) is None
    assert spill_context(tiny_spec(), small, 2.0) == 0
    k3 = SPECS["kimi_k3"]
    assert predicted_tokens_per_second(k3, 1000, CARDS[DEFAULT_CARD], 0.5) is None
    assert slowdown(k3, CARDS[DEFAULT_CARD], 1000) is None


def test_fixed_state_model_is_flat_and_never_spills():
    spec = tiny_spec(linear=True)
    assert spec.kv_cache_bytes_per_token() == 0
    assert spill_context(spec, TOY_CARD, 2.0) is None
    speeds = [predicted_tokens_per_second(spec, t, TOY_CARD, 2.0) for t in (0, 10, 1000, 10**6)]
    assert len(set(speeds)) == 1


@pytest.mark.parametrize("key", ["gpt2", "llama3_8b", "kimi_linear"])
def test_speed_never_rises_with_context(key):
    card = CARDS["h200"]
    contexts = [0, 1_000, 8_000, 64_000, 256_000, 1_000_000, 4_000_000]
    speeds = [p.tokens_per_s for p in speed_curve(SPECS[key], card, contexts, 1.0)]
    assert all(s is not None for s in speeds)
    assert all(a >= b for a, b in zip(speeds, speeds[1:], strict=False))
    assert speeds[0] > speeds[-1]


def test_spill_is_a_cliff_not_a_slope():
    """Llama-3-8B at 4 bits on a 12 GB card: the step across the spill point is far steeper."""
    spec, card = SPECS["llama3_8b"], CARDS[DEFAULT_CARD]
    t = spill_context(spec, card, 0.5)
    assert 60_000 < t < 70_000  # 12 GiB − 4 GB of weights, at 128 KiB per token
    before = predicted_tokens_per_second(spec, t - 1, card, 0.5)
    after = predicted_tokens_per_second(spec, t + 8192, card, 0.5)
    earlier = predicted_tokens_per_second(spec, t - 1 - 8192, card, 0.5)
    assert (before - after) > 3 * (earlier - before)
    assert slowdown(spec, card, t - 1, 0.5) < 0.4  # well below half speed before it even spills


def test_moe_reads_only_active_weights_but_stores_all():
    k3 = SPECS["kimi_k3"]
    assert active_weight_bytes(k3, 1.0) == k3.active_params(count_embedding_table=False)
    assert weight_bytes(k3, 1.0) == k3.total_params()
    assert active_weight_bytes(k3, 1.0) < 0.05 * weight_bytes(k3, 1.0)


def test_cards_are_sane():
    assert CARDS[DEFAULT_CARD].vram_bytes == 12 * 1024**3
    assert CARDS[DEFAULT_CARD].bandwidth_bytes_per_s == 360e9
    for card in CARDS.values():
        assert card.bandwidth_bytes_per_s > card.host_link_bytes_per_s > 0 and card.source


def test_mechanism_memory_and_work():
    width = Width(layers=32, heads=32, head_dim=128)
    assert Width.of(SPECS["llama3_8b"]) == Width(32, 32, 128, name="Llama-3-8B", kv_heads=8)
    # one number for one thing: the Llama row's cache equals the spec's GQA cache (16 GiB at 128K)
    llama = Width.of(SPECS["llama3_8b"])
    assert mechanism_memory_bytes("attention", 131072, llama) == SPECS["llama3_8b"].cache_bytes(131072)
    assert mechanism_memory_bytes("attention", 1024, width) == 512 * 1024**2  # MHA at 1K: 512 MiB
    board = mechanism_memory_bytes("kda", 1024, width)
    assert board == 32 * 32 * 128 * 128 * 4
    assert all(mechanism_memory_bytes(m, 10**6, width) == board for m in ("linear", "delta", "gated_delta"))
    assert mechanism_memory_bytes("no_cache", 10**6, width) == 0
    assert mechanism_macs_per_token("attention", 1000, width) == 32 * 32 * 2 * 1000 * 128
    assert mechanism_macs_per_token("linear", 1000, width) == mechanism_macs_per_token("linear", 10, width)
    order = [mechanism_macs_per_token(m, 10, width) for m in ("linear", "delta", "gated_delta", "kda")]
    assert order == sorted(order)
    assert mechanism_macs_per_token("no_cache", 100, width) > 50 * mechanism_macs_per_token(
        "attention", 100, width
    )
    # without a cache: every query's attention again, plus the key/value projections of every past token —
    # for the key/value heads the model really has (GQA: Llama-3-8B projects 8 of them, not 32)
    t = 131072
    attend = 32 * 32 * t * (t + 1) * 128
    assert mechanism_macs_per_token("no_cache", t, width) == attend + 32 * 2 * t * 4096 * 32 * 128
    assert mechanism_macs_per_token("no_cache", t, llama) == attend + 32 * 2 * t * 4096 * 8 * 128
    with pytest.raises(ValueError):
        mechanism_memory_bytes("nope", 1, width)
    hybrid = hybrid_memory_bytes(1000, width)
    assert hybrid == 8 * mechanism_memory_bytes("attention", 1000, Width(1, 32, 128)) + 24 * board / 32


def test_gpt2_fits_easily_on_the_default_card():
    assert spill_context(GPT2, CARDS[DEFAULT_CARD]) > GPT2.context


# --- the calculator chart (core/figures/specs.py) --------------------------------------------


def test_speed_figure_marks_the_spill_point():
    from core.figures.specs import speed_vs_context_figure

    spec, card = SPECS["llama3_8b"], CARDS[DEFAULT_CARD]
    contexts = [2**i for i in range(10, 21)]
    fig = speed_vs_context_figure(spec, card, contexts, 0.5)
    names = [trace.name for trace in fig.data]
    spill = spill_context(spec, card, 0.5)
    assert f"cache spills at {spill:,} tokens" in names
    predicted = next(t for t in fig.data if t.name.startswith("predicted"))
    assert list(predicted.y) == [
        pytest.approx(predicted_tokens_per_second(spec, t, card, 0.5)) for t in contexts
    ]
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.title.text


def test_speed_figure_says_when_weights_do_not_fit():
    from core.figures.specs import speed_vs_context_figure

    fig = speed_vs_context_figure(SPECS["kimi_k3"], CARDS[DEFAULT_CARD], [1024, 2**20], 0.5)
    assert not fig.data
    assert "does not fit" in fig.layout.annotations[0].text


def test_speed_figure_fixed_state_has_no_spill_line():
    from core.figures.specs import speed_vs_context_figure

    fig = speed_vs_context_figure(tiny_spec(linear=True), TOY_CARD, [0, 100, 10_000], 2.0)
    assert not any(t.name.startswith("cache spills") for t in fig.data)
    predicted = next(t for t in fig.data if t.name.startswith("predicted"))
    assert len(set(predicted.y)) == 1


def test_the_kv_cache_page_and_the_planner_give_a_card_the_same_memory():
    """Both tables count VRAM in GiB: an H100 had 74.5 GiB in the KV cache page and 80 GiB in the planner."""
    from core.plan.cards import card

    for ours, theirs in (("h100_sxm", "h100_80gb"), ("h200", "h200"), ("rtx3060_12gb", "rtx3060_12gb")):
        assert CARDS[ours].vram_bytes == card(theirs).memory_bytes, ours
