"""The planner's arithmetic: config parsing, formats, what fits, batch-aware speed, export and the CLI."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from core.plan import CARDS, ConfigError, PlanInputs, parse, plan
from core.plan.__main__ import main
from core.plan.config import MAX_CONFIG_BYTES, loads
from core.plan.experts import distinct_experts
from core.plan.export import from_query, pack_config, rows, to_csv, to_json, to_query, unpack_config
from core.plan.footprint import weight_bytes
from core.plan.formats import WEIGHT_FORMATS
from core.plan.memory import sequence_bytes
from core.plan.parallel import even_splits
from core.specs import SPECS

CONFIGS = Path(__file__).resolve().parents[3] / "assets" / "configs"
SHIPPED = {p.stem: json.loads(p.read_text()) for p in sorted(CONFIGS.glob("*.json"))}
SAME_AS_CATALOG = {
    "gpt2": "gpt2",
    "llama3_1_8b": "llama3_8b",
    "deepseek_v3": "deepseek_v3",
    "kimi_k2": "kimi_k2",
    "qwen3_next_80b_a3b": "qwen3_next",
    "kimi_linear_48b_a3b": "kimi_linear",
    "kimi_k3": "kimi_k3",
}


@pytest.mark.parametrize("name,key", SAME_AS_CATALOG.items())
def test_shipped_configs_parse_to_the_catalog_specs(name, key):
    """The parser reads the released field values into exactly the specs core/specs hand-builds."""
    model, spec = parse(SHIPPED[name]).spec, SPECS[key]
    assert model.total_params() == spec.total_params()
    assert model.active_params() == spec.active_params()
    assert model.layer_kinds() == spec.layer_kinds()
    assert model.kv_cache_bytes_per_token() == spec.kv_cache_bytes_per_token()
    assert model.state_bytes() == spec.state_bytes()


def test_every_shipped_config_has_a_source_and_parses():
    for name, data in SHIPPED.items():
        assert data["_source"], name
        parse(data)


@pytest.mark.parametrize(
    "text, words",
    [
        ("{", "not valid JSON"),
        ("", "empty"),
        ("[1, 2]", "JSON object"),
        ('{"model_type": "mamba"}', "unknown model_type 'mamba'"),
        ('{"hidden_size": 8}', "missing field 'model_type'"),
        ('{"model_type": "llama", "hidden_size": 8}', "missing field 'num_hidden_layers'"),
        ('{"model_type": "gpt2", "n_embd": "wide"}', "field 'n_embd' must be a whole number"),
        ('{"model_type": "kimi_k3"}', "missing field 'text_config'"),
        (
            '{"model_type": "kimi_linear", "num_hidden_layers": 4, "linear_attn_config": 3}',
            "must be an object",
        ),
        ('{"model_type": "llama", "num_hidden_layers": -1}', "at least 1"),
        ("[" * 100000, "not valid JSON"),
    ],
)
def test_bad_configs_get_one_line_naming_the_problem(text, words):
    with pytest.raises(ConfigError) as err:
        parse(text)
    assert words in str(err.value)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300


def test_a_config_too_large_to_be_one_is_refused_before_parsing():
    with pytest.raises(ConfigError, match="a few kB"):
        loads("x" * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(ConfigError, match="a few kB"):
        loads(b"{" + b" " * (5 * 2**20) + b"}")


def test_model_type_can_come_from_architectures():
    data = {k: v for k, v in SHIPPED["llama3_1_8b"].items() if k != "model_type"}
    assert parse(data).family == "llama"


def test_formats_carry_their_real_bits():
    bits = {k: f.bits for k, f in WEIGHT_FORMATS.items()}
    assert bits["q8_0"] == pytest.approx(8.5, abs=0.01) and bits["q4_0"] == 4.5 and bits["mxfp4"] == 4.25
    assert bits["nvfp4"] == 4.5 and bits["awq4"] == pytest.approx(4.156, abs=1e-3)
    k3 = parse(SHIPPED["kimi_k3"])
    released = weight_bytes(k3, "mxfp4_experts")
    assert weight_bytes(k3, "mxfp4") < released < weight_bytes(k3, "bf16")


def test_distinct_experts_grows_from_top_k_to_all():
    assert distinct_experts(896, 16, 1) == pytest.approx(16)
    assert distinct_experts(896, 16, 0) == 0
    assert 16 < distinct_experts(896, 16, 16) < 16 * 16
    assert distinct_experts(8, 2, 10_000) == pytest.approx(8)


def test_sliding_window_stops_growth():
    mistral = parse(SHIPPED["mistral_7b"])
    assert sequence_bytes(mistral, 4096).kv == sequence_bytes(mistral, 131072).kv
    assert plan(mistral, PlanInputs(context=131072, card="h100_80gb")).max_context is None


def test_longest_context_is_the_edge_of_what_fits():
    llama = parse(SHIPPED["llama3_1_8b"])
    base = PlanInputs(batch=2, card="rtx4090", weight_format="q4_k_m")
    edge = plan(llama, base).max_context
    assert plan(llama, replace(base, context=edge)).fits
    assert not plan(llama, replace(base, context=edge + 1)).fits
    most = plan(llama, replace(base, context=8192)).max_batch
    assert plan(llama, replace(base, context=8192, batch=most)).fits
    assert not plan(llama, replace(base, context=8192, batch=most + 1)).fits


def test_batch_reads_weights_once_and_more_experts():
    llama = parse(SHIPPED["llama3_1_8b"])
    one = plan(llama, PlanInputs(context=4096, batch=1, card="h100_80gb"))
    many = plan(llama, PlanInputs(context=4096, batch=16, card="h100_80gb"))
    assert many.decode_tokens_per_s > 8 * one.decode_tokens_per_s  # weights shared by the batch
    assert many.per_sequence_tokens_per_s < one.per_sequence_tokens_per_s
    qwen = parse(SHIPPED["qwen3_next_80b_a3b"])
    q1 = plan(qwen, PlanInputs(context=4096, batch=1, card="h200", weight_format="fp8"))
    q16 = plan(qwen, PlanInputs(context=4096, batch=16, card="h200", weight_format="fp8"))
    assert q1.experts_touched == pytest.approx(10) and q16.experts_touched > 100
    assert q16.read_per_step > q1.read_per_step


def test_hybrid_state_is_fixed_and_counted_per_sequence():
    k3 = parse(SHIPPED["kimi_k3"])
    p = plan(k3, PlanInputs(context=1000, batch=3, card="b200", weight_format="mxfp4_experts", gpus=8))
    assert (
        p.state
        == 3 * SPECS["kimi_k3"].state_bytes(4, 2)
        == 3 * (69 * 96 * 128 * 128 * 4 + 69 * 3 * 3 * 96 * 128 * 2)
    )
    assert p.mla_layouts["per_head"] > 50 * p.mla_layouts["engine"]


def test_gpus_needed_is_the_smallest_that_fits():
    k3 = parse(SHIPPED["kimi_k3"])
    p = plan(k3, PlanInputs(context=131072, card="h200", weight_format="mxfp4_experts"))
    assert not p.fits and p.gpus_needed > 1
    assert plan(
        k3, PlanInputs(context=131072, card="h200", weight_format="mxfp4_experts", gpus=p.gpus_needed)
    ).fits
    assert not plan(
        k3, PlanInputs(context=131072, card="h200", weight_format="mxfp4_experts", gpus=p.gpus_needed - 1)
    ).fits


def test_apple_has_no_prefill_estimate_and_every_card_has_a_source():
    assert all(c.source and c.memory_bytes > 0 and c.bandwidth_bytes_per_s > 0 for c in CARDS.values())
    p = plan(parse(SHIPPED["gpt2"]), PlanInputs(card="m4_max_128gb", context=1024))
    assert p.prefill_seconds is None and p.decode_tokens_per_s > 0


def test_export_and_link_round_trip():
    p = plan(parse(SHIPPED["qwen3_next_80b_a3b"]), PlanInputs(card="h200", batch=4, weight_format="nvfp4"))
    data = json.loads(to_json(p))
    assert data["plan"]["inputs"]["batch"] == 4 and data["plan"]["assumptions"]
    assert to_csv(p).splitlines()[0] == "quantity,value,raw"
    assert len(rows(p)) >= 18
    labels = [label for label, _, _ in rows(p)]
    assert "fixed recurrent state (4 sequences)" in labels
    one = plan(parse(SHIPPED["qwen3_next_80b_a3b"]), PlanInputs(card="h200", batch=1, weight_format="nvfp4"))
    assert "fixed recurrent state (1 sequence)" in [label for label, _, _ in rows(one)]
    assert from_query(to_query(p.inputs)) == p.inputs
    assert (
        from_query({"batch": "-3", "card": "nope", "context": "9" * 50, "memory_share": "nan"})
        == PlanInputs()
    )
    text = json.dumps(SHIPPED["kimi_k3"])
    assert unpack_config(pack_config(text)) == text
    assert unpack_config("not base64!") is None and unpack_config("x" * 10_000) is None


def test_cli_prints_the_figures(capsys):
    assert main(["--config", str(CONFIGS / "llama3_1_8b.json"), "--context", "131072", "--batch", "8",
                 "--card", "h100_80gb"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "KV cache (8 × 128K tokens, trained for 131,072)" in out and "128.0 GiB" in out
    assert "assumptions:" in out


def test_cli_fails_with_one_line(tmp_path, capsys):
    bad = tmp_path / "config.json"
    bad.write_text('{"model_type": "llama"')
    assert main(["--config", str(bad)]) == 2
    assert capsys.readouterr().err.startswith("error: not valid JSON")


def test_speed_ceiling_matches_the_roofline_for_a_hybrid_too():
    """The planner and core/roofline.py move the same bytes for a model with a fixed state: its cache
    read once, its state read and written back."""
    from core.roofline import Card, decode_bytes_per_token, predicted_tokens_per_second

    qwen, b200 = parse(SHIPPED["qwen3_next_80b_a3b"]), CARDS["b200"]  # 80B in BF16 fits one B200
    p = plan(qwen, PlanInputs(context=8192, card="b200"))
    spec = SPECS["qwen3_next"]
    assert p.read_per_step == pytest.approx(decode_bytes_per_token(spec, 8192))
    card = Card("b200", 1e15, b200.bandwidth_bytes_per_s, 1e9, "")
    assert p.bandwidth_tokens_per_s == pytest.approx(predicted_tokens_per_second(spec, 8192, card))
    # the speed is the slower ceiling: 712 kernels at 3 µs (2.14 ms) outlast the bytes here (core/plan/latency.py)
    assert p.decode_bound == "latency" and p.decode_tokens_per_s == pytest.approx(p.latency_tokens_per_s)
    assert p.decode_tokens_per_s < p.bandwidth_tokens_per_s


def test_speed_ceiling_matches_the_roofline_for_a_dense_model():
    """Batch 1, one GPU, nothing spilled: the same number core/roofline.py gives."""
    from core.roofline import Card, predicted_tokens_per_second

    llama, h100 = parse(SHIPPED["llama3_1_8b"]), CARDS["h100_80gb"]
    p = plan(llama, PlanInputs(context=8192, card="h100_80gb"))
    card = Card("h100", 1e15, h100.bandwidth_bytes_per_s, 1e9, "")
    assert p.decode_tokens_per_s == pytest.approx(predicted_tokens_per_second(SPECS["llama3_8b"], 8192, card))
    assert math.isfinite(p.prefill_seconds)


def _config(name: str):
    return parse(json.dumps(SHIPPED[name]))


def test_a_context_past_the_trained_length_is_a_caution():
    gpt2 = _config("gpt2")
    at_limit = plan(gpt2, replace(PlanInputs(), context=1024))
    assert at_limit.trained_context == 1024 and at_limit.cautions == ()
    past = plan(gpt2, replace(PlanInputs(), context=131072))
    assert len(past.cautions) == 1
    assert (
        past.cautions[0].startswith("GPT-2 small was trained for at most 1,024 tokens")
        and "at 128K" in past.cautions[0]
    )
    assert json.loads(to_json(past))["plan"]["cautions"] == list(past.cautions)
    assert f"caution,{past.cautions[0]}" in to_csv(past).replace('"', "")


def test_a_gpu_count_that_cannot_split_the_heads_is_a_caution():
    llama = _config("llama3_1_8b")  # 32 heads
    for gpus in (1, 2, 4, 8):
        assert plan(llama, replace(PlanInputs(), gpus=gpus)).cautions == ()
    (three,) = plan(llama, replace(PlanInputs(), gpus=3)).cautions
    assert three.startswith("3 GPUs cannot split Llama-3.1-8B's 32 attention heads evenly")
    assert "try 2 or 4 GPUs" in three
    (many,) = plan(llama, replace(PlanInputs(), gpus=64)).cautions
    assert "try 32 GPUs" in many  # nothing above 32 splits 32 heads
    qwen = _config("qwen3_next_80b_a3b")  # 16 attention heads, 16 q/k and 32 value heads in the linear layers
    on_4090s = replace(PlanInputs(), card="rtx4090")  # 80B in bf16: 4 of these 24 GB cards are too few
    six = plan(qwen, replace(on_4090s, gpus=6))
    assert six.gpus_needed == 8 and not plan(qwen, replace(on_4090s, gpus=4)).fits
    (words,) = six.cautions
    assert "16 attention heads" in words and "try 8 GPUs" in words  # 4 splits evenly but does not hold it


def test_the_gpus_needed_and_the_split_caution_agree():
    """The fit advice names an even split, and the caution never rejects it or offers a count that does
    not hold the model (DeepSeek-V3 on H200s: 5 cards hold it, but 128 heads do not split over 5)."""
    deepseek = _config("deepseek_v3")
    inputs = PlanInputs(context=8192, card="h200", weight_format="fp8")
    p = plan(deepseek, inputs)
    assert not p.fits and p.gpus_needed == 8 and 128 % p.gpus_needed == 0
    assert plan(deepseek, replace(inputs, gpus=p.gpus_needed)).cautions == ()
    (five,) = plan(deepseek, replace(inputs, gpus=5)).cautions
    assert "try 8 GPUs" in five and "4" not in five.split("try")[1]
    for name in SHIPPED:
        model = _config(name)
        for gpus in range(1, 65):
            q = plan(model, replace(inputs, gpus=gpus))
            if q.gpus_needed is not None:
                assert q.gpus_needed in even_splits(model), (name, gpus)
                assert plan(model, replace(inputs, gpus=q.gpus_needed)).fits, (name, gpus)


def test_the_layout_words_name_only_what_the_model_has():
    llama = plan(_config("llama3_1_8b"), PlanInputs())
    (words,) = [a for a in llama.assumptions if a.startswith("KV cache:")]
    assert words.endswith("layout: serving engine (vLLM, SGLang).") and "MLA" not in words
    assert "2 bytes per element" in words
    fp8 = plan(_config("deepseek_v3"), replace(PlanInputs(), cache_format="fp8", layout="transformers"))
    (words,) = [a for a in fp8.assumptions if a.startswith("KV cache:")]
    assert "1 byte per element" in words and words.endswith("layout: HF transformers 5.x (MLA latent).")
    qwen = plan(_config("qwen3_next_80b_a3b"), PlanInputs())
    (words,) = [a for a in qwen.assumptions if a.startswith("KV cache:")]
    assert words.endswith("(conv kernel−1).")
    mistral = plan(_config("mistral_7b"), replace(PlanInputs(), layout="transformers"))
    (words,) = [a for a in mistral.assumptions if a.startswith("KV cache:")]
    assert words.endswith("(window W−1).")
    # keeping MLA per head means nothing for a model without MLA: it reads as the engines' layout
    mistral = plan(_config("mistral_7b"), replace(PlanInputs(), layout="per_head"))
    (words,) = [a for a in mistral.assumptions if a.startswith("KV cache:")]
    assert words.endswith("layout: serving engine (vLLM, SGLang) (window W).") and "MLA" not in words


def test_quantised_engine_checkpoints_keep_the_table_and_head_in_bf16():
    """AWQ / FP8 / FP4 checkpoints leave embed_tokens and lm_head unquantised (vLLM, AutoAWQ,
    llm-compressor); GGUF's bits per weight are whole-file figures. Hand arithmetic, Llama-3.1-8B."""
    llama = _config("llama3_1_8b")
    table = 128256 * 4096  # one 128,256 × 4,096 matrix: the input table, and again the output head
    linear = 8_030_261_248 - 2 * table
    assert weight_bytes(llama, "awq4") == pytest.approx(linear * (4 + 20 / 128) / 8 + 2 * table * 2)
    assert weight_bytes(llama, "fp8") == pytest.approx(linear + 2 * table * 2)
    # llama-quantize's Q4_0 writes the head as Q6_K (210 bytes / 256): 4.65 GB, the published file's size
    assert weight_bytes(llama, "q4_0") == pytest.approx((8_030_261_248 - table) * 4.5 / 8 + table * 210 / 256)
    assert weight_bytes(llama, "q4_0") / 2**30 == pytest.approx(4.33, abs=0.005)
    assert weight_bytes(llama, "q4_k_m") == pytest.approx(8_030_261_248 * 4.8944 / 8)  # a whole-file figure
    awq = plan(llama, PlanInputs(context=1024, card="rtx4090", weight_format="awq4"))
    # a step reads every quantised linear weight, the BF16 head, and the cache (not the input table)
    assert awq.read_per_step == pytest.approx(linear * (4 + 20 / 128) / 8 + table * 2 + awq.kv)
    assert 200 < awq.decode_tokens_per_s < 215  # 1,008 GB/s ÷ 4.8 GB, not 250 as with a 4-bit head
    assert any("output head stay in BF16" in a for a in awq.assumptions)


def test_a_decode_step_reads_and_writes_the_fixed_state():
    """Batch 1, BF16, one GPU: a step reads every active weight but the input table, the cache once,
    and the fixed state twice — fla's fused recurrent kernels load it and store it back."""
    qwen = _config("qwen3_next_80b_a3b")
    p = plan(qwen, PlanInputs(context=4096, card="h200"))
    seq = p.per_sequence
    assert seq.fixed > 0
    weights_read = qwen.spec.active_params(count_embedding_table=False) * 2
    assert p.read_per_step == pytest.approx(weights_read + seq.kv + 2 * seq.fixed)


def test_tensor_parallel_counts_must_also_share_the_key_value_heads():
    """vLLM's QKVParallelLinear needs the GPU count to divide the KV heads or be a multiple of them:
    a 40-head, 8-KV-head model (Qwen2.5-14B's shape) cannot run on 5 or 10 GPUs, though 40 heads split."""
    data = dict(SHIPPED["llama3_1_8b"], num_attention_heads=40, num_key_value_heads=8, hidden_size=5120)
    model = parse(json.dumps(data))
    assert even_splits(model) == [1, 2, 4, 8, 40]
    (words,) = plan(model, PlanInputs(context=32768, batch=10, card="rtx4090", gpus=5)).cautions
    assert (
        words.startswith("5 GPUs cannot share")
        and "8 key/value heads" in words
        and "try 4 or 8 GPUs" in words
    )
    needed = plan(model, PlanInputs(context=32768, batch=10, card="rtx4090")).gpus_needed
    assert needed in even_splits(model) and needed != 5


def test_a_sequence_that_stores_nothing_sets_no_batch_limit():
    llama = _config("llama3_1_8b")
    empty = plan(llama, PlanInputs(context=0))
    assert empty.max_batch is None
    assert (
        dict((q, s) for q, s, _ in rows(empty))["most sequences at 0 (trained for 131,072)"]
        == "no memory limit"
    )
    assert (
        plan(_config("qwen3_next_80b_a3b"), PlanInputs(context=0, card="h200", gpus=2)).max_batch > 0
    )  # state


def test_replicated_cache_says_it_counts_every_copy():
    ds = _config("deepseek_v3")
    p = plan(ds, PlanInputs(context=4096, card="h200", weight_format="fp8", gpus=8))
    label = next(q for q, _, _ in rows(p) if q.startswith("KV cache"))
    assert label == "KV cache (1 × 4K tokens, trained for 163,840; 8 copies over 8 GPUs)"
    assert p.kv == pytest.approx(8 * p.per_sequence.kv)


def test_the_measured_share_is_worked_out_against_this_planner():
    from core.plan.calibration import calibration, source_run
    from core.specs.published import depth_loss, measured_speeds

    assert measured_speeds(source_run()) == {0: 154.62, 16384: 101.74, 32768: 75.22, 65536: 49.21}
    assert depth_loss("Llama 8B") == pytest.approx(1 - 49.21 / 154.62)  # Your GPU: "loses 68 % by 64K"
    assert depth_loss("Qwen3.5") == pytest.approx(1 - 33.23 / 46.59)  # the hybrid: 29 %
    shares = [round(c.share, 2) for c in calibration()]
    assert shares == sorted(shares, reverse=True) and all(
        0.3 < s < 1 for s in shares
    )  # below, and further below
    llama = _config("llama3_1_8b")
    table = 128256 * 4096  # the input table is not read; the head is, as Q6_K
    weights_read = (8_030_261_248 - 2 * table) * 4.5 / 8 + table * 210 / 256
    assert calibration()[0].ceiling == pytest.approx(936e9 / weights_read)  # the RTX 3090's 936 GB/s
    kv_32k = 32768 * 2 * 32 * 8 * 128 * 34 / 32  # q8_0 cache: 34 bytes per 32 numbers
    assert calibration()[2].ceiling == pytest.approx(936e9 / (weights_read + kv_32k))
    words = next(a for a in plan(llama, PlanInputs()).assumptions if a.startswith("Measured decode"))
    assert f"{75.22 * (weights_read + kv_32k) / 936e9:.0%} at 32K" in words
    assert f"{154.62 * weights_read / 936e9:.0%} at an empty context, " in words


def test_a_mac_at_the_engine_share_is_told_about_metals_limit():
    llama = _config("llama3_1_8b")
    (words,) = plan(llama, PlanInputs(context=8192, card="m4_max_128gb")).cautions
    assert "iogpu.wired_limit_mb" in words and "usable share to 0.75" in words
    assert plan(llama, PlanInputs(context=8192, card="m4_max_128gb", memory_share=0.75)).cautions == ()
    assert plan(llama, PlanInputs(context=8192, card="h100_80gb")).cautions == ()


def test_mla_decodes_absorbed_from_its_latent_in_an_engine():
    """From the latent cache every head scores 512 + 64 numbers and sums 512 a token (DeepSeek-V2
    §2.1.2, vLLM/SGLang); decompressed per head it is 128 + 64 and 128."""
    from core.plan.flops import decode_flops_per_token

    ds = _config("deepseek_v3")
    active = ds.spec.active_params(count_embedding_table=False)
    weights_only = 2.0 * active
    engine = decode_flops_per_token(ds, active, 16384, "engine") - weights_only
    per_head = decode_flops_per_token(ds, active, 16384, "per_head") - weights_only
    assert engine == pytest.approx(61 * 2 * 128 * (576 + 512) * 16384)
    assert per_head == pytest.approx(61 * 2 * 128 * (192 + 128) * 16384)


def test_the_context_chart_names_its_ticks_as_context_lengths_are_quoted():
    from core.figures.plan import context_figure
    from core.plan.curve import sweep

    axis = context_figure(sweep(_config("llama3_1_8b"), PlanInputs())).layout.xaxis
    assert list(axis.ticktext) == ["1K", "4K", "16K", "64K", "256K", "1M"]  # not 10k / 100k
    assert list(axis.tickvals) == [1024 * 4**i for i in range(6)]


def test_each_gpu_of_a_group_keeps_its_own_runtime_and_prefill_activations():
    """Tensor parallelism gives every GPU the whole prefill chunk's hidden-wide activations: the reserve
    grows with the group (1 GiB + 2,048 × 16 × hidden × 2 bytes each), it is not shared."""
    llama = parse(SHIPPED["llama3_1_8b"])
    one_gpu = 2**30 + 2048 * 16 * 4096 * 2
    for gpus in (1, 2, 8):
        assert plan(llama, PlanInputs(context=4096, card="h100_80gb", gpus=gpus)).reserve == gpus * one_gpu


def test_a_cards_marketed_memory_read_as_gib_is_within_half_a_percent_of_what_the_driver_reported():
    """The one card this project has measured: NVML's total on the lent H200 against the planner's."""
    run = json.loads((CONFIGS.parents[1] / "docs/gpu-runs/2026-11-30-nvidia-h200/validate.json").read_text())
    measured = run["device"]["vram_total_bytes"]
    assert run["device"]["name"] == "NVIDIA H200" and measured == 143_771 * 2**20
    assert 0 < CARDS["h200"].memory_bytes / measured - 1 < 0.005


def test_a_hybrids_fixed_state_in_bf16_is_half_its_fp32_board_with_the_same_convolution_buffer():
    """vLLM keeps Gated DeltaNet's state in the model dtype by default; fla, transformers (and vLLM for KDA)
    in fp32. Qwen3-Next: 36 Gated DeltaNet layers × 32 value heads × a 128×128 board."""
    qwen = parse(SHIPPED["qwen3_next_80b_a3b"])
    fp32, bf16 = (plan(qwen, PlanInputs(context=4096, batch=4, state_format=f)) for f in ("fp32", "bf16"))
    assert fp32.state - bf16.state == 4 * 36 * 32 * 128 * 128 * 2
    assert bf16.kv == fp32.kv and bf16.read_per_step < fp32.read_per_step  # read and written back: less
    assert any("BF16 (vLLM's default for Gated DeltaNet)" in a for a in bf16.assumptions)
    llama = parse(SHIPPED["llama3_1_8b"])
    assert plan(llama, PlanInputs(state_format="bf16")).needed == plan(llama, PlanInputs()).needed
    with pytest.raises(ValueError, match="unknown state format 'fp64'"):
        PlanInputs(state_format="fp64").checked()
    assert from_query({"state_format": "fp64"}).state_format == "config"  # a bad link keeps the default
    assert from_query(to_query(PlanInputs(state_format="bf16"))).state_format == "bf16"


def test_cli_takes_the_fixed_state_format(capsys):
    assert main(["--config", "qwen3_next_80b_a3b", "--state", "bf16"]) == 0
    assert "BF16 (vLLM's default for Gated DeltaNet)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--config", "qwen3_next_80b_a3b", "--state", "fp64"])


def test_the_cli_and_the_english_plan_stay_english_whatever_the_language(capsys):
    """The CLI prints English even from a Japanese caller; a plan made in Japanese words its assumptions
    and cautions in Japanese, the same plan in English in English."""
    from core.i18n import use_language
    from tests.app.japanese import japanese_words

    with use_language("ja"):
        assert main(["--config", "llama3_1_8b", "--gpus", "3"]) == 0
    out = capsys.readouterr().out
    assert not japanese_words(out)
    assert out.startswith("Llama-3.1-8B on 3 × H100 SXM 80GB:")
    gpt2 = parse((CONFIGS / "gpt2.json").read_text())
    with use_language("ja"):
        japanese_plan = plan(gpt2, PlanInputs(context=2**20))
    english_plan = plan(gpt2, PlanInputs(context=2**20))
    assert all(japanese_words(text) for text in japanese_plan.assumptions + japanese_plan.cautions)
    assert not any(japanese_words(text) for text in english_plan.assumptions + english_plan.cautions)
