"""The planner: a parsed model + a card + serving choices → memory, what fits, and predicted speed.

Memory (across all GPUs of a tensor-parallel group):
    usable  = share × card memory × GPUs               (vLLM: gpu_memory_utilization, default 0.9)
    needed  = weights + reserve + batch × (KV cache at the context + fixed state)
Weights: every parameter at its format's real bits (all experts are resident, busy or not); engines'
quantised checkpoints (FP8, INT8, AWQ/GPTQ, MXFP4, NVFP4) keep the input table and output head in BF16.
Reserve, on every GPU: 1 GiB (CUDA context, library workspaces) + activations of one 2,048-token prefill
chunk, taken as 2,048 × 16 × hidden × 2 bytes — a stated round figure, not a measurement. Under tensor
parallelism each GPU runs the whole chunk and holds its own hidden-wide residual stream, so the
activations are counted once per GPU, not once for the group.

Decode, one step for the whole batch (the roofline, `core/roofline.py`, made batch-aware):
    bytes   = dense weights once + distinct experts touched × expert bytes (`experts.py`)
              + batch × (cache at the context, read + fixed state, read and written back)
    time    = max(bytes / (GPUs × bandwidth), FLOPs / (GPUs × peak))
    tokens/s (all sequences) = batch / time
Prefill of one prompt of `context` tokens: FLOPs / (GPUs × peak) — a lower bound on time.
Tensor parallelism splits weights, heads and bandwidth evenly; communication is not modelled: the two
all-reduces per layer (Megatron-LM) are left out, and every speed on more than one GPU says so
(`core/plan/headline.py`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from core.plan.calibration import calibration_words
from core.plan.cards import GiB, PlanCard, card
from core.plan.config import PlannedModel
from core.plan.experts import distinct_experts
from core.plan.flops import decode_flops_per_token, prefill_flops
from core.plan.formats import CONV_BYTES, cache_format, state_format, weight_format
from core.plan.memory import LAYOUTS, SequenceBytes, sequence_bytes, unbounded_growth
from core.specs import LatentAttention
from core.units import format_context

PREFILL_CHUNK = 2048
RUNTIME_RESERVE = 1 * GiB
MAX_SEARCH_CONTEXT = 2**34
METAL_SHARE = 0.75  # of unified memory a Mac's GPU may wire by default (about ⅔–¾; see `cautions`)


@dataclass(frozen=True)
class PlanInputs:
    """Everything a reader chooses; the defaults are the page's defaults."""

    context: int = 131072
    batch: int = 1
    weight_format: str = "bf16"
    cache_format: str = "bf16"
    memory_share: float = 0.9
    gpus: int = 1
    card: str = "h100_80gb"
    layout: str = "engine"
    state_format: str = "fp32"  # the fixed recurrent state's (formats.STATE_FORMATS)

    def checked(self) -> PlanInputs:
        weight_format(self.weight_format), cache_format(self.cache_format), card(self.card)
        state_format(self.state_format)
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown layout {self.layout!r}; known: {', '.join(LAYOUTS)}")
        if not 0 <= self.context <= MAX_SEARCH_CONTEXT:
            raise ValueError("context must be between 0 and 2^34 tokens")
        if not 1 <= self.batch <= 1_000_000:
            raise ValueError("batch must be between 1 and 1,000,000")
        if not 0.05 <= self.memory_share <= 1.0:
            raise ValueError("memory share must be between 0.05 and 1")
        if not 1 <= self.gpus <= 1024:
            raise ValueError("GPUs must be between 1 and 1024")
        return self


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
    decode_tokens_per_s: float | None  # all sequences together
    per_sequence_tokens_per_s: float | None
    decode_bound: str  # "memory" or "compute"
    prefill_seconds: float | None  # one prompt of `context` tokens, at peak
    gpus_needed: int | None  # fewest tensor-parallel GPUs of this card that hold it all; None: over 1,024
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


def _routed(model: PlannedModel) -> tuple[int, int]:
    """(MoE layers, routed-expert parameters per expert)."""
    spec = model.spec
    if spec.moe is None:
        return 0, 0
    return spec.num_layers - spec.first_k_dense, spec.moe.expert_params(spec.hidden)


@dataclass(frozen=True)
class Ends:
    """The input table and the output head, which some formats store at other bits than the rest
    (`WeightFormat.table_bits`, `head_bits`). A decode step reads the head in full and one row of
    the input table (counted as none)."""

    params: int  # stored: the table (+ learned positions) and the head; a tied table counts once
    stored_bytes: float
    head_params: int  # read by every decode step
    head_bytes: float


def ends(model: PlannedModel, fmt_key: str) -> Ends:
    """Where the format keeps the ends apart, their parameters and bytes; else nothing (all zero),
    and they are counted with every other weight."""
    fmt = weight_format(fmt_key)
    if not fmt.keeps_ends_apart:
        return Ends(0, 0.0, 0, 0.0)
    spec = model.spec
    matrix = spec.vocab * spec.hidden
    table_bits, head_bits = fmt.table_bits or fmt.bits, fmt.head_bits or fmt.bits
    table = 0 if spec.tied_embeddings else matrix  # a tied table is the head, stored at the head's bits
    positions = spec.embedding_params() - table - matrix
    stored = (table + positions) * table_bits / 8 + matrix * head_bits / 8
    return Ends(spec.embedding_params(), stored, matrix, matrix * head_bits / 8)


def weight_bytes(model: PlannedModel, fmt_key: str) -> float:
    fmt = weight_format(fmt_key)
    layers, per_expert = _routed(model)
    routed = layers * model.spec.moe.experts * per_expert if layers else 0
    apart = ends(model, fmt_key)
    rest = model.spec.total_params() - routed - apart.params
    return rest * fmt.bytes_per_param() + apart.stored_bytes + routed * fmt.bytes_per_param(expert=True)


def reserve_bytes(model: PlannedModel, gpus: int) -> float:
    """The runtime and one prefill chunk's activations, on each of `gpus` GPUs (see the module doc)."""
    return gpus * (RUNTIME_RESERVE + PREFILL_CHUNK * 16 * model.spec.hidden * 2)


def replication(model: PlannedModel, gpus: int) -> float:
    """Copies of the cache across a tensor-parallel group: KV heads are split, and repeated once
    GPUs outnumber them; MLA's single latent is stored whole on every GPU (vLLM)."""
    attention = model.spec.attention
    if gpus == 1:
        return 1.0
    if isinstance(attention, LatentAttention):
        return float(gpus)
    kv = attention.kv_heads
    return gpus * math.ceil(kv / gpus) / kv


def _stored(seq: SequenceBytes, rep: float) -> float:
    return seq.kv * rep + seq.fixed  # recurrent states split by value heads


def _moved(seq: SequenceBytes, rep: float) -> float:
    """Bytes one decode step moves for one sequence: the cache is read (its new row is a few bytes), the
    fixed state is read and written back whole (fla's fused recurrent kernels load and store it)."""
    return seq.kv * rep + 2 * seq.fixed


def _sequence(model: PlannedModel, inputs: PlanInputs, context: int) -> SequenceBytes:
    """One sequence's cache and state at `context`, in the inputs' cache format and layout."""
    bytes_per_element = cache_format(inputs.cache_format).bytes_per_element
    state_bytes = state_format(inputs.state_format).bytes_per_element
    return sequence_bytes(model, context, bytes_per_element, inputs.layout, state_bytes, CONV_BYTES)


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
    seq = _sequence(model, inputs, inputs.context) if seq is None else seq
    layers, per_expert = _routed(model)
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


def plan(model: PlannedModel, inputs: PlanInputs) -> Plan:
    """Run the planner: every figure of the page and the CLI."""
    inputs = inputs.checked()
    spec, target = model.spec, card(inputs.card)
    b, g = inputs.batch, inputs.gpus

    def seq_at(t: int) -> SequenceBytes:
        return _sequence(model, inputs, t)

    weights, reserve = weight_bytes(model, inputs.weight_format), reserve_bytes(model, g)
    usable = inputs.memory_share * target.memory_bytes * g
    rep = replication(model, g)
    seq = seq_at(inputs.context)
    room = usable - weights - reserve
    kv, state = b * seq.kv * rep, b * seq.fixed
    max_context = _max_context(model, seq_at, room, b, rep)
    per_seq = _stored(seq, rep)
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
        mla = {key: _sequence(model, replace(inputs, layout=key), 1).kv for key in ("engine", "per_head")}
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
        decode_tokens_per_s=tps,
        per_sequence_tokens_per_s=tps / b if tps else None,
        decode_bound="compute" if step.compute_seconds > step.memory_seconds else "memory",
        prefill_seconds=prefill,
        gpus_needed=(needed := gpus_needed(model, seq, weights, inputs, target)),
        mla_layouts=mla,
        assumptions=assumptions(model, inputs, target, step.experts_touched),
        trained_context=spec.context or None,
        cautions=cautions(model, inputs, needed),
    )


def split_heads(model: PlannedModel) -> dict[str, int]:
    """Every head count tensor parallelism must split evenly (vLLM checks each), by name: the
    attention heads and, for linear-attention layers, their query/key and value heads."""
    spec = model.spec
    counts = {"attention": spec.attention.heads}
    if spec.linear is not None:
        counts |= {
            "linear-attention query/key": spec.linear.qk_heads,
            "linear-attention value": spec.linear.v_heads,
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


def cautions(model: PlannedModel, inputs: PlanInputs, needed: int | None = None) -> tuple[str, ...]:
    """What turns the figures into a what-if, in words a reader sees next to them: a context past
    the trained length; a Mac whose usable share is above what Metal wires by default; a GPU count
    tensor parallelism cannot use (`even_splits`: uneven heads, or key/value heads it can neither
    divide nor repeat) — the counts it suggests are even splits that also hold the model, when
    `needed` (gpus_needed) is known."""
    spec, gpus, out = model.spec, inputs.gpus, []
    if spec.context and inputs.context > spec.context:
        out.append(
            f"{spec.name} was trained for at most {spec.context:,} tokens (its config's context length): at "
            f"{format_context(inputs.context)} these figures say what memory would hold, not that the model "
            "would still write sense."
        )
    if card(inputs.card).unified and inputs.memory_share > METAL_SHARE:
        out.append(
            "macOS lets the GPU wire only about two-thirds to three-quarters of unified memory by default (Metal's "
            "recommendedMaxWorkingSetSize: 21.8 GB of 32 GB on an M1 Max in llama.cpp PR #2011): set the usable "
            f"share to {METAL_SHARE:g}, or raise the limit with `sudo sysctl iogpu.wired_limit_mb=<MiB>`."
        )
    splits = even_splits(model)
    if gpus > 1 and gpus not in splits:
        even = [k for k in splits if needed is None or k >= needed] or splits[-1:]
        below = [k for k in even if k < gpus][-1:]
        above = [k for k in even if k > gpus][:1]
        options = " or ".join(str(k) for k in below + above)
        uneven = {name: n for name, n in split_heads(model).items() if n % gpus}
        if uneven:
            name, n = next(iter(uneven.items()))
            why = f"cannot split {spec.name}'s {n} {name} heads evenly, which tensor parallelism needs"
        else:  # the heads split, but each GPU would hold part of a key/value head
            kv = spec.attention.kv_heads
            why = (
                f"cannot share {spec.name}'s {kv} key/value heads: tensor parallelism needs a GPU count that "
                "divides them or is a multiple of them"
            )
        out.append(
            f"{gpus} GPUs {why} (vLLM refuses it); try {options} GPUs. The figures assume an even split."
        )
    return tuple(out)


def gpus_needed(
    model: PlannedModel, seq: SequenceBytes, weights: float, inputs: PlanInputs, target: PlanCard
):
    """The fewest GPUs of `target` that split the heads evenly (`even_splits`) and whose usable memory
    holds weights, reserve and the batch's cache; None if no such count does."""
    for g in even_splits(model):
        usable = inputs.memory_share * target.memory_bytes * g
        if usable - weights - reserve_bytes(model, g) >= inputs.batch * _stored(seq, replication(model, g)):
            return g
    return None


def _max_context(model: PlannedModel, seq_at, room: float, batch: int, rep: float) -> int | None:
    """Longest context whose cache for `batch` sequences fits `room`; None if it never outgrows it."""

    def fits(t: int) -> bool:
        return batch * _stored(seq_at(t), rep) <= room

    if not fits(0):
        return 0
    if not unbounded_growth(model) and fits(MAX_SEARCH_CONTEXT):
        return None
    lo, hi = 0, MAX_SEARCH_CONTEXT
    if fits(hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _layout_words(model: PlannedModel, key: str) -> str:
    """The cache layout's name and what it keeps of the parts this model has (none for plain attention)."""
    mla = isinstance(model.spec.attention, LatentAttention)
    # without MLA, keeping MLA per head changes nothing: it is the serving engines' layout then
    layout = LAYOUTS["engine"] if key == "per_head" and not mla else LAYOUTS[key]
    details = layout.details(mla=mla, window=bool(model.sliding_layers), conv=model.spec.linear is not None)
    return layout.name + (f" ({details})" if details else "")


def assumptions(
    model: PlannedModel, inputs: PlanInputs, target: PlanCard, touched: float | None
) -> tuple[str, ...]:
    """Every assumption behind the figures, in words (shown beside the result and exported)."""
    spec, fmt, cfmt = model.spec, weight_format(inputs.weight_format), cache_format(inputs.cache_format)
    items = [
        f"Parameters counted from the config's tensor shapes (core/specs): {spec.total_params():,} total, "
        f"{spec.active_params():,} active per token; no multi-token-prediction head, no vision tower.",
        f"Weights: {fmt.label} at {fmt.bits:g} bits per weight"
        + (f" ({fmt.expert_bits:g} for routed experts)" if fmt.expert_bits else "")
        + f" — {fmt.source}"
        + (
            "; the input table and the output head stay in BF16, as engines' quantised checkpoints keep them"
            if fmt.table_bits == 16
            else ""
        )
        + ". Every expert is resident in memory.",
        f"KV cache: {cfmt.label}, {cfmt.bytes_per_element:g} byte{'' if cfmt.bytes_per_element == 1 else 's'} "
        f"per element, layout: {_layout_words(model, inputs.layout)}.",
        f"Card: {target.name}, {target.memory_bytes / GiB:,.0f} GiB, {target.bandwidth_bytes_per_s / 1e9:,.0f} GB/s"
        + (
            f", {target.peak_flops / 1e12:,.0f} TFLOPS dense BF16"
            if target.peak_flops
            else ", no published peak"
        )
        + f" — {target.source}.",
        f"Usable memory: {inputs.memory_share:.0%} of the card (vLLM's gpu_memory_utilization defaults to 0.9); "
        f"reserve, on every GPU: 1 GiB for the runtime + one {PREFILL_CHUNK:,}-token prefill chunk of "
        f"activations ({PREFILL_CHUNK:,} × 16 × hidden × 2 bytes) — a round figure, not a measurement.",
        "Decode speed is the roofline ceiling: each step reads the dense weights once for the whole batch, "
        "each touched expert once and every sequence's cache, and reads and writes back every fixed state; "
        "time = max(bytes ÷ bandwidth, FLOPs ÷ peak).",
        calibration_words(),
        "Prefill: FLOPs of one prompt (2 per active parameter per token + causal attention) ÷ the 16-bit peak — "
        "a lower bound for 16-bit matrix work"
        + (
            "; an engine that multiplies in FP8 too (W8A8, on cards with FP8 tensor cores) can run up to twice as "
            "fast."
            if fmt.key == "fp8"
            else "."
        ),
    ]
    if spec.linear is not None:
        sfmt = state_format(inputs.state_format)
        items.append(
            f"Fixed state: {spec.num_linear_layers} {spec.linear.kind} layers keep a d_k×d_v matrix per head "
            f"in {sfmt.label} — {sfmt.source} — and a short-convolution buffer in bf16; it does not grow "
            "with context."
        )
    if model.sliding_layers:
        items.append(
            f"Sliding window: {len(model.sliding_layers)} of {spec.num_layers} layers keep only the last "
            f"{model.sliding_window:,} tokens."
        )
    if isinstance(spec.attention, LatentAttention):
        items.append(
            "MLA: vLLM, SGLang and transformers 5.x cache the latent (kv_lora_rank + qk_rope_head_dim per token and "
            "layer); DeepSeek's reference code with attn_impl='naive' (and transformers 4.x) keeps keys and values "
            "per head — both figures are shown."
        )
    if touched is not None:
        items.append(
            f"Experts: a batch of {inputs.batch} touches about {touched:,.1f} of {spec.moe.experts} routed experts per "
            "layer, E·(1 − (1 − k/E)^B), assuming uniform independent routing; skewed routing touches fewer."
        )
    if inputs.gpus > 1:
        items.append(
            f"Tensor parallel over {inputs.gpus} GPUs: weights, heads and bandwidth split evenly; communication "
            "is not modelled — every step, each layer's attention and feed-forward part end in an all-reduce (the "
            "GPUs add up their partial results; two per layer, Shoeybi et al. 2019, Megatron-LM), which the speed "
            "figures leave out, so a real group runs slower; the cache is repeated where GPUs outnumber KV heads, "
            "and MLA's latent is stored on every GPU (engines avoid that with data-parallel attention, not "
            "modelled here)."
        )
    if spec.context and inputs.context > spec.context:
        items.append(f"The context exceeds the model's max_position_embeddings ({spec.context:,}).")
    return tuple(items)
