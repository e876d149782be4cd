"""The planner's cache bytes against a real engine's own accounting: Hugging Face transformers.

For a tiny random model of every family the planner reads, build it with `transformers` (a dev-only
dependency; nothing is downloaded), run a forward pass of N tokens in bf16, and add up the bytes its
returned cache holds — K/V tensors, and for the hybrids the recurrent and convolution states, each at
the dtype transformers keeps it in. The planner's bytes for the "transformers" layout must equal them
exactly. Windows, kernels and head counts are chosen so that every layout rule shows (N above and
below a sliding window, MQA, GQA, MHA, a conv kernel ≠ 4).

MLA: transformers 5.x caches the compressed latent (kv_lora_rank + qk_rope_head_dim per token and
layer), as vLLM and SGLang do; the decompressed per-head layout (DeepSeek reference attn_impl="naive",
transformers 4.x) is checked against transformers' own `expand_kv`, and the latent figure against
`core/specs` arithmetic. Kimi K3 is not in transformers 5.24; its cache layout is Kimi Linear's
(KDA + MLA), which is checked here.
"""

from __future__ import annotations

import pytest
import torch

from core.plan.config import parse
from core.plan.memory import LAYOUTS, sequence_bytes
from core.specs import DEEPSEEK_V3, KIMI_K3

transformers = pytest.importorskip("transformers")

SMALL = dict(vocab_size=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, max_position_embeddings=256)
DENSE = dict(hidden_size=32, num_hidden_layers=3, intermediate_size=48, num_attention_heads=4, **SMALL)
MLA = dict(kv_lora_rank=12, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=6, q_lora_rank=16)

FAMILIES = {
    "gpt2": dict(model_type="gpt2", n_embd=32, n_layer=2, n_head=4, n_positions=64, vocab_size=64,
                 bos_token_id=1, eos_token_id=2),
    "llama_gqa": dict(model_type="llama", num_key_value_heads=2, **DENSE),
    "llama_mha": dict(model_type="llama", num_key_value_heads=4, **DENSE),
    "gemma_mqa": dict(model_type="gemma", num_key_value_heads=1, head_dim=16, **DENSE),
    "qwen2": dict(model_type="qwen2", num_key_value_heads=2, **DENSE),
    "qwen3": dict(model_type="qwen3", num_key_value_heads=2, head_dim=16, **DENSE),
    "mistral_sliding": dict(model_type="mistral", num_key_value_heads=2, sliding_window=7, **DENSE),
    "gemma2_alternating": dict(model_type="gemma2", num_key_value_heads=2, head_dim=8, sliding_window=9,
                               **{**DENSE, "num_hidden_layers": 4}),
    "gemma3_pattern": dict(model_type="gemma3_text", num_key_value_heads=2, head_dim=8, sliding_window=6,
                           sliding_window_pattern=3, **{**DENSE, "num_hidden_layers": 6}),
    "mixtral": dict(model_type="mixtral", num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
                    sliding_window=None, **DENSE),
    "qwen3_moe": dict(model_type="qwen3_moe", num_key_value_heads=2, head_dim=8, num_experts=4,
                      num_experts_per_tok=2, moe_intermediate_size=16, **DENSE),
    "deepseek_v3": dict(model_type="deepseek_v3", num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2,
                        n_shared_experts=1, moe_intermediate_size=16, first_k_dense_replace=1, n_group=1,
                        topk_group=1, **MLA, **DENSE),
    "qwen3_next": dict(model_type="qwen3_next", num_key_value_heads=2, head_dim=8, num_experts=4,
                       num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=16,
                       linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                       linear_value_head_dim=6, linear_conv_kernel_dim=3,
                       **{**DENSE, "num_hidden_layers": 4}),
    "qwen3_5_text": dict(model_type="qwen3_5_text", num_key_value_heads=2, head_dim=8, linear_num_key_heads=2,
                         linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=6,
                         linear_conv_kernel_dim=3, tie_word_embeddings=True, **{**DENSE, "num_hidden_layers": 4}),
    "qwen3_5_moe_text": dict(model_type="qwen3_5_moe_text", num_key_value_heads=2, head_dim=8, num_experts=4,
                             num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=16,
                             linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                             linear_value_head_dim=6, linear_conv_kernel_dim=3,
                             **{k: v for k, v in {**DENSE, "num_hidden_layers": 4}.items() if k != "intermediate_size"}),
    "kimi_linear": dict(model_type="kimi_linear", num_key_value_heads=4, num_experts=4, num_experts_per_token=2,
                        num_shared_experts=1, moe_intermediate_size=16, first_k_dense_replace=1,
                        linear_attn_config={"head_dim": 8, "num_heads": 4, "short_conv_kernel_size": 4,
                                            "full_attn_layers": [4], "kda_layers": [1, 2, 3]},
                        **{**MLA, "q_lora_rank": None}, **{**DENSE, "num_hidden_layers": 4}),
}  # fmt: skip


def _hf_model(config: dict):
    fields = {k: v for k, v in config.items() if k != "model_type"}
    hf_config = transformers.AutoConfig.for_model(config["model_type"], **fields)
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(hf_config).to(torch.bfloat16).eval()


def _cache_of(model, batch: int, tokens: int):
    ids = torch.randint(3, 64, (batch, tokens))
    with torch.no_grad():
        out = model(ids, use_cache=True)
    return out.cache if getattr(out, "cache", None) is not None else out.past_key_values


def _held_bytes(cache) -> dict[str, int]:
    """Bytes of every tensor the cache holds, by part."""
    parts = {"kv": 0, "state": 0, "conv": 0}
    for layer in cache.layers:
        for name in ("keys", "values"):
            t = getattr(layer, name, None)
            if isinstance(t, torch.Tensor):
                parts["kv"] += t.numel() * t.element_size()
        for name, part in (("recurrent_states", "state"), ("conv_states", "conv")):
            for t in (getattr(layer, name, None) or {}).values():
                if isinstance(t, torch.Tensor):
                    parts[part] += t.numel() * t.element_size()
    return parts


@pytest.fixture(scope="module")
def models():
    return {}


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("tokens", [5, 13])
def test_planner_bytes_equal_what_transformers_holds(family, tokens, models):
    config = FAMILIES[family]
    if family not in models:
        models[family] = _hf_model(config)
    batch = 2
    held = _held_bytes(_cache_of(models[family], batch, tokens))
    ours = sequence_bytes(
        parse(config), tokens, cache_bytes=2, layout="transformers", state_bytes=4, conv_bytes=2
    )
    assert {"kv": ours.kv * batch, "state": ours.state * batch, "conv": ours.conv * batch} == held


def test_mla_per_head_layout_is_what_expand_kv_materialises():
    config = FAMILIES["deepseek_v3"]
    model = _hf_model(config)
    tokens, batch = 9, 2
    cache = _cache_of(model, batch, tokens)
    expanded = 0
    for i, layer in enumerate(cache.layers):
        attn = model.model.layers[i].self_attn
        with torch.no_grad():
            k, v = attn.expand_kv(layer.keys, layer.values)
        expanded += (k.numel() + v.numel()) * k.element_size()
    ours = sequence_bytes(parse(config), tokens, cache_bytes=2, layout=LAYOUTS["per_head"])
    assert ours.kv * batch == expanded


@pytest.mark.parametrize("spec", [DEEPSEEK_V3, KIMI_K3], ids=lambda s: s.key)
def test_latent_figure_matches_core_specs(spec):
    """576 elements per token per MLA layer, as core/specs computes from the same config fields."""
    from pathlib import Path

    name = {"deepseek_v3": "deepseek_v3.json", "kimi_k3": "kimi_k3.json"}[spec.key]
    model = parse((Path(__file__).resolve().parents[3] / "assets/configs" / name).read_text())
    assert sequence_bytes(model, 1000, cache_bytes=2).kv == 1000 * spec.kv_cache_bytes_per_token(2)
    assert sequence_bytes(model, 0, layout="engine").state == spec.recurrent_state_bytes(4)
    assert sequence_bytes(model, 0, layout="engine").conv == spec.conv_state_bytes(2)
    per_head = sequence_bytes(model, 1, layout="per_head").kv
    assert per_head / sequence_bytes(model, 1).kv == spec.attention.heads * (128 + 64 + 128) / 576


@pytest.mark.parametrize("family", list(FAMILIES))
def test_planner_parameters_equal_what_transformers_stores(family, models):
    """Every stored weight, once: the planner's count from config.json equals the model's state dict
    (buffers that checkpoints carry, such as DeepSeek's router score correction, included; a tied head
    counted once). Catches a bias or norm the planner forgets or invents (Qwen2's o_proj has no bias;
    Gemma 2 and 3 norm after the mixer and the FFN too)."""
    if family not in models:
        models[family] = _hf_model(FAMILIES[family])
    stored = {t.data_ptr(): t.numel() for t in models[family].state_dict().values()}
    assert parse(FAMILIES[family]).spec.total_params() == sum(stored.values())


def _qwen3_5_multimodal(tied: bool):
    """The layout the small Qwen3.5 releases ship: the text model under `text_config`, a vision tower beside it."""
    text = {
        k: v for k, v in FAMILIES["qwen3_5_text"].items() if k not in ("model_type", "tie_word_embeddings")
    }
    vision = dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=32, patch_size=4,
                  num_position_embeddings=16)  # fmt: skip
    config = dict(model_type="qwen3_5", text_config=text, vision_config=vision, tie_word_embeddings=tied)
    hf_config = transformers.Qwen3_5Config(text_config=text, vision_config=vision, tie_word_embeddings=tied)
    torch.manual_seed(0)
    return config, transformers.Qwen3_5ForConditionalGeneration(hf_config).to(torch.bfloat16).eval()


@pytest.mark.parametrize("tied", [True, False])
def test_multimodal_qwen3_5_config_plans_its_text_model(tied):
    """`qwen3_5` (text under text_config): cache bytes as transformers holds them, and the text model's
    weights — everything but the vision tower — counted once (the head tied by the outer flag)."""
    config, model = _qwen3_5_multimodal(tied)
    tokens, batch = 11, 2
    held = _held_bytes(_cache_of(model, batch, tokens))
    ours = sequence_bytes(
        parse(config), tokens, cache_bytes=2, layout="transformers", state_bytes=4, conv_bytes=2
    )
    assert {"kv": ours.kv * batch, "state": ours.state * batch, "conv": ours.conv * batch} == held
    stored = {
        t.data_ptr(): t.numel() for n, t in model.state_dict().items() if not n.startswith("model.visual.")
    }
    assert parse(config).spec.total_params() == sum(stored.values())
    assert parse(config).spec.kinds == ("gated_delta",) * 3 + (parse(config).spec.attention.kind,)


def test_the_shipped_qwen3_5_35b_a3b_has_transformers_parameters():
    """Qwen3.5-35B-A3B (assets/configs, written by hand from transformers' Qwen3_5MoeTextConfig, whose defaults
    are that model's): the planner's parameter count equals the transformers model built from the same text
    sizes on the meta device (no memory, nothing downloaded) — 34,660,610,688, 3.45 B of them active."""
    import json
    from pathlib import Path

    config = json.loads(
        (Path(__file__).resolve().parents[3] / "assets/configs/qwen3_5_35b_a3b.json").read_text()
    )
    text = {
        k: v for k, v in config["text_config"].items() if k not in ("model_type", "mamba_ssm_dtype", "dtype")
    }
    with torch.device("meta"):
        model = transformers.Qwen3_5MoeForCausalLM(transformers.Qwen3_5MoeTextConfig(**text))
    stored = sum(p.numel() for p in model.parameters())
    spec = parse(config).spec
    assert spec.total_params() == stored == 34_660_610_688
    assert round(spec.active_params() / 1e9, 2) == 3.45
    defaults = transformers.Qwen3_5MoeTextConfig()  # the shapes; the context is the released configs' 262,144
    shapes = [k for k in text if k not in ("max_position_embeddings", "full_attention_interval")]
    assert {k: getattr(defaults, k) for k in shapes} == {k: text[k] for k in shapes}
