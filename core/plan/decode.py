"""The roofline of one decode step for the whole batch: bytes moved, FLOPs, and the time each takes.

Decode, one step for the whole batch (the roofline, `core/roofline.py`, made batch-aware):
    bytes   = dense weights once + distinct experts touched × expert bytes (`experts.py`)
              + batch × (cache at the context, read + fixed state, read and written back)
    time    = max(bytes / (GPUs × bandwidth), FLOPs / (GPUs × peak))
    tokens/s (all sequences) = batch / time
Tensor parallelism splits weights, heads and bandwidth evenly; communication is not modelled: the two
all-reduces per layer (Megatron-LM) are left out, and every speed on more than one GPU says so
(`core/plan/headline.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.plan.cards import card
from core.plan.config import PlannedModel
from core.plan.experts import distinct_experts
from core.plan.flops import decode_flops_per_token
from core.plan.footprint import ends, replication, routed_experts, sequence_at
from core.plan.formats import weight_format
from core.plan.inputs import PlanInputs
from core.plan.memory import SequenceBytes


def _moved(seq: SequenceBytes, rep: float) -> float:
    """Bytes one decode step moves for one sequence: the cache is read (its new row is a few bytes), the
    fixed state is read and written back whole (fla's fused recurrent kernels load and store it)."""
    return seq.kv * rep + 2 * seq.fixed


@dataclass(frozen=True)
class DecodeStep:
    """One decode step for the whole batch: what it moves and computes, and how long each takes."""

    experts_touched: float | None  # per MoE layer
    bytes_moved: float  # all GPUs together
    memory_seconds: float
    compute_seconds: float

    @property
    def seconds(self) -> float:
        return max(self.memory_seconds, self.compute_seconds)


def decode_step(model: PlannedModel, inputs: PlanInputs, seq: SequenceBytes | None = None) -> DecodeStep:
    """The roofline of one decode step (the module docstring's formula), whether or not it fits;
    `seq`: one sequence at the context, when the caller has it already."""
    spec, target, fmt = model.spec, card(inputs.card), weight_format(inputs.weight_format)
    b, g = inputs.batch, inputs.gpus
    seq = sequence_at(model, inputs, inputs.context) if seq is None else seq
    layers, per_expert = routed_experts(model)
    touched = distinct_experts(spec.moe.experts, spec.moe.top_k, b) if layers else None
    active_read = spec.active_params(count_embedding_table=False)
    dense = active_read - layers * spec.moe.top_k * per_expert if layers else active_read
    expert_read = layers * touched * per_expert * fmt.bytes_per_param(expert=True) if layers else 0.0
    apart = ends(model, inputs.weight_format)
    moved = (
        (dense - apart.head_params) * fmt.bytes_per_param()
        + apart.head_bytes
        + expert_read
        + b * _moved(seq, replication(model, g))
    )
    flops = b * decode_flops_per_token(model, active_read, inputs.context, inputs.layout)
    compute = flops / (g * target.peak_flops) if target.peak_flops else 0.0
    return DecodeStep(touched, moved, moved / (g * target.bandwidth_bytes_per_s), compute)
