"""The planner: a parsed model + a card + serving choices → memory, what fits, and predicted speed.

The arithmetic lives by job: `footprint` (weights, reserve, cache copies), `decode` (one step's
roofline and latency floor, `latency`), `parallel` (even tensor-parallel splits); the words beside the
figures in `assumptions` and `cautions`. Prefill of one prompt of `context` tokens: FLOPs / (GPUs × peak),
the output head counted for the last prompt token only (`flops.prefill_flops`) — a lower bound on time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from core.plan.assumptions import assumptions
from core.plan.cards import card
from core.plan.cautions import cautions
from core.plan.config import PlannedModel
from core.plan.decode import StepReads, decode_step
from core.plan.flops import prefill_flops
from core.plan.footprint import replication, reserve_bytes, sequence_at, stored_per_sequence, weight_bytes
from core.plan.inputs import PlanInputs
from core.plan.latency import LatencyFloor
from core.plan.memory import SequenceBytes
from core.plan.parallel import gpus_needed
from core.plan.spill import longest_context
from core.specs import LatentAttention


@dataclass(frozen=True)
class Plan:
    inputs: PlanInputs
    model_name: str
    card_name: str
    total_params: int
    active_params: int
    weights: float
    reserve: float
    usable: float
    per_sequence: SequenceBytes  # one sequence at the context, before tensor-parallel replication
    replication: float  # how many times the cache is stored across the GPUs (≥ 1)
    kv: float  # batch × KV at the context, as stored
    state: float  # batch × fixed state, as stored
    fits: bool
    max_context: int | None  # at this batch; None: memory sets no limit
    max_batch: int | None  # at this context; None: a sequence stores nothing, so memory sets no limit
    experts_touched: float | None  # per MoE layer per step
    read_per_step: float  # bytes, all GPUs together
    step_reads: StepReads  # the same bytes, part by part, beside what is stored
    decode_tokens_per_s: float | None  # all sequences together
    per_sequence_tokens_per_s: float | None
    decode_bound: str  # the ceiling that binds: "memory" (bandwidth), "compute" or "latency"
    prefill_seconds: float | None  # one prompt of `context` tokens, at peak
    gpus_needed: int | None  # fewest tensor-parallel GPUs of this card that hold it all; None: over 1,024
    floor: LatencyFloor | None = (
        None  # the step's latency floor: kernels and all-reduces (core/plan/latency.py)
    )
    bandwidth_tokens_per_s: float | None = None  # all sequences, were bandwidth the only ceiling
    latency_tokens_per_s: float | None = None  # all sequences, were the latency floor the only ceiling
    mla_layouts: dict[str, float] = field(default_factory=dict)  # bytes per token, by layout
    assumptions: tuple[str, ...] = ()
    trained_context: int | None = None  # max_position_embeddings, where the config says it
    cautions: tuple[str, ...] = ()  # what makes these figures a what-if: shown beside the headline

    @property
    def weights_fit(self) -> bool:
        """False when weights + reserve alone exceed usable memory."""
        return self.usable - self.weights - self.reserve >= 0

    @property
    def cache_copies(self) -> int | None:
        """How many copies of the cache the GPUs keep together, when more than one: past the key/value
        head count (always for MLA's one latent) each GPU holds its own copy of what it shares. None for
        one copy, and for an uneven split (which has its own caution)."""
        whole = float(self.replication).is_integer()
        return int(self.replication) if self.replication > 1 and whole else None

    @property
    def needed(self) -> float:
        return self.weights + self.reserve + self.kv + self.state

    def as_dict(self) -> dict:
        data = asdict(self)
        data["per_sequence"] = asdict(self.per_sequence)
        data["needed"] = self.needed
        data["weights_fit"] = self.weights_fit
        data["assumptions"] = list(self.assumptions)
        data["cautions"] = list(self.cautions)
        return data


def plan(model: PlannedModel, inputs: PlanInputs) -> Plan:
    """Run the planner: every figure of the page and the CLI."""
    inputs = inputs.checked()
    spec, target = model.spec, card(inputs.card)
    b, g = inputs.batch, inputs.gpus

    def seq_at(t: int) -> SequenceBytes:
        return sequence_at(model, inputs, t)

    weights, reserve = weight_bytes(model, inputs.weight_format), reserve_bytes(model, g)
    usable = inputs.memory_share * target.memory_bytes * g
    rep = replication(model, g)
    seq = seq_at(inputs.context)
    room = usable - weights - reserve
    kv, state = b * seq.kv * rep, b * seq.fixed
    max_context = longest_context(model, inputs)  # core/plan/spill.py: the same function the KV cache page asks
    per_seq = stored_per_sequence(seq, rep)
    if per_seq == 0:
        max_batch = None if room >= 0 else 0
    else:
        max_batch = int(room // per_seq) if room > 0 else 0

    step = decode_step(model, inputs, seq)
    fits = room >= kv + state
    tps = b / step.seconds if fits else None
    active_read = spec.active_params(count_embedding_table=False)
    prefill = (
        prefill_flops(model, active_read, inputs.context) / (g * target.peak_flops)
        if target.peak_flops
        else None
    )
    mla = {}
    if isinstance(spec.attention, LatentAttention):
        mla = {key: sequence_at(model, replace(inputs, layout=key), 1).kv for key in ("engine", "per_head")}
    return Plan(
        inputs=inputs,
        model_name=spec.name,
        card_name=target.name,
        total_params=spec.total_params(),
        active_params=spec.active_params(),
        weights=weights,
        reserve=reserve,
        usable=usable,
        per_sequence=seq,
        replication=rep,
        kv=kv,
        state=state,
        fits=fits,
        max_context=max_context,
        max_batch=max_batch,
        experts_touched=step.experts_touched,
        read_per_step=step.bytes_moved,
        step_reads=step.reads,
        decode_tokens_per_s=tps,
        per_sequence_tokens_per_s=tps / b if tps else None,
        decode_bound=step.bound,
        floor=step.floor,
        bandwidth_tokens_per_s=b / step.memory_seconds if fits else None,
        latency_tokens_per_s=b / step.latency_seconds if fits else None,
        prefill_seconds=prefill,
        gpus_needed=(needed := gpus_needed(model, seq, weights, inputs, target)),
        mla_layouts=mla,
        assumptions=assumptions(model, inputs, target, step.experts_touched),
        trained_context=spec.context or None,
        cautions=cautions(model, inputs, needed),
    )
