"""An MoE sized like real ones, from the card it runs on: (free memory, bandwidth, dtype) → sizes.

The first H200 run's MoE (docs/gpu-runs/2026-11-30-nvidia-h200) had 4096 × 128 experts, 2 MiB each
in bf16 — about 40× smaller than DeepSeek-V3's (7168 × 2048 × 3 matrices, 84 MiB) — so at batch 1
reading one expert took less time than launching the kernel that reads it (about 2.4 µs), and the
MoE measured launches, not experts. Here:

- one expert is wide enough that reading it takes at least `MIN_READ_S` (5 µs) at the card's
  measured bandwidth: ≥ 16 MiB on a 3–4 TB/s card;
- the experts read per token are at least (1 − s) ÷ s times the attention, KV cache and head it
  reads (s = `MAX_ATTENTION_SHARE`), so the experts, not the attention, decide the step's time;
- the model's weights take at most `WEIGHT_SHARE` of the free memory (the dense twin, built after
  the MoE is released, has the same total: its feed-forward is all the experts' widths side by side),
  with fewer layers on a small card rather than too few experts to choose from.

Pure arithmetic, so a test can size a 12 GB, a 24 GB and a 141 GB card on any machine.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from core.gpu.presets import GIB, Preset

MIN_READ_S = 5e-6  # one expert's read at the measured bandwidth: twice a kernel launch or more
MAX_ATTENTION_SHARE = 0.4  # attention + cache + head, of the bytes an MoE step reads
WEIGHT_SHARE = 0.35  # of the free memory: room for the KV cache, the CUDA graph pool, the allocator
SHARED, TOP_K = 2, 6  # the `large` preset's experts per token (DeepSeek-V3: 1 + 8)
MIN_EXPERTS, MAX_EXPERTS = 32, 256  # enough to choose from; DeepSeek-V3 has 256 a layer
HIDDEN_STEP = 256  # expert widths in multiples of this (tensor-core tiles)
HEAD_DIM = 128
MAX_LAYERS = 16


@dataclass(frozen=True)
class MoeSizing:
    """The sizes chosen and why: bytes per expert and its read time, the share of an MoE step that is
    attention, cache and head, and the dense twin's bytes per token ÷ the MoE's."""

    d_model: int
    n_layers: int
    expert_hidden: int
    n_experts: int  # shared included
    n_shared: int
    top_k: int
    depth: int
    expert_bytes: int
    expert_read_us: float
    weight_bytes: int  # the MoE's (and its dense twin's) weights, every layer
    weight_budget_bytes: int
    moe_step_bytes: int
    dense_step_bytes: int
    attention_share: float  # attention + KV cache + head, of the MoE step's bytes

    @property
    def bytes_ratio(self) -> float:
        return self.dense_step_bytes / self.moe_step_bytes


def size_moe(
    free_bytes: int, bandwidth_bytes_per_s: float, elem_bytes: int, depth: int = 1024, vocab: int = 32000
) -> MoeSizing:
    """Expert width from the bandwidth, experts and layers from the free memory (see the module)."""
    d = 4096 if free_bytes >= 20 * GIB else 2048
    attention = 4 * d * d * elem_bytes  # wqkv and wo, per layer
    cache = 2 * d * depth * elem_bytes  # keys and values read per step, per layer
    head = d * vocab * elem_bytes + d * elem_bytes  # the head and one embedding row, read per step
    tables = 2 * d * vocab * elem_bytes  # the head and the whole embedding table, held
    active = SHARED + TOP_K
    budget = int(WEIGHT_SHARE * free_bytes)
    hidden = expert = experts = 0
    for layers in range(MAX_LAYERS, 1, -1):
        # per layer, the experts read must be (1 − s) ÷ s × what else the step reads (the head spread
        # over the layers), and one expert's read at least MIN_READ_S
        others = attention + cache + head / layers
        need = max(
            MIN_READ_S * bandwidth_bytes_per_s,
            others * (1 - MAX_ATTENTION_SHARE) / MAX_ATTENTION_SHARE / active,
        )
        hidden = HIDDEN_STEP * math.ceil(need / (2 * d * elem_bytes) / HIDDEN_STEP)
        expert = 2 * d * hidden * elem_bytes  # w1 and w2
        room = budget - tables - layers * attention
        experts = min(
            MAX_EXPERTS, 8 * (room // (layers * (expert + d * elem_bytes)) // 8)
        )  # + a router column
        if experts >= MIN_EXPERTS:
            break
    if experts < MIN_EXPERTS:
        raise ValueError(
            f"{free_bytes / GIB:.1f} GiB free holds fewer than {MIN_EXPERTS} experts of {expert / 2**20:.0f} MiB "
            "in two layers"
        )
    router = d * (experts - SHARED) * elem_bytes
    weights = tables + layers * (attention + router + experts * expert)
    moe_step = head + layers * (attention + cache + router + active * expert)
    dense_step = head + layers * (attention + cache + experts * expert)
    return MoeSizing(
        d, layers, hidden, experts, SHARED, TOP_K, depth, expert, 1e6 * expert / bandwidth_bytes_per_s,
        weights, budget, moe_step, dense_step, (head + layers * (attention + cache)) / moe_step,
    )  # fmt: skip


def sized_preset(base: Preset, sizing: MoeSizing) -> Preset:
    """`base` with the MoE test's model replaced by the sized one (the context sweep uses its own)."""
    return dataclasses.replace(
        base,
        d_model=sizing.d_model,
        n_heads=max(1, sizing.d_model // HEAD_DIM),
        n_layers=sizing.n_layers,
        moe_ffn_hidden=sizing.n_experts * sizing.expert_hidden,
        moe_experts=sizing.n_experts,
        moe_shared=sizing.n_shared,
        moe_top_k=sizing.top_k,
        moe_depth=sizing.depth,
    )
