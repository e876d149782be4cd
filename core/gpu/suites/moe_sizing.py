"""An MoE sized like a released one: its experts' shapes from its config, as many experts as the machine holds.

Two shapes (`SHAPES`), each read from a shipped config by the planner (core.plan.config.parse) — the
expert's width and hidden size, how many are routed and how many wake per token:

- `fine`: Qwen3.5-MoE's fine-grained experts (Qwen3.5-35B-A3B: 2,048 wide, 512 hidden, three matrices:
  6 MiB in bf16), 256 routed, 8 per token and one shared;
- `large`: DeepSeek-V3's (7,168 wide, 2,048 hidden: 84 MiB in bf16), 256 routed, 8 per token and one shared.

The first H200 run's MoE (docs/gpu-runs/2026-11-30-nvidia-h200) had 2 MiB experts, the next ones were
forced to ≥ 16 MiB from the card's copy speed: neither was a released MoE's. Here the expert is the
released one; `size_moe` sizes only how many layers there are, from the free memory:

- the model's weights take at most `WEIGHT_SHARE` of the free memory (the dense twin, built after the
  MoE is released, has the same total: its feed-forward is all the experts' widths side by side);
- each layer holds the released count of experts (so the MoE reads the released share of its weights
  per token), as many layers as fit up to `MAX_LAYERS`; where not even one such layer fits, one layer of
  as many experts as fit, never fewer than `MIN_ROUTED`.

On a CPU `cpu_sizing` cuts the counts so a run takes seconds (`CPU_COUNTS`): fewer experts and layers
— and for `large` fewer per token, or the dense twin would not fit — each expert still the released shape.

A sizing also says what reading one expert takes at the measured copy speed (a fine-grained expert on
an H200: under 2 µs, less than launching the kernel that reads it) and what share of an MoE step is
attention, cache and head. Pure arithmetic, so a test can size a 12 GB, a 24 GB and a 141 GB card anywhere.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from core.gpu.presets import Preset
from core.plan.config import SHIPPED_CONFIGS, parse

WEIGHT_SHARE = 0.35  # of the free memory: room for the KV cache, the CUDA graph pool, the allocator
MIN_ROUTED = 32  # enough routed experts to choose from
ROUTED_STEP = 8  # routed experts per layer in multiples of this
HEAD_DIM = 128
MAX_LAYERS = 16
SHAPE_CONFIGS = {"fine": "qwen3_5_35b_a3b", "large": "deepseek_v3"}  # assets/configs/<name>.json
# On a CPU: (layers, routed experts, routed per token) — each expert the released shape
CPU_COUNTS = {"fine": (2, 64, 8), "large": (1, 16, 2)}
CPU_DEPTH = 256


@dataclass(frozen=True)
class MoeShape:
    """A released MoE's experts: width, hidden size (three matrices each), routed, per token, shared."""

    name: str  # "fine" or "large"
    model: str  # the released model, e.g. "DeepSeek-V3"
    d_model: int
    expert_hidden: int
    routed: int
    top_k: int
    shared: int  # always-on experts, each of `expert_hidden`

    def expert_bytes(self, elem_bytes: int) -> int:
        """One expert's gate, up and down matrices."""
        return 3 * self.d_model * self.expert_hidden * elem_bytes


def moe_shape(name: str) -> MoeShape:
    """The shape `name` ('fine' or 'large') from its shipped config, through the planner's parser."""
    if name not in SHAPE_CONFIGS:
        raise ValueError(f"unknown MoE shape {name!r}; choose one of {', '.join(SHAPE_CONFIGS)}")
    data = json.loads((SHIPPED_CONFIGS / f"{SHAPE_CONFIGS[name]}.json").read_text(encoding="utf-8"))
    spec = parse(data).spec
    moe = spec.moe
    if (
        moe is None
        or moe.latent_dim is not None
        or (moe.shared and moe.shared_intermediate != moe.expert_intermediate)
    ):
        raise ValueError(f"{spec.name}: not an MoE whose shared experts have the routed experts' shape")
    return MoeShape(name, spec.name, spec.hidden, moe.expert_intermediate, moe.experts, moe.top_k, moe.shared)


SHAPES = tuple(SHAPE_CONFIGS)


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
    shape: str = ""  # SHAPES, "" for runs sized before the released shapes
    model: str = ""  # the released model whose experts these are
    gated: bool = False  # SwiGLU experts, three matrices
    released_experts: int | None = None  # routed experts a layer of the released model has

    @property
    def bytes_ratio(self) -> float:
        return self.dense_step_bytes / self.moe_step_bytes


def size_moe(
    free_bytes: int,
    bandwidth_bytes_per_s: float,
    elem_bytes: int,
    shape: MoeShape | str = "large",
    depth: int = 1024,
    vocab: int = 32000,
) -> MoeSizing:
    """The released `shape`'s experts, as many a layer (≤ released) and as many layers as `free_bytes` holds."""
    shape = moe_shape(shape) if isinstance(shape, str) else shape
    d, expert = shape.d_model, shape.expert_bytes(elem_bytes)
    attention, _cache, _head, tables = _others(d, depth, vocab, elem_bytes)
    budget = int(WEIGHT_SHARE * free_bytes)
    released_layer = (
        attention + d * shape.routed * elem_bytes + (shape.routed + shape.shared) * expert
    )  # + router
    layers, routed = min(MAX_LAYERS, (budget - tables) // released_layer), shape.routed
    if layers < 1:  # not one layer of the released count: one layer of as fit
        room = budget - tables - attention - shape.shared * expert
        layers, routed = 1, ROUTED_STEP * (room // (expert + d * elem_bytes) // ROUTED_STEP)
    if routed < max(MIN_ROUTED, shape.top_k):
        raise ValueError(
            f"{free_bytes / 2**30:.1f} GiB free holds fewer than {MIN_ROUTED} experts of {expert / 2**20:.0f} MiB "
            "in one layer"
        )
    return _sizing(
        shape, layers, routed, shape.top_k, depth, vocab, elem_bytes, bandwidth_bytes_per_s, budget
    )


def cpu_sizing(
    shape: MoeShape | str,
    bandwidth_bytes_per_s: float,
    elem_bytes: int,
    depth: int = CPU_DEPTH,
    vocab: int = 256,
) -> MoeSizing:
    """The released `shape`'s experts in a model a CPU runs in seconds (`CPU_COUNTS`)."""
    shape = moe_shape(shape) if isinstance(shape, str) else shape
    layers, routed, top_k = CPU_COUNTS[shape.name]
    return _sizing(shape, layers, routed, top_k, depth, vocab, elem_bytes, bandwidth_bytes_per_s, 0)


def _others(d: int, depth: int, vocab: int, elem_bytes: int) -> tuple[int, int, int, int]:
    """Per layer the attention's weights (wqkv, wo) and the cache a step reads; the head and one
    embedding row a step reads; the head and the whole table held."""
    attention = 4 * d * d * elem_bytes
    cache = 2 * d * depth * elem_bytes
    head = d * vocab * elem_bytes + d * elem_bytes
    tables = 2 * d * vocab * elem_bytes
    return attention, cache, head, tables


def _sizing(shape: MoeShape, layers: int, routed: int, top_k: int, depth: int, vocab: int, elem_bytes: int,
            bandwidth: float, budget: int) -> MoeSizing:  # fmt: skip
    """The sizes and the bytes each model holds and each step reads (the decode models' own count)."""
    d, expert = shape.d_model, shape.expert_bytes(elem_bytes)
    attention, cache, head, tables = _others(d, depth, vocab, elem_bytes)
    experts = routed + shape.shared
    router = d * routed * elem_bytes
    weights = tables + layers * (attention + router + experts * expert)
    moe_step = head + layers * (attention + cache + router + (shape.shared + top_k) * expert)
    dense_step = head + layers * (attention + cache + experts * expert)
    return MoeSizing(
        d, layers, shape.expert_hidden, experts, shape.shared, top_k, depth, expert, 1e6 * expert / bandwidth,
        weights, budget, moe_step, dense_step, (head + layers * (attention + cache)) / moe_step,
        shape=shape.name, model=shape.model, gated=True, released_experts=shape.routed,
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
        moe_gated=sizing.gated,
    )
