"""The roofline of one decode step for the whole batch: bytes moved, FLOPs, and the time each takes.

Decode, one step for the whole batch (the roofline, `core/roofline.py`, made batch-aware):
    bytes   = dense weights once + distinct experts touched × expert bytes (`experts.py`)
              + batch × (cache at the context, read + fixed state, read and written back)
            = weights stored − input table − experts no token picked + cache + 2 × fixed state
              (`StepReads`: the same bytes set beside what the plan stores, so a page can say why
              the step reads less weight than memory holds)
    time    = max(bytes / (GPUs × bandwidth), FLOPs / (GPUs × peak), latency floor)
    tokens/s (all sequences) = batch / time
The bytes are `core.roofline.step_bytes`, the one count the roofline and the benchmarks use. The latency
floor (`latency.py`): every kernel of the step one after another at a stated per-kernel floor, plus,
under tensor parallelism, two all-reduces per layer (Megatron-LM) at NCCL's latency; `DecodeStep.bound`
says which of the three ceilings binds. Tensor parallelism splits weights, heads and bandwidth evenly.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.plan.cards import card
from core.plan.config import PlannedModel
from core.plan.experts import distinct_experts
from core.plan.flops import decode_flops_per_token
from core.plan.footprint import replication, routed_experts, sequence_at, unread_table_bytes, weight_bytes
from core.plan.formats import weight_format
from core.plan.inputs import PlanInputs
from core.plan.latency import LatencyFloor, latency_floor
from core.plan.memory import SequenceBytes
from core.roofline import step_bytes


@dataclass(frozen=True)
class StepReads:
    """One decode step's bytes beside what the plan stores (all GPUs together). The step reads every
    stored weight but two parts: the input tables (a token looks up one row of each, counted as none) and
    the routed experts no token of the batch picked. It reads every sequence's cache once (its new row is
    a few bytes) and reads each fixed state and writes it back whole (fla's fused recurrent kernels load
    and store it), so

        read per step = weights − table − positions − idle experts + cache + 2 × state."""

    weights: float  # stored, as the plan's weights
    table: float  # the token table (untied): stored, not read
    positions: float  # the learned position table (GPT-2): stored, not read
    idle_experts: float  # routed experts no token picked this step (expected, uniform routing)
    cache: float  # every sequence's cache, as stored (copies over the GPUs included)
    state: float  # every sequence's fixed state, as stored: read and written back

    @property
    def weights_read(self) -> float:
        return self.weights - self.unread

    @property
    def unread(self) -> float:
        """Stored weights the step leaves alone: the input tables and the idle experts."""
        return self.table + self.positions + self.idle_experts

    @property
    def state_moved(self) -> float:
        """The fixed state's bytes this step: read and written back (`core.roofline.STATE_PASSES`)."""
        return step_bytes(0.0, 0.0, self.state)

    @property
    def total(self) -> float:
        return step_bytes(self.weights_read, self.cache, self.state)  # the one count (core/roofline.py)


@dataclass(frozen=True)
class DecodeStep:
    """One decode step for the whole batch: what it moves and computes, and how long each takes."""

    experts_touched: float | None  # per MoE layer
    reads: StepReads  # what the step moves, part by part
    memory_seconds: float
    compute_seconds: float
    floor: LatencyFloor  # kernels one after another, and the all-reduces

    @property
    def bytes_moved(self) -> float:
        """All GPUs together."""
        return self.reads.total

    @property
    def latency_seconds(self) -> float:
        return self.floor.seconds

    @property
    def seconds(self) -> float:
        return max(self.memory_seconds, self.compute_seconds, self.latency_seconds)

    @property
    def bound(self) -> str:
        """Which ceiling sets the step's time: "memory" (bandwidth), "compute" or "latency"."""
        times = {
            "memory": self.memory_seconds,
            "compute": self.compute_seconds,
            "latency": self.latency_seconds,
        }
        return max(times, key=times.get)  # ties go to the first: memory


def decode_step(model: PlannedModel, inputs: PlanInputs, seq: SequenceBytes | None = None) -> DecodeStep:
    """The roofline of one decode step (the module docstring's formula), whether or not it fits;
    `seq`: one sequence at the context, when the caller has it already."""
    spec, target, fmt = model.spec, card(inputs.card), weight_format(inputs.weight_format)
    b, g = inputs.batch, inputs.gpus
    seq = sequence_at(model, inputs, inputs.context) if seq is None else seq
    layers, per_expert = routed_experts(model)
    touched = distinct_experts(spec.moe.experts, spec.moe.top_k, b) if layers else None
    idle = (
        layers * (spec.moe.experts - touched) * per_expert * fmt.bytes_per_param(expert=True)
        if layers
        else 0.0
    )
    rep = replication(model, g)
    table, positions = unread_table_bytes(model, inputs.weight_format)
    reads = StepReads(
        weights=weight_bytes(model, inputs.weight_format),
        table=table,
        positions=positions,
        idle_experts=idle,
        cache=b * seq.kv * rep,
        state=b * seq.fixed,
    )
    active_read = spec.active_params(count_embedding_table=False)
    flops = b * decode_flops_per_token(model, active_read, inputs.context, inputs.layout)
    compute = flops / (g * target.peak_flops) if target.peak_flops else 0.0
    memory = reads.total / (g * target.bandwidth_bytes_per_s)
    return DecodeStep(touched, reads, memory, compute, latency_floor(model, g))
