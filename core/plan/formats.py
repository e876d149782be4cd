"""Weight and cache formats at their real bits per element, with where each number comes from.

A quantised format stores more than its nominal bits: every block of weights carries a scale
(and sometimes a zero point or a second-level scale), so "4-bit" is 4.25–4.9 bits on disk and
in memory. The planner multiplies parameter counts by these *effective* figures.

Sources:
- GGUF block layouts: ggml-org/llama.cpp `ggml/src/ggml-common.h` (block_q8_0 = fp16 scale + 32 int8
  = 34 bytes / 32 weights; block_q4_0 = fp16 scale + 16 bytes of nibbles = 18 bytes / 32 weights).
- Q4_K_M and Q8_0 as whole-model mixes: llama.cpp `tools/quantize/README.md`, table for
  meta-llama/Llama-3.1-8B: Q4_K_M 4.8944 bits/weight, Q8_0 8.5008 (Q4_K_M keeps some tensors in Q6_K).
- AWQ / GPTQ (4-bit, group size 128): one fp16 scale and one 4-bit zero point per group of 128
  (AutoAWQ `GEMM` packing, AutoGPTQ `QuantLinear`): 4 + 20/128 = 4.156 bits.
- MXFP4: OCP Microscaling Formats (MX) v1.0: FP4 E2M1 elements, one E8M0 scale per 32 → 4.25 bits.
- NVFP4: NVIDIA "Introducing NVFP4" (2025): FP4 E2M1 elements, one FP8 E4M3 scale per 16 → 4.5 bits
  (+ one fp32 per tensor, negligible).
- FP8 / INT8 with per-channel or per-tensor scales: 8 bits (DeepSeek-V3's 128×128 block scales add
  0.002 bits, ignored).
- Kimi K3 as released: routed experts MXFP4 (compressed-tensors "mxfp4-pack-quantized", group 32),
  everything else BF16 (huggingface.co/moonshotai/Kimi-K3 config.json, quantization_config).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from core.i18n import N_


@dataclass(frozen=True)
class WeightFormat:
    """Bits per weight; `expert_bits` set means routed experts use it and everything else `bits`."""

    key: str
    label: str
    bits: float
    source: str
    expert_bits: float | None = None
    # the input table (with any learned positions) and the output head, where a format stores them
    # at other bits than the rest: engines' quantised checkpoints keep both in BF16 (vLLM's quantised
    # linear layers, llm-compressor and AutoAWQ leave embed_tokens and lm_head alone); llama.cpp's
    # Q4_0 writes the head as Q6_K. None: the same bits as the rest (GGUF mixes read from a whole
    # file's size already include them).
    table_bits: float | None = None
    head_bits: float | None = None

    def bytes_per_param(self, expert: bool = False) -> float:
        bits = self.expert_bits if (expert and self.expert_bits is not None) else self.bits
        return bits / 8

    @property
    def keeps_ends_apart(self) -> bool:
        """True when the input table or the output head is stored at other bits than the rest."""
        return self.table_bits is not None or self.head_bits is not None


@dataclass(frozen=True)
class CacheFormat:
    """Bytes per cached K/V (or latent) element."""

    key: str
    label: str
    bytes_per_element: float
    source: str


# Labels and sources are marked with N_ (module constants) and translated where they are shown: `_(fmt.label)`.
Q6_K_BITS = 210 * 8 / 256  # block_q6_K: 128 + 64 + 16 bytes of quants and scales + an fp16 scale per 256


def _engine(key: str, label: str, bits: float, source: str) -> WeightFormat:
    """A format engines load as quantised linear layers: the table and the head stay BF16."""
    return WeightFormat(key, label, bits, source, table_bits=16.0, head_bits=16.0)


WEIGHT_FORMATS: dict[str, WeightFormat] = {
    f.key: f
    for f in (
        WeightFormat("bf16", N_("BF16 / FP16"), 16.0, N_("2 bytes per weight")),
        _engine("fp8", N_("FP8 (E4M3, per-channel scales)"), 8.0, N_("1 byte per weight; scales negligible")),
        _engine(
            "int8", N_("INT8 (W8A16, per-channel scales)"), 8.0, N_("1 byte per weight; scales negligible")
        ),
        WeightFormat(
            "q8_0",
            N_("GGUF Q8_0"),
            8.5008,
            N_("llama.cpp tools/quantize/README.md (Llama-3.1-8B table); block: 34 bytes / 32 weights"),
        ),
        WeightFormat(
            "q4_k_m",
            N_("GGUF Q4_K_M"),
            4.8944,
            N_("llama.cpp tools/quantize/README.md (Llama-3.1-8B table): mix of Q4_K (4.5) and Q6_K (6.56)"),
        ),
        WeightFormat(
            "q4_0",
            N_("GGUF Q4_0"),
            4.5,
            N_(
                "llama.cpp ggml/src/ggml-common.h block layout: 18 bytes / 32 weights; the output head as Q6_K "
                "(210 bytes / 256), llama-quantize's default"
            ),
            head_bits=Q6_K_BITS,
        ),
        _engine(
            "awq4", N_("AWQ / GPTQ 4-bit, group 128"), 4 + 20 / 128, N_("fp16 scale + 4-bit zero per 128")
        ),
        _engine("mxfp4", N_("MXFP4"), 4.25, N_("OCP MX v1.0: E2M1 + one E8M0 scale per 32")),
        _engine("nvfp4", N_("NVFP4"), 4.5, N_("NVIDIA NVFP4: E2M1 + one E4M3 scale per 16")),
        WeightFormat(
            "mxfp4_experts",
            N_("Routed experts MXFP4, rest BF16 (Kimi K3 as released)"),
            16.0,
            N_(
                "huggingface.co/moonshotai/Kimi-K3 quantization_config (experts mxfp4-pack-quantized, group 32)"
            ),
            expert_bits=4.25,
        ),
    )
}

CACHE_FORMATS: dict[str, CacheFormat] = {
    f.key: f
    for f in (
        CacheFormat("bf16", N_("BF16 / FP16"), 2.0, N_("2 bytes per element")),
        CacheFormat("fp8", N_("FP8 (vLLM kv_cache_dtype=fp8)"), 1.0, N_("1 byte per element")),
        CacheFormat(
            "q8_0",
            N_("GGUF q8_0 (llama.cpp -ctk/-ctv q8_0)"),
            34 / 32,
            N_("llama.cpp ggml/src/ggml-common.h block layout: 34 bytes / 32"),
        ),
        CacheFormat(
            "q4_0",
            N_("GGUF q4_0 (llama.cpp -ctk/-ctv q4_0)"),
            18 / 32,
            N_("llama.cpp ggml/src/ggml-common.h block layout: 18 bytes / 32"),
        ),
    )
}

# The fixed recurrent state of Gated DeltaNet / KDA layers: "config" (the default) takes the config's own
# `mamba_ssm_dtype` (Qwen3.5's released configs say float32; `state_format_for`), fp32 where it says
# nothing. Without the config's word: fla and transformers keep it in fp32
# (measured in tests/core/plan/test_vs_transformers.py), as vLLM does for KDA; vLLM keeps Gated
# DeltaNet's in the model dtype unless told otherwise (vLLM model_executor/layers/mamba/mamba_utils.py,
# MambaStateDtypeCalculator). Its short-convolution buffer is in the model dtype everywhere.
STATE_FORMATS: dict[str, CacheFormat] = {
    f.key: f
    for f in (
        CacheFormat(
            "config",
            N_("As the config says (mamba_ssm_dtype), else FP32"),
            4.0,  # where the config says nothing (`state_format_for` reads what it says)
            N_("the config's mamba_ssm_dtype; where it has none, fla's and transformers' float32"),
        ),
        CacheFormat(
            "fp32",
            N_("FP32 (fla, transformers; vLLM for KDA)"),
            4.0,
            N_(
                "fla and transformers allocate it in float32; vLLM model_executor/layers/mamba/mamba_utils.py "
                "(MambaStateDtypeCalculator): kda_state_dtype keeps it float32"
            ),
        ),
        CacheFormat(
            "bf16",
            N_("BF16 (vLLM's default for Gated DeltaNet)"),
            2.0,
            N_(
                "vLLM model_executor/layers/mamba/mamba_utils.py (MambaStateDtypeCalculator): "
                "gated_delta_net_state_dtype follows mamba_ssm_cache_dtype='auto', the model dtype"
            ),
        ),
    )
}
STATE_BYTES = STATE_FORMATS["fp32"].bytes_per_element
CONV_BYTES = 2.0


Format = TypeVar("Format")


def _lookup(table: dict[str, Format], key: str, what: str) -> Format:
    """`table[key]`; an unknown key is a ValueError that names the known ones."""
    if key not in table:
        raise ValueError(f"unknown {what} {key!r}; known: {', '.join(table)}")
    return table[key]


def weight_format(key: str) -> WeightFormat:
    return _lookup(WEIGHT_FORMATS, key, "weight format")


def cache_format(key: str) -> CacheFormat:
    return _lookup(CACHE_FORMATS, key, "cache format")


def state_format(key: str) -> CacheFormat:
    return _lookup(STATE_FORMATS, key, "state format")


def state_format_for(key: str, config_dtype: str | None) -> CacheFormat:
    """The state format a plan uses: `key`, or for "config" the config's mamba_ssm_dtype (`config_dtype`,
    a key of STATE_FORMATS as core/plan/config.py reads it), FP32 where the config says nothing."""
    if key == "config":
        return STATE_FORMATS[config_dtype or "fp32"]
    return state_format(key)
