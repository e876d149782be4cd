"""A model's `config.json` → the project's spec types (`core.specs.ModelSpec`), for the families that matter.

Field names are those of the released Hugging Face configs, read the way `transformers` reads them
(`models/<family>/configuration_<family>.py` in transformers 5.x):

- GPT-2 (`gpt2`): n_embd, n_layer, n_head, n_positions, n_inner.
- Llama / Mistral / Qwen2 / Qwen3 / Gemma 1–3 (+ Mixtral, Qwen3-MoE): hidden_size, num_hidden_layers,
  num_attention_heads, num_key_value_heads (MHA when equal, GQA when fewer, MQA when 1), head_dim,
  intermediate_size; sliding-window layers from `layer_types`, else Mistral's `sliding_window`, Qwen2's
  `use_sliding_window` + `max_window_layers`, Gemma 2's alternation, Gemma 3's `sliding_window_pattern`.
- DeepSeek-V2/V3, Kimi K2 (`deepseek_v3`, `kimi_k2`): MLA (q_lora_rank, kv_lora_rank, qk_nope_head_dim,
  qk_rope_head_dim, v_head_dim) and DeepSeekMoE (n_routed_experts, num_experts_per_tok, n_shared_experts,
  moe_intermediate_size, first_k_dense_replace).
- Qwen3-Next (`qwen3_next`): gated attention + Gated DeltaNet (linear_num_key_heads, linear_num_value_heads,
  linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim), `layer_types` or
  `full_attention_interval`, MoE with one gated shared expert.
- Qwen3.5 (`qwen3_5_text`, and the multimodal `qwen3_5` with its `text_config`): Qwen3-Next's layers
  (Gated DeltaNet + gated attention, the same fields) with a dense SwiGLU MLP instead of experts.
- Qwen3.5-MoE (`qwen3_5_moe_text`, and the multimodal `qwen3_5_moe`: Qwen3.5-35B-A3B, 122B-A10B,
  397B-A17B): Qwen3.5's layers with Qwen3-Next's experts in every layer (num_experts,
  num_experts_per_tok, moe_intermediate_size, one gated shared expert of shared_expert_intermediate_size;
  transformers `Qwen3_5MoeTextConfig`, `Qwen3_5MoeSparseMoeBlock`).
- Any of them may say `mamba_ssm_dtype` (Qwen3.5's released configs: "float32"), the dtype its authors
  keep the recurrent state in; `PlannedModel.state_dtype` holds it as a state format key.
- Kimi Linear / Kimi K3 (`kimi_linear`, `kimi_k3` with its `text_config`): KDA layers from
  `linear_attn_config` (kda_layers, full_attn_layers, num_heads, head_dim, short_conv_kernel_size),
  MLA, MoE; K3's latent MoE (`routed_expert_hidden_size`, `latent_moe_use_norm`), gated MLA
  (`mla_use_output_gate`), full-rank KDA gate and Attention Residuals (`attn_res_block_size`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from core.i18n import _
from core.plan.errors import ConfigError
from core.plan.fields import Fields
from core.specs import (
    DenseMLP,
    LatentAttention,
    LinearAttention,
    MixtureOfExperts,
    ModelSpec,
    SoftmaxAttention,
)

MAX_CONFIG_BYTES = 1_000_000  # a real config.json is a few kB; anything near this is not one


@dataclass(frozen=True)
class PlannedModel:
    """A parsed config: the spec, and what the spec types do not carry (sliding-window layers)."""

    spec: ModelSpec
    family: str
    sliding_window: int | None = None
    sliding_layers: tuple[int, ...] = ()  # 0-based ids of the layers that keep only the last window
    state_dtype: str | None = None  # the config's mamba_ssm_dtype as a state format key ("fp32", "bf16")


DENSE = ("llama", "mistral", "ministral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "gemma3_text")
DENSE_MOE = ("mixtral", "qwen3_moe", "qwen2_moe")
MLA_MOE = ("deepseek_v2", "deepseek_v3", "kimi_k2")
QWEN3_5 = ("qwen3_5", "qwen3_5_text")
QWEN3_5_MOE = ("qwen3_5_moe", "qwen3_5_moe_text")
FAMILIES = (
    "gpt2", *DENSE, *DENSE_MOE, *MLA_MOE, "qwen3_next", *QWEN3_5, *QWEN3_5_MOE, "kimi_linear", "kimi_k3",
)  # fmt: skip
# mamba_ssm_dtype → the state format key (core/plan/formats.py STATE_FORMATS); fp16 is 2 bytes, as bf16
STATE_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "bf16"}


SHIPPED_CONFIGS = Path(__file__).resolve().parents[2] / "assets" / "configs"  # the configs the course ships


def loads(text: str | bytes) -> dict:
    """Parse JSON text into a dict, with one-line errors for too large, malformed or non-object input."""
    if isinstance(text, bytes):
        if len(text) > MAX_CONFIG_BYTES:
            raise ConfigError(
                _("config is {n:,} bytes; a config.json is a few kB (limit {limit:,})").format(
                    n=len(text), limit=MAX_CONFIG_BYTES
                )
            )
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(_("config is not UTF-8 text")) from None
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(
            _("config is {n:,} characters; a config.json is a few kB (limit {limit:,})").format(
                n=len(text), limit=MAX_CONFIG_BYTES
            )
        )
    if not text.strip():
        raise ConfigError(_("config is empty"))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            _("not valid JSON: {reason} at line {line} column {column}").format(
                reason=exc.msg, line=exc.lineno, column=exc.colno
            )
        ) from None
    except RecursionError:
        raise ConfigError(_("not valid JSON: nested too deeply")) from None
    if not isinstance(data, dict):
        raise ConfigError(_("config must be a JSON object, got {kind}").format(kind=type(data).__name__))
    return data


def _family(data: dict) -> str:
    family = data.get("model_type")
    if family is None:
        for arch in data.get("architectures") or []:
            name = str(arch).lower().replace("forcausallm", "").replace("forconditionalgeneration", "")
            for known in sorted(FAMILIES, key=len, reverse=True):
                if name == known.replace("_", ""):
                    return known
        raise ConfigError(_("config: missing field 'model_type' (and no known 'architectures')"))
    if not isinstance(family, str) or family not in FAMILIES:
        raise ConfigError(
            _("unknown model_type {family!r}; the planner reads: {known}").format(
                family=str(family)[:60], known=_(", ").join(FAMILIES)
            )
        )
    return family


def parse(data: dict | str | bytes, key: str = "config", name: str | None = None) -> PlannedModel:
    """Any supported config (dict or JSON text) → a PlannedModel; ConfigError with one line otherwise."""
    if not isinstance(data, dict):
        data = loads(data)
    family = _family(data)
    label = name or str(data.get("_name_or_path") or family)[:80]
    if family == "kimi_k3" or (family in ("gemma3",) and isinstance(data.get("text_config"), dict)):
        text = data.get("text_config")
        if not isinstance(text, dict):
            raise ConfigError(
                _("{family} config: missing field '{name}'").format(family=family, name="text_config")
            )
        data = {**text, "model_type": family}
    elif family in ("qwen3_5", "qwen3_5_moe"):
        data = _qwen3_5_text(data, family)
    f = Fields(data, family)
    if family == "gpt2":
        planned = _gpt2(f)
    elif family in DENSE or family in DENSE_MOE:
        planned = _dense(f)
    elif family in MLA_MOE:
        planned = _deepseek(f)
    elif family == "qwen3_next" or family in QWEN3_5_MOE:
        planned = _qwen3_next(f)
    elif family in QWEN3_5:
        planned = _qwen3_5(f)
    else:
        planned = _kimi(f)
    spec = planned.spec
    total, active = spec.total_params(), spec.active_params()
    spec = replace(spec, key=key, name=label, published_params=total, published_active=active)
    return replace(planned, spec=spec, state_dtype=_state_dtype(f))


def _state_dtype(f: Fields) -> str | None:
    """The config's `mamba_ssm_dtype` as a state format key; None where the config does not say."""
    dtype = f.raw("mamba_ssm_dtype", None)
    if dtype is None:
        return None
    if not isinstance(dtype, str) or dtype not in STATE_DTYPES:
        raise ConfigError(
            _("{family} config: mamba_ssm_dtype {dtype!r}; the planner reads {known}").format(
                family=f.family, dtype=str(dtype)[:40], known=_(", ").join(STATE_DTYPES)
            )
        )
    return STATE_DTYPES[dtype]


def _base(f: Fields, **kw) -> ModelSpec:
    return ModelSpec(
        key="config",
        name=f.family,
        year=0,
        source="parsed from config.json by core/plan/config.py",
        vocab=f.int("vocab_size"),
        context=f.int("max_position_embeddings", f.data.get("model_max_length", 0), minimum=0) or 0,
        published_params=0,
        published_active=0,
        **kw,
    )


def _gpt2(f: Fields) -> PlannedModel:
    hidden, heads = f.int("n_embd"), f.int("n_head")
    if hidden % heads:
        raise ConfigError(
            _("gpt2 config: n_embd {hidden} is not a multiple of n_head {heads}").format(
                hidden=hidden, heads=heads
            )
        )
    spec = ModelSpec(
        key="config", name="gpt2", year=0, source="parsed from config.json",
        hidden=hidden, num_layers=f.int("n_layer"), vocab=f.int("vocab_size"), context=f.int("n_positions"),
        attention=SoftmaxAttention(heads=heads, kv_heads=heads, head_dim=hidden // heads, bias=True),
        mlp=DenseMLP(intermediate=f.int("n_inner", 4 * hidden), gated=False, bias=True),
        published_params=0, published_active=0, tied_embeddings=True, learned_positions=True, norm="layernorm",
    )  # fmt: skip
    return PlannedModel(spec, "gpt2")


def _attention(f: Fields, **kw) -> SoftmaxAttention:
    hidden, heads = f.int("hidden_size"), f.int("num_attention_heads")
    kv_heads = f.int("num_key_value_heads", heads)
    if heads % kv_heads:
        raise ConfigError(
            _("{family} config: num_attention_heads {heads} is not a multiple of num_key_value_heads").format(
                family=f.family, heads=heads
            )
        )
    head_dim = f.int("head_dim", hidden // heads if hidden % heads == 0 else None)
    return SoftmaxAttention(heads=heads, kv_heads=kv_heads, head_dim=head_dim, **kw)


def _sliding(f: Fields, layers: int) -> tuple[int | None, tuple[int, ...]]:
    """Which layers keep only a window, the way transformers' configs decide it."""
    types = f.str_list("layer_types", None)
    window = f.int("sliding_window", None)
    if types is not None:
        if len(types) != layers:
            raise ConfigError(
                _("{family} config: layer_types has {n} entries for {layers} layers").format(
                    family=f.family, n=len(types), layers=layers
                )
            )
        ids = tuple(i for i, t in enumerate(types) if t == "sliding_attention")
        if ids and window is None:
            raise ConfigError(
                _("{family} config: missing field '{name}'").format(family=f.family, name="sliding_window")
            )
        return (window, ids) if ids else (None, ())
    if window is None:
        return None, ()
    family = f.family
    if family in ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe"):
        if not f.flag("use_sliding_window", False):
            return None, ()
        start = f.int("max_window_layers", layers, minimum=0)
        return window, tuple(i for i in range(layers) if i >= start)
    if family == "gemma2":
        return window, tuple(i for i in range(layers) if (i + 1) % 2)
    if family in ("gemma3", "gemma3_text"):
        pattern = f.int("sliding_window_pattern", 6)
        return window, tuple(i for i in range(layers) if (i + 1) % pattern)
    if family in ("mistral", "mixtral", "ministral"):
        return window, tuple(range(layers))
    return None, ()


def _dense(f: Fields) -> PlannedModel:
    family = f.family
    layers, hidden = f.int("num_hidden_layers"), f.int("hidden_size")
    attention = _attention(
        f,
        bias=f.flag("attention_bias", family in ("qwen2", "qwen2_moe")),
        out_bias=family not in ("qwen2", "qwen2_moe"),  # transformers' Qwen2 o_proj has no bias
        qk_norm=family in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text"),
    )
    moe = None
    if family == "mixtral":
        moe = MixtureOfExperts(experts=f.int("num_local_experts"), top_k=f.int("num_experts_per_tok"), shared=0,
                               expert_intermediate=f.int("intermediate_size"), shared_intermediate=0, router_bias=False)  # fmt: skip
    elif family in ("qwen3_moe", "qwen2_moe"):
        shared = f.int("shared_expert_intermediate_size", 0, minimum=0)
        moe = MixtureOfExperts(experts=f.int("num_experts"), top_k=f.int("num_experts_per_tok"), shared=1 if shared else 0,
                               expert_intermediate=f.int("moe_intermediate_size"), shared_intermediate=shared,
                               router_bias=False, shared_gate=bool(shared))  # fmt: skip
    window, sliding = _sliding(f, layers)
    tied = f.flag("tie_word_embeddings", family.startswith("gemma"))
    spec = _base(f, hidden=hidden, num_layers=layers, attention=attention,
                 mlp=DenseMLP(intermediate=f.int("intermediate_size")), tied_embeddings=tied, moe=moe,
                 norms_per_layer=4 if family in ("gemma2", "gemma3", "gemma3_text") else 2)  # fmt: skip
    return PlannedModel(spec, family, window, sliding)


def _mla(f: Fields, output_gate: bool = False) -> LatentAttention:
    return LatentAttention(
        heads=f.int("num_attention_heads"),
        q_lora_rank=f.int("q_lora_rank", None),
        kv_lora_rank=f.int("kv_lora_rank"),
        qk_nope_head_dim=f.int("qk_nope_head_dim"),
        qk_rope_head_dim=f.int("qk_rope_head_dim"),
        v_head_dim=f.int("v_head_dim"),
        output_gate=output_gate,
    )


def _deepseek(f: Fields) -> PlannedModel:
    moe = MixtureOfExperts(
        experts=f.int("n_routed_experts"),
        top_k=f.int("num_experts_per_tok"),
        shared=f.int("n_shared_experts", 0, minimum=0),
        expert_intermediate=f.int("moe_intermediate_size"),
        shared_intermediate=f.int("moe_intermediate_size"),
        router_bias=f.raw("topk_method", "noaux_tc") == "noaux_tc",
    )
    spec = _base(f, hidden=f.int("hidden_size"), num_layers=f.int("num_hidden_layers"), attention=_mla(f),
                 mlp=DenseMLP(intermediate=f.int("intermediate_size")), moe=moe,
                 first_k_dense=f.int("first_k_dense_replace", 0, minimum=0),
                 tied_embeddings=f.flag("tie_word_embeddings", False))  # fmt: skip
    return PlannedModel(spec, f.family)


def _kinds_from_types(f: Fields, layers: int, linear: str, full: str, default_every: int) -> tuple[str, ...]:
    types = f.str_list("layer_types", None)
    if types is None:
        every = f.int("full_attention_interval", default_every)
        return tuple(full if (i + 1) % every == 0 else linear for i in range(layers))
    if len(types) != layers:
        raise ConfigError(
            _("{family} config: layer_types has {n} entries for {layers} layers").format(
                family=f.family, n=len(types), layers=layers
            )
        )
    unknown = sorted(set(types) - {"linear_attention", "full_attention"})
    if unknown:
        raise ConfigError(
            _("{family} config: unknown layer type {kind!r}").format(family=f.family, kind=unknown[0])[:200]
        )
    return tuple(full if t == "full_attention" else linear for t in types)


def _gated_delta(f: Fields) -> LinearAttention:
    """Qwen3-Next's and Qwen3.5's Gated DeltaNet layer: q/k heads, value heads, head sizes, conv kernel."""
    return LinearAttention(
        kind="gated_delta",
        qk_heads=f.int("linear_num_key_heads"),
        v_heads=f.int("linear_num_value_heads"),
        head_k_dim=f.int("linear_key_head_dim"),
        head_v_dim=f.int("linear_value_head_dim"),
        conv_kernel=f.int("linear_conv_kernel_dim", 4),
    )


def _qwen3_next(f: Fields) -> PlannedModel:
    """Qwen3-Next, and Qwen3.5-MoE (the same layers and experts): Gated DeltaNet and gated attention, experts
    with one gated shared expert in every layer."""
    layers = f.int("num_hidden_layers")
    attention = _attention(f, output_gate=True, qk_norm=True)
    linear = _gated_delta(f)
    shared = f.int("shared_expert_intermediate_size", 0, minimum=0)
    moe = MixtureOfExperts(experts=f.int("num_experts"), top_k=f.int("num_experts_per_tok"), shared=1 if shared else 0,
                           expert_intermediate=f.int("moe_intermediate_size"), shared_intermediate=shared,
                           router_bias=False, shared_gate=bool(shared))  # fmt: skip
    kinds = _kinds_from_types(f, layers, "gated_delta", attention.kind, 4)
    spec = _base(f, hidden=f.int("hidden_size"), num_layers=layers, attention=attention,
                 mlp=DenseMLP(intermediate=f.int("intermediate_size", 1)), linear=linear, kinds=kinds, moe=moe,
                 tied_embeddings=f.flag("tie_word_embeddings", False))  # fmt: skip
    return PlannedModel(spec, f.family)


def _qwen3_5_text(data: dict, family: str) -> dict:
    """The multimodal Qwen3.5 (or Qwen3.5-MoE) config's text part, with the outer `tie_word_embeddings`
    (transformers ties the head by the outer config's flag, false by default in `Qwen3_5Config`)."""
    text = data.get("text_config")
    if not isinstance(text, dict):
        raise ConfigError(
            _("{family} config: missing field '{name}'").format(family=family, name="text_config")
        )
    return {**text, "model_type": family, "tie_word_embeddings": data.get("tie_word_embeddings", False)}


def _qwen3_5(f: Fields) -> PlannedModel:
    """Qwen3.5: Qwen3-Next's Gated DeltaNet and gated attention layers, a dense MLP in every layer."""
    layers = f.int("num_hidden_layers")
    attention = _attention(f, output_gate=True, qk_norm=True)
    linear = _gated_delta(f)
    kinds = _kinds_from_types(f, layers, "gated_delta", attention.kind, 4)
    spec = _base(f, hidden=f.int("hidden_size"), num_layers=layers, attention=attention,
                 mlp=DenseMLP(intermediate=f.int("intermediate_size")), linear=linear, kinds=kinds,
                 tied_embeddings=f.flag("tie_word_embeddings", False))  # fmt: skip
    return PlannedModel(spec, f.family)


def _kimi(f: Fields) -> PlannedModel:
    layers = f.int("num_hidden_layers")
    lin = f.sub("linear_attn_config")
    heads = lin.int("num_heads")
    head_dim = lin.int("head_dim")
    linear = LinearAttention(kind="kda", qk_heads=heads, v_heads=heads, head_k_dim=head_dim, head_v_dim=head_dim,
                             conv_kernel=lin.int("short_conv_kernel_size", 4),
                             full_rank_gate=lin.flag("use_full_rank_gate", False))  # fmt: skip
    attention = _mla(f, output_gate=f.flag("mla_use_output_gate", False))
    full_layers = lin.int_list("full_attn_layers", None)
    if full_layers is None:
        kinds = _kinds_from_types(f, layers, "kda", "mla", 4)
    else:
        bad = [i for i in full_layers if not 1 <= i <= layers]
        if bad:
            raise ConfigError(
                _("{family} config: full_attn_layers names layer {bad} of {layers} (1-based)").format(
                    family=f.family, bad=bad[0], layers=layers
                )
            )
        kinds = tuple("mla" if i + 1 in set(full_layers) else "kda" for i in range(layers))
    latent = f.int("routed_expert_hidden_size", None)
    moe = MixtureOfExperts(
        experts=f.int("num_experts"),
        top_k=f.int("num_experts_per_token", f.data.get("num_experts_per_tok")),
        shared=f.int("num_shared_experts", 0, minimum=0),
        expert_intermediate=f.int("moe_intermediate_size"),
        shared_intermediate=f.int("moe_intermediate_size"),
        latent_dim=latent,
        latent_norm=bool(latent) and f.flag("latent_moe_use_norm", False),
    )
    spec = _base(f, hidden=f.int("hidden_size"), num_layers=layers, attention=attention,
                 mlp=DenseMLP(intermediate=f.int("intermediate_size")), linear=linear, kinds=kinds, moe=moe,
                 first_k_dense=f.int("first_k_dense_replace", 1, minimum=0),
                 attn_res_block_size=f.int("attn_res_block_size", None),
                 tied_embeddings=f.flag("tie_word_embeddings", False))  # fmt: skip
    return PlannedModel(spec, f.family)
