"""The bytes a token reads from a mixture of experts, in the released formats.

Only the routed experts a token picks are read (plus the shared ones and everything outside the MoE);
K3's routed experts ship in MXFP4 (`MXFP4_BYTES_PER_PARAM`), the rest in bf16. `expert_reads` gives a
decoding step of a batch: distinct experts touched (`core.plan.experts.distinct_experts`) and bytes.
"""

from __future__ import annotations

import numpy as np

from core.plan.experts import distinct_experts
from core.roofline import active_weight_bytes, weight_bytes
from core.specs import ModelSpec
from core.units import format_params

# MXFP4 (OCP Microscaling): 4-bit values, one shared 8-bit scale per group of 32 → 4.25 bits each.
# K3's released routed experts are stored this way (compressed-tensors "mxfp4-pack-quantized",
# group 32); attention, shared experts, the dense layer and the head stay in bf16.
MXFP4_BYTES_PER_PARAM = (4 + 8 / 32) / 8


def routed_expert_params(spec: ModelSpec, active: bool = True) -> int:
    """Parameters in routed experts: the top-k a token wakes (active) or all of them, over every MoE layer."""
    if spec.moe is None:
        return 0
    moe_layers = spec.num_layers - spec.first_k_dense
    per_layer = spec.moe.top_k if active else spec.moe.experts
    return moe_layers * per_layer * spec.moe.expert_params(spec.hidden)


def release_weight_bytes_per_token(spec: ModelSpec) -> float:
    """Weight bytes one token reads in the released formats: routed experts MXFP4, everything else bf16."""
    routed = routed_expert_params(spec, active=True)
    rest = spec.active_params(count_embedding_table=False) - routed
    return rest * 2.0 + routed * MXFP4_BYTES_PER_PARAM


def example_picks(num_routed: int, top_k: int, seed: int = 0) -> list[int]:
    """`top_k` distinct routed experts for K3's expert grid to light, as one token would (sorted).

    K3's own router is not run here (its weights are the released 1.4 TB), so which experts light
    up is an example drawn with a fixed seed; how many is the config's top_k. mini-K3's page shows
    real picks of a real router."""
    if not 1 <= top_k <= num_routed:
        raise ValueError(f"top_k must be in 1..{num_routed}, got {top_k}")
    rng = np.random.default_rng(seed)
    return sorted(int(e) for e in rng.choice(num_routed, size=top_k, replace=False))


def bytes_per_token_rows(spec: ModelSpec, bytes_per_param: float = 2.0) -> list[tuple[str, float]]:
    """Weight bytes one token reads: a dense model of K3's total size vs K3's experts (bf16)."""
    return [
        (f"dense, {format_params(spec.total_params())} all read", weight_bytes(spec, bytes_per_param)),
        (f"{spec.name}: shared + {spec.moe.top_k} routed", active_weight_bytes(spec, bytes_per_param)),
    ]


def expert_reads(
    spec: ModelSpec, bits_per_expert_weight: float, batches: list[int]
) -> list[dict[str, float]]:
    """Per decoding step of a batch: distinct experts per MoE layer and routed-expert bytes, in all and per token."""
    if spec.moe is None:
        raise ValueError(f"{spec.name} has no experts")
    layers = spec.num_layers - spec.first_k_dense
    per_expert = spec.moe.expert_params(spec.hidden) * bits_per_expert_weight / 8
    rows = []
    for b in batches:
        touched = distinct_experts(spec.moe.experts, spec.moe.top_k, b)
        step = layers * touched * per_expert
        rows.append({"batch": b, "experts": touched, "step_bytes": step, "per_token_bytes": step / b})
    return rows
