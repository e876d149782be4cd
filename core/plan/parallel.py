"""Tensor parallelism's even splits: the GPU counts a model's heads allow, and the fewest that hold it all."""

from __future__ import annotations

import math

from core.i18n import N_
from core.plan.cards import PlanCard
from core.plan.config import PlannedModel
from core.plan.footprint import replication, reserve_bytes, stored_per_sequence
from core.plan.inputs import PlanInputs
from core.plan.memory import SequenceBytes
from core.specs import LatentAttention


def split_heads(model: PlannedModel) -> dict[str, int]:
    """Every head count tensor parallelism must split evenly (vLLM checks each), by name: the
    attention heads and, for linear-attention layers, their query/key and value heads."""
    spec = model.spec
    counts = {N_("attention"): spec.attention.heads}  # names marked: a caution shows them translated
    if spec.linear is not None:
        counts |= {
            N_("linear-attention query/key"): spec.linear.qk_heads,
            N_("linear-attention value"): spec.linear.v_heads,
        }
    return counts


def even_splits(model: PlannedModel) -> list[int]:
    """GPU counts tensor parallelism can use for this model: those that divide every head count and,
    for grouped-query attention, either divide the key/value heads or are a multiple of them (vLLM's
    QKVParallelLinear then repeats each key/value head on several GPUs)."""
    common = math.gcd(*split_heads(model).values())
    attention = model.spec.attention
    kv = None if isinstance(attention, LatentAttention) else attention.kv_heads
    return [
        k
        for k in range(1, min(common, 1024) + 1)
        if common % k == 0 and (kv is None or kv % k == 0 or k % kv == 0)
    ]


def gpus_needed(
    model: PlannedModel, seq: SequenceBytes, weights: float, inputs: PlanInputs, target: PlanCard
):
    """The fewest GPUs of `target` that split the heads evenly (`even_splits`) and whose usable memory
    holds weights, reserve and the batch's cache; None if no such count does."""
    for g in even_splits(model):
        usable = inputs.memory_share * target.memory_bytes * g
        cache = inputs.batch * stored_per_sequence(seq, replication(model, g))
        if usable - weights - reserve_bytes(model, g) >= cache:
            return g
    return None
