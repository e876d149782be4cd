"""Real model specs: cache bytes, fixed state, parameter counts and layer order, against the sources."""

from __future__ import annotations

import pytest

from core.specs import (
    K3_FULL_ATTN_LAYERS,
    KIMI_LINEAR_FULL_ATTN_LAYERS,
    MECHANISMS,
    SPECS,
    DenseMLP,
    LatentAttention,
    LinearAttention,
    MixtureOfExperts,
    ModelSpec,
    SoftmaxAttention,
    attn_res_block_starts,
    full_attention_layers,
    gpt2s_in,
    hybrid_layer_kinds,
)

KiB = 1024


def test_the_seven_models_are_there():
    assert list(SPECS) == [
        "gpt2",
        "llama3_8b",
        "deepseek_v3",
        "kimi_k2",
        "qwen3_next",
        "kimi_linear",
        "kimi_k3",
    ]
    for key, spec in SPECS.items():
        assert spec.key == key
        assert spec.name and spec.source and spec.year >= 2019


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("gpt2", 36 * KiB),  # 2 · 12 heads · 64 · 12 layers · 2 B
        ("llama3_8b", 128 * KiB),  # 2 · 8 kv heads · 128 · 32 layers · 2 B
        ("deepseek_v3", 576 * 61 * 2),
        ("kimi_k2", 576 * 61 * 2),
        ("qwen3_next", 2 * 2 * 256 * 12 * 2),
        ("kimi_linear", 576 * 7 * 2),
        ("kimi_k3", 576 * 24 * 2),
    ],
)
def test_kv_cache_bytes_per_token(key, expected):
    assert SPECS[key].kv_cache_bytes_per_token() == expected


def test_cache_bytes_scale_with_element_size():
    spec = SPECS["llama3_8b"]
    assert spec.kv_cache_bytes_per_token(bytes_per_element=1) == 64 * KiB
    assert spec.cache_bytes(32768) == 4 * 1024**3  # 4 GiB at 32K in fp16 (llama.cpp's KV buffer)


@pytest.mark.parametrize(
    ("key", "elements"),
    [
        ("gpt2", 0),
        ("llama3_8b", 0),
        ("deepseek_v3", 0),
        ("qwen3_next", 36 * 32 * 128 * 128),
        ("kimi_linear", 20 * 32 * 128 * 128),
        ("kimi_k3", 69 * 96 * 128 * 128),
    ],
)
def test_recurrent_state_is_one_board_per_head_per_linear_layer(key, elements):
    spec = SPECS[key]
    assert spec.recurrent_state_bytes() == elements * 4
    assert spec.recurrent_state_bytes(bytes_per_element=2) == elements * 2


def test_k3_state_and_crossover():
    k3 = SPECS["kimi_k3"]
    assert k3.recurrent_state_bytes() == 414 * 1024**2  # 414 MiB of fp32 boards
    # conv buffers: 3 × (q, k, v channels) per KDA layer, small next to the boards
    assert k3.conv_state_bytes() == 69 * 3 * 3 * 96 * 128 * 2
    assert k3.state_bytes() == k3.recurrent_state_bytes() + k3.conv_state_bytes()
    # the growing MLA cache overtakes the fixed boards near 15.7K tokens (fp32 boards, bf16 cache)
    crossover = k3.recurrent_state_bytes() / k3.kv_cache_bytes_per_token()
    assert 15_000 < crossover < 16_000


def test_cache_bytes_is_growing_part_plus_fixed_part():
    k3 = SPECS["kimi_k3"]
    assert k3.cache_bytes(0) == k3.state_bytes()
    assert k3.cache_bytes(1000) - k3.cache_bytes(0) == 1000 * k3.kv_cache_bytes_per_token()
    with pytest.raises(ValueError):
        k3.cache_bytes(-1)


def test_gpt2_parameter_count_is_exact():
    assert SPECS["gpt2"].total_params() == 124_439_808  # nanoGPT's count with tied embeddings


@pytest.mark.parametrize("key", list(SPECS))
def test_total_params_within_3_percent_of_published(key):
    spec = SPECS[key]
    assert spec.total_params() == pytest.approx(spec.published_params, rel=0.03)


@pytest.mark.parametrize("key", ["gpt2", "llama3_8b", "deepseek_v3", "kimi_k2", "kimi_k3"])
def test_active_params_within_3_percent_of_published(key):
    spec = SPECS[key]
    assert spec.active_params() == pytest.approx(spec.published_active, rel=0.03)


def test_small_moe_active_counts_are_near_their_names():
    # "A3B" names round; the counted active weights sit between 2.5B and 4B
    for key in ("qwen3_next", "kimi_linear"):
        assert 2.5e9 < SPECS[key].active_params() < 4e9


def test_dense_models_activate_everything_moe_models_a_sliver():
    for key in ("gpt2", "llama3_8b"):
        assert SPECS[key].active_params() == SPECS[key].total_params()
    k3 = SPECS["kimi_k3"]
    assert k3.active_params() / k3.total_params() < 0.05
    assert k3.active_params(count_embedding_table=False) == k3.active_params() - 163840 * 7168
    gpt2 = SPECS["gpt2"]  # tied table is the output head: only positions drop out
    assert gpt2.active_params(count_embedding_table=False) == gpt2.active_params() - 1024 * 768


def test_k3_layer_map():
    kinds = SPECS["kimi_k3"].layer_kinds()
    assert len(kinds) == 93
    assert kinds.count("kda") == 69 and kinds.count("mla") == 24
    assert full_attention_layers(kinds) == [*range(4, 93, 4), 93]
    assert kinds[:4] == ["kda", "kda", "kda", "mla"]
    assert kinds[-2:] == ["mla", "mla"]  # layer 92 and the extra layer 93


def test_generated_schedules_match_published_lists():
    assert full_attention_layers(hybrid_layer_kinds(93, 4, True)) == list(K3_FULL_ATTN_LAYERS)
    assert full_attention_layers(hybrid_layer_kinds(27, 4, True)) == list(KIMI_LINEAR_FULL_ATTN_LAYERS)
    assert full_attention_layers(SPECS["kimi_linear"].layer_kinds()) == list(KIMI_LINEAR_FULL_ATTN_LAYERS)
    qwen = SPECS["qwen3_next"].layer_kinds()
    assert qwen.count("gated_delta") == 36 and full_attention_layers(qwen) == list(range(4, 49, 4))


def test_hybrid_layer_kinds_edges():
    assert hybrid_layer_kinds(4, 4, False) == ["kda", "kda", "kda", "mla"]
    assert hybrid_layer_kinds(5, 4, False) == ["kda", "kda", "kda", "mla", "kda"]
    assert hybrid_layer_kinds(5, 4, True)[-1] == "mla"
    assert hybrid_layer_kinds(3, 1, False) == ["mla"] * 3
    with pytest.raises(ValueError):
        hybrid_layer_kinds(0, 4, True)


def test_expert_counts_and_headline_numbers():
    assert SPECS["kimi_k3"].expert_counts() == (898, 18)
    assert SPECS["deepseek_v3"].expert_counts() == (257, 9)
    assert SPECS["gpt2"].expert_counts() == (0, 0)
    assert int(gpt2s_in(SPECS["kimi_k3"])) == 22_580  # 2.8T / 124M = 22,580.6 — the seed's number
    assert attn_res_block_starts(93, 12) == [0, 12, 24, 36, 48, 60, 72, 84]


def test_parameter_formulas_on_a_hand_sized_model():
    """A toy hybrid small enough to count by hand."""
    d = 8
    attention = SoftmaxAttention(heads=2, kv_heads=1, head_dim=4)  # q 8·8, k 8·4, v 8·4, o 8·8
    assert attention.params(d) == 64 + 32 + 32 + 64
    mla = LatentAttention(
        heads=2, q_lora_rank=None, kv_lora_rank=4, qk_nope_head_dim=2, qk_rope_head_dim=1, v_head_dim=2
    )
    # q 8·(2·3) + kv_a 8·5 + norm 4 + kv_b 4·(2·4) + o 4·8
    assert mla.params(d) == 48 + 40 + 4 + 32 + 32
    assert mla.cache_elements_per_token() == 5
    kda = LinearAttention(kind="kda", qk_heads=2, v_heads=2, head_k_dim=2, head_v_dim=2, conv_kernel=2)
    # qkv 8·12, conv 12·2, f 8·2+2·4, b 8·2, g (low rank) 8·2+2·4, dt 4, A 2, o_norm 2, o 4·8
    assert kda.params(d) == 96 + 24 + 24 + 16 + 24 + 4 + 2 + 2 + 32
    assert kda.state_elements() == 2 * 2 * 2 and kda.conv_state_elements() == 12
    moe = MixtureOfExperts(experts=4, top_k=1, shared=1, expert_intermediate=3, shared_intermediate=3)
    assert moe.params(d) == (8 * 4 + 4) + 3 * 8 * 3 + 4 * 3 * 8 * 3
    assert moe.active_params(d) == (8 * 4 + 4) + 3 * 8 * 3 + 1 * 3 * 8 * 3
    toy = ModelSpec(
        key="toy",
        name="toy",
        year=2026,
        source="test",
        hidden=d,
        num_layers=2,
        vocab=10,
        context=16,
        attention=mla,
        mlp=DenseMLP(intermediate=5),
        linear=kda,
        kinds=("kda", "mla"),
        moe=moe,
        first_k_dense=1,
        published_params=0,
        published_active=0,
    )
    expected = 10 * 8 * 2 + 8  # untied embeddings + final norm
    expected += kda.params(d) + DenseMLP(5).params(d) + 2 * 8  # layer 1: KDA + dense MLP + 2 norms
    expected += mla.params(d) + moe.params(d) + 2 * 8  # layer 2: MLA + MoE + 2 norms
    assert toy.total_params() == expected
    assert toy.total_params() - toy.active_params() == 3 * 3 * 8 * 3  # three idle experts
    assert toy.kv_cache_bytes_per_token() == 5 * 2
    assert toy.recurrent_state_bytes() == 8 * 4


def test_mechanisms_tell_the_story_in_order():
    verbs = [MECHANISMS[k].verb for k in ("linear", "delta", "gated_delta", "kda")]
    assert verbs == ["add", "rewrite", "forget", "forget per channel"]
    assert MECHANISMS["attention"].grows and not MECHANISMS["kda"].grows


def test_hybrids_grow_a_fraction_of_an_all_attention_cache():
    kl = SPECS["kimi_linear"]
    assert kl.kv_cache_bytes_per_token() / kl.all_full_attention_bytes_per_token() == pytest.approx(7 / 27)
    k3 = SPECS["kimi_k3"]
    assert k3.all_full_attention_bytes_per_token() == 93 * 576 * 2
    gpt2 = SPECS["gpt2"]
    assert gpt2.all_full_attention_bytes_per_token() == gpt2.kv_cache_bytes_per_token()


# --- charts built from specs (core/figures/specs.py) ------------------------------------------


def test_the_layer_map_counts_every_kind_and_numbers_every_layer():
    from core.figures.layer_map import k3_layer_map, layer_map

    fig = k3_layer_map(SPECS["kimi_k3"])
    bars = {trace.name: trace for trace in fig.data if trace.type == "bar"}
    layers = {name: [int(t) for t in bar.text] for name, bar in bars.items()}
    assert layers["Kimi Delta Attention (69)"][:3] == [1, 2, 3]
    assert layers["Full attention (MLA) (24)"] == list(K3_FULL_ATTN_LAYERS)
    assert sorted(sum(layers.values(), [])) == list(range(1, 94))  # every layer once
    assert len(fig.layout.yaxis.tickvals) == len(attn_res_block_starts(93, 12))  # a row per AttnRes block
    with pytest.raises(ValueError):
        layer_map([], {}, row_size=12, title="")


def test_memory_per_token_figure_uses_computed_bytes():
    from core.figures.specs import memory_per_token_figure

    specs = list(SPECS.values())
    fig = memory_per_token_figure(specs, bytes_per_element=1)
    assert list(fig.data[0].x) == [s.kv_cache_bytes_per_token(1) / 1024 for s in specs]
    assert [label.split(" (")[0] for label in fig.data[0].y] == [s.name for s in specs]  # names read across
    assert fig.layout.yaxis.title.text and fig.layout.xaxis.title.text
    # one scale for both precisions, so switching to 8-bit halves the bars on screen
    assert fig.layout.xaxis.range == memory_per_token_figure(specs, bytes_per_element=2).layout.xaxis.range


def test_story_figure_rows_follow_the_story():
    from core.figures.specs import story_figure
    from core.roofline import Width
    from core.units import format_context, format_params

    fig = story_figure(Width.of(SPECS["llama3_8b"]), 131072)
    labels = list(fig.data[0].y)
    assert [label.replace("<br>", "").split(" · ")[1] for label in labels[2:6]] == [
        "add",
        "rewrite",
        "forget",
        "forget per channel",
    ]
    assert (
        fig.data[0].text[1] == "16.0 GiB"
    )  # Llama-3-8B's real cache: 8 key/value heads (GQA), as on the map
    assert format_params(2.8e12) == "2.8T" and format_params(124e6) == "124M"
    assert (
        format_context(1048576) == "1M"
        and format_context(131072) == "128K"
        and format_context(1000) == "1,000"
    )
