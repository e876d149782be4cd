"""What a model stores on a tensor-parallel group: its weights, the runtime reserve, the cache's copies.

Memory (across all GPUs of a tensor-parallel group):
    usable  = share × card memory × GPUs               (vLLM: gpu_memory_utilization, default 0.9)
    needed  = weights + reserve + batch × (KV cache at the context + fixed state)
Weights: every parameter at its format's real bits (all experts are resident, busy or not); engines'
quantised checkpoints (FP8, INT8, AWQ/GPTQ, MXFP4, NVFP4) keep the input table and output head in BF16.
Reserve, on every GPU: 1 GiB (CUDA context, library workspaces) + activations of one 2,048-token prefill
chunk, taken as 2,048 × 16 × hidden × 2 bytes — a stated round figure, not a measurement. Under tensor
parallelism each GPU runs the whole chunk and holds its own hidden-wide residual stream, so the
activations are counted once per GPU, not once for the group.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.plan.cards import GiB
from core.plan.config import PlannedModel
from core.plan.formats import CONV_BYTES, cache_format, state_format_for, weight_format
from core.plan.inputs import PlanInputs
from core.plan.memory import SequenceBytes, sequence_bytes
from core.specs import LatentAttention

PREFILL_CHUNK = 2048
RUNTIME_RESERVE = 1 * GiB


def routed_experts(model: PlannedModel) -> tuple[int, int]:
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


def unread_table_bytes(model: PlannedModel, fmt_key: str) -> tuple[float, float]:
    """(token table, position table): the stored bytes of the input tables that a decode step does not
    read, since a token looks up one row of each (counted as none). A tied token table is the output
    head, read in full: 0. Positions: only where the model learns them (GPT-2)."""
    spec = model.spec
    fmt = weight_format(fmt_key)
    table = 0 if spec.tied_embeddings else spec.vocab * spec.hidden
    positions = spec.context * spec.hidden if spec.learned_positions else 0
    bits = (fmt.table_bits or fmt.bits) if fmt.keeps_ends_apart else fmt.bits
    return table * bits / 8, positions * bits / 8


def weight_bytes(model: PlannedModel, fmt_key: str) -> float:
    fmt = weight_format(fmt_key)
    layers, per_expert = routed_experts(model)
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


def stored_per_sequence(seq: SequenceBytes, rep: float) -> float:
    """Bytes one sequence keeps across the group: its cache `rep` times, its fixed state once."""
    return seq.kv * rep + seq.fixed  # recurrent states split by value heads


def sequence_at(model: PlannedModel, inputs: PlanInputs, context: int) -> SequenceBytes:
    """One sequence's cache and state at `context`, in the inputs' cache format and layout."""
    bytes_per_element = cache_format(inputs.cache_format).bytes_per_element
    state_bytes = state_format_for(inputs.state_format, model.state_dtype).bytes_per_element
    return sequence_bytes(model, context, bytes_per_element, inputs.layout, state_bytes, CONV_BYTES)
