"""Batch-1 decoding speed from memory traffic alone: the roofline and the VRAM-spill model.

Generating one token reads every active weight and the whole cache once, and reads the fixed
state of a linear-attention layer and writes it back (fla's fused recurrent kernels load and
store it each step), so a bandwidth-bound upper limit is

    tokens/s  ≤  bandwidth / bytes_moved_per_token.

When weights + cache outgrow VRAM, the part that does not fit lives in host memory
and is streamed over the host link (PCIe) every step:

    time/token = bytes_in_vram / vram_bandwidth + spilled_bytes / link_bandwidth.

Method and card numbers: docs/sources.md §7.1–7.2 (NVIDIA product pages,
PCI-SIG link rates). Real runs land below these ceilings (a community report, not a maintainer's
measurement: llama-bench, Llama 8B Q4_0 on an RTX 3090, in pull-request text kept in a contributor's
fork, Abai/llama.cpp PR-BODY-fattn-dequant-cap.md; core/plan/calibration.py works out its share of the
planner's ceiling at each depth); the model is the *shape* of the curve — a gentle slope, then a
cliff where the cache spills. On consumer setups (llama.cpp, Ollama) the spilled part is
usually computed by the CPU from main memory rather than streamed; `link_bandwidth` stands
in for whichever path is slower than VRAM.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.mechanisms import RULES
from core.specs import ModelSpec

GiB = 1024**3
HYBRID_EVERY = 4  # the K3-style mix of What changed: one layer in 4 keeps a full cache, the others KDA boards
GB = 1e9


@dataclass(frozen=True)
class Card:
    """A GPU as the roofline sees it: how much it holds and how fast it reads."""

    name: str
    vram_bytes: float
    bandwidth_bytes_per_s: float
    host_link_bytes_per_s: float
    source: str


# PCIe per direction (PCI-SIG, 128b/130b): Gen4 x16 31.5 GB/s, Gen5 x16 63 GB/s; x8 is half.
PCIE4_X16 = 31.5 * GB
PCIE4_X8 = 15.75 * GB
PCIE5_X16 = 63.0 * GB
PCIE5_X8 = 31.5 * GB

_GEFORCE = "NVIDIA GeForce product pages (memory bus × data rate); PCI-SIG link rates"

# A "12 GB" GeForce card reports 12,288 MiB and an "80 GB" H100 81,559 MiB, so VRAM sizes are taken as
# GiB — as the planner's card table does (core/plan/cards.py), so the KV cache page and What changed agree.
CARDS: dict[str, Card] = {
    "rtx3060_12gb": Card("RTX 3060 12GB", 12 * GiB, 360 * GB, PCIE4_X16, _GEFORCE),
    "rtx4060ti_16gb": Card("RTX 4060 Ti 16GB", 16 * GiB, 288 * GB, PCIE4_X8, _GEFORCE),
    "rtx4070": Card("RTX 4070 12GB", 12 * GiB, 504 * GB, PCIE4_X16, _GEFORCE),
    "rtx5060ti_16gb": Card("RTX 5060 Ti 16GB", 16 * GiB, 448 * GB, PCIE5_X8, _GEFORCE),
    "rtx3090": Card("RTX 3090 24GB", 24 * GiB, 936 * GB, PCIE4_X16, _GEFORCE),
    "rtx4090": Card("RTX 4090 24GB", 24 * GiB, 1008 * GB, PCIE4_X16, _GEFORCE),
    "rtx5080": Card("RTX 5080 16GB", 16 * GiB, 960 * GB, PCIE5_X16, _GEFORCE),
    "h100_sxm": Card("H100 SXM 80GB", 80 * GiB, 3350 * GB, PCIE5_X16, "NVIDIA H100 product page"),
    "h200": Card("H200 141GB", 141 * GiB, 4800 * GB, PCIE5_X16, "NVIDIA H200 product page"),
}
DEFAULT_CARD = "rtx3060_12gb"


# ---------------------------------------------------------------------------------------------
# Generic pieces (plain byte counts — reusable with measured device numbers)
# ---------------------------------------------------------------------------------------------


STATE_PASSES = 2  # a fixed state is read once and written back once per step (a fused kernel's count)


def step_bytes(weights_read: float, cache_read: float, fixed_state: float) -> float:
    """Bytes one decode step moves: the weights it reads, the cache it reads, and every fixed state
    (boards, convolution windows) read and written back — `STATE_PASSES` × its size, as fla's fused
    recurrent kernels load and store it (fla `fused_recurrent_gated_delta_rule`). The one count the
    planner (core/plan/decode.py), this module, the benchmarks (core/gpu/suites/checkpoint_bench.py,
    bench/qwen35_cpu.py) and the pages' words use, so one model has one roofline."""
    return weights_read + cache_read + STATE_PASSES * fixed_state


def bandwidth_bound_tokens_per_s(bytes_per_token: float, bandwidth: float) -> float:
    """The roofline: one token per full read of its bytes."""
    if bytes_per_token <= 0:
        raise ValueError("bytes_per_token must be positive")
    return bandwidth / bytes_per_token


def host_link_slowdowns() -> tuple[float, float]:
    """How many times slower the host link is than the card's memory, least and most, over CARDS."""
    ratios = [c.bandwidth_bytes_per_s / c.host_link_bytes_per_s for c in CARDS.values()]
    return min(ratios), max(ratios)


def spill_split(
    read_bytes: float, budget_bytes: float, resident_unread_bytes: float = 0.0
) -> tuple[float, float]:
    """Split the bytes read per step into (in VRAM, spilled to host memory).

    `resident_unread_bytes` occupy VRAM without being read each step (an MoE's idle
    experts). Whatever is read fills the rest of the budget; the excess spills.
    """
    room = max(0.0, budget_bytes - resident_unread_bytes)
    in_vram = min(read_bytes, room)
    return in_vram, read_bytes - in_vram


def spill_time_per_token(
    read_bytes: float,
    budget_bytes: float,
    bandwidth: float,
    link_bandwidth: float,
    resident_unread_bytes: float = 0.0,
) -> float:
    """Seconds per token when what does not fit in `budget_bytes` is streamed over the link."""
    in_vram, spilled = spill_split(read_bytes, budget_bytes, resident_unread_bytes)
    return in_vram / bandwidth + spilled / link_bandwidth


# ---------------------------------------------------------------------------------------------
# Model-level predictions
# ---------------------------------------------------------------------------------------------


def weight_bytes(spec: ModelSpec, weight_bytes_per_param: float = 2.0) -> float:
    """All weights that must be resident (every expert, busy or not)."""
    return spec.total_params() * weight_bytes_per_param


def active_weight_bytes(spec: ModelSpec, weight_bytes_per_param: float = 2.0) -> float:
    """Weights read per token: everything but idle experts and the input table (one row is read)."""
    return spec.active_params(count_embedding_table=False) * weight_bytes_per_param


def decode_bytes_per_token(
    spec: ModelSpec,
    context: int,
    weight_bytes_per_param: float = 2.0,
    cache_bytes_per_element: float = 2,
    state_bytes_per_element: float = 4,
) -> float:
    """Bytes one decoding step moves (`step_bytes`): active weights + the cache at `context`, read, + the
    fixed state, read and written back."""
    growing = context * spec.kv_cache_bytes_per_token(cache_bytes_per_element)
    state = spec.state_bytes(state_bytes_per_element)
    return step_bytes(active_weight_bytes(spec, weight_bytes_per_param), growing, state)


@dataclass(frozen=True)
class SpeedPrediction:
    """What the roofline says about one (model, card, context)."""

    context: int
    bytes_per_token: float  # moved per step: read, and the fixed state written back
    resident_bytes: float  # all weights + cache/state that want to live in VRAM
    in_vram_bytes: float  # of the bytes read, those served from VRAM
    spilled_bytes: float  # of the bytes read, those streamed over the host link
    weights_fit: bool  # False: the weights alone exceed the budget
    tokens_per_s: float | None  # None when the weights do not fit

    @property
    def spilled(self) -> bool:
        return self.spilled_bytes > 0


@dataclass(frozen=True)
class Storage:
    """How a model is stored and how much of the card it may use: the settings every prediction below
    takes as keywords (`weight_bytes_per_param` may also come positionally, after the card)."""

    weight_bytes_per_param: float = 2.0
    cache_bytes_per_element: float = 2
    state_bytes_per_element: float = 4
    vram_budget_bytes: float | None = None  # None: the whole card
    reserve_bytes: float = 0.0  # kept back for the runtime (CUDA context, activations)

    def budget(self, card: Card) -> float:
        """The bytes weights, cache and state may take on `card`."""
        whole = card.vram_bytes if self.vram_budget_bytes is None else self.vram_budget_bytes
        return whole - self.reserve_bytes


def predict(
    spec: ModelSpec, context: int, card: Card, weight_bytes_per_param: float = 2.0, **storage
) -> SpeedPrediction:
    """Full prediction at one context: bytes read, what spills, tokens/s (None if weights do not fit).
    `storage`: the other fields of `Storage`.

    Weights and the fixed state are placed in VRAM first; the growing cache takes what is left,
    and the part of it that does not fit is read over the host link every step.
    """
    s = Storage(weight_bytes_per_param, **storage)
    budget = s.budget(card)
    weights = weight_bytes(spec, s.weight_bytes_per_param)
    active = active_weight_bytes(spec, s.weight_bytes_per_param)
    state = spec.state_bytes(s.state_bytes_per_element)
    cache = spec.cache_bytes(context, s.cache_bytes_per_element, s.state_bytes_per_element)  # growing + state
    moved = step_bytes(active, cache - state, state)
    read = (
        active + cache
    )  # each byte once; the rest of `moved` is the state written back, to VRAM (placed first)
    if weights > budget:
        return SpeedPrediction(context, moved, weights + cache, 0.0, moved, False, None)
    in_vram, spilled = spill_split(read, budget, resident_unread_bytes=weights - active)
    in_vram += moved - read
    seconds = in_vram / card.bandwidth_bytes_per_s + spilled / card.host_link_bytes_per_s
    return SpeedPrediction(context, moved, weights + cache, in_vram, spilled, True, 1.0 / seconds)


def predicted_tokens_per_second(spec: ModelSpec, context: int, card: Card, *args, **storage) -> float | None:
    """Bandwidth-bound tokens/s at `context`, spill included; None when the weights do not fit."""
    return predict(spec, context, card, *args, **storage).tokens_per_s


def spill_context(spec: ModelSpec, card: Card, weight_bytes_per_param: float = 2.0, **storage) -> int | None:
    """The first context length whose weights + cache no longer fit the budget.

    0 when even an empty context does not fit (weights + fixed state too big);
    None when it never spills (no growing cache and everything fits).
    """
    s = Storage(weight_bytes_per_param, **storage)
    fixed = weight_bytes(spec, s.weight_bytes_per_param) + spec.cache_bytes(
        0, s.cache_bytes_per_element, s.state_bytes_per_element
    )
    if fixed > s.budget(card):
        return 0
    per_token = spec.kv_cache_bytes_per_token(s.cache_bytes_per_element)
    if per_token == 0:
        return None
    # largest T with fixed + T·per_token <= budget, plus one
    return int((s.budget(card) - fixed) // per_token) + 1


def speed_curve(
    spec: ModelSpec,
    card: Card,
    contexts: list[int],
    weight_bytes_per_param: float = 2.0,
    **kwargs,
) -> list[SpeedPrediction]:
    """Predictions at many context lengths (for the calculator chart)."""
    return [predict(spec, int(t), card, weight_bytes_per_param, **kwargs) for t in contexts]


def slowdown(
    spec: ModelSpec, card: Card, context: int, weight_bytes_per_param: float = 2.0, **kwargs
) -> float | None:
    """Speed at `context` as a fraction of the speed at an empty context (the seed's 'a quarter')."""
    start = predicted_tokens_per_second(spec, 0, card, weight_bytes_per_param, **kwargs)
    end = predicted_tokens_per_second(spec, context, card, weight_bytes_per_param, **kwargs)
    if start is None or end is None:
        return None
    return end / start


# ---------------------------------------------------------------------------------------------
# One width, every mechanism (What changed): memory held and multiply-adds per token
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Width:
    """A model shape shared by every mechanism, so only the memory rule differs."""

    layers: int
    heads: int
    head_dim: int
    name: str = ""
    kv_heads: int | None = None  # key/value heads the cache keeps (GQA); None: one per query head (MHA)

    @property
    def d_model(self) -> int:
        return self.heads * self.head_dim

    @property
    def cached_heads(self) -> int:
        return self.kv_heads or self.heads

    @classmethod
    def of(cls, spec: ModelSpec) -> Width:
        """The width of a spec's softmax-attention layers: query heads × head size, and the key/value
        heads its cache really keeps (Llama-3-8B: 32 query heads share 8 key/value heads)."""
        attention = spec.attention
        head_dim = getattr(attention, "head_dim", None) or attention.v_head_dim
        kv_heads = getattr(attention, "kv_heads", None)
        return cls(spec.num_layers, attention.heads, head_dim, name=spec.name, kv_heads=kv_heads)


def mechanism_memory_bytes(
    mechanism: str,
    context: int,
    width: Width,
    cache_bytes_per_element: float = 2,
    state_bytes_per_element: float = 4,
) -> float:
    """What a whole model of `width` keeps per sequence at `context` tokens, by mechanism.

    'attention' keeps K and V of every past token for each cached head (MHA, or GQA when
    `width.kv_heads` is set); the board mechanisms keep one
    head_dim × head_dim matrix per head; 'no_cache' keeps nothing (it recomputes instead).
    """
    if context < 0:
        raise ValueError("context must be non-negative")
    if mechanism == "no_cache":
        return 0.0
    if mechanism == "attention":
        return context * width.layers * 2 * width.cached_heads * width.head_dim * cache_bytes_per_element
    if mechanism in RULES:
        return width.layers * width.heads * width.head_dim * width.head_dim * state_bytes_per_element
    raise ValueError(f"unknown mechanism {mechanism!r}")


def mechanism_macs_per_token(mechanism: str, context: int, width: Width) -> float:
    """Multiply-adds the memory part of all layers spends on the token at position `context`.

    Counted per head with d = head_dim (projections that every mechanism shares are left out,
    except the key/value projections a cache-less model must redo for every past token):
      no_cache   : all T queries' attention (T(T+1)·d per query head) + K,V for all T past tokens
                   again (2·T·d_model·d per key/value head: with GQA, Llama-3-8B projects 8, not 32)
      attention  : scores against T keys + weighted sum of T values (2·T·d)
      a fixed-board rule: one d² pass each to write and read, + one to read the old value if it
      erases (β), + one to fade if it has a gate, + d for per-channel rates
      (`Mechanism.macs_per_head`: linear 2·d², delta 3·d², gated_delta 4·d², kda 4·d² + d)
    """
    if context < 0:
        raise ValueError("context must be non-negative")
    d, h, t = width.head_dim, width.heads, context
    if mechanism == "no_cache":
        redo_kv = 2 * t * width.d_model * d * width.cached_heads
        return float(width.layers * (h * t * (t + 1) * d + redo_kv))
    per_head = {
        "attention": 2 * t * d,
        **{key: rule.macs_per_head(d) for key, rule in RULES.items()},
    }
    if mechanism not in per_head:
        raise ValueError(f"unknown mechanism {mechanism!r}")
    return float(width.layers * h * per_head[mechanism])


def hybrid_memory_bytes(
    context: int,
    width: Width,
    full_attn_every: int = HYBRID_EVERY,
    cache_bytes_per_element: float = 2,
    state_bytes_per_element: float = 4,
) -> float:
    """A K3-style mix at `width`: every `full_attn_every`-th layer keeps a cache, the rest a board."""
    full = width.layers // full_attn_every
    boards = width.layers - full
    part = Width(1, width.heads, width.head_dim, kv_heads=width.kv_heads)
    return full * mechanism_memory_bytes(
        "attention", context, part, cache_bytes_per_element
    ) + boards * mechanism_memory_bytes("kda", context, part, state_bytes_per_element=state_bytes_per_element)


def hybrid_macs_per_token(context: int, width: Width, full_attn_every: int = HYBRID_EVERY) -> float:
    """Work per token of the same K3-style mix: softmax attention in 1 layer of `full_attn_every`, KDA elsewhere."""
    full = width.layers // full_attn_every
    part = Width(1, width.heads, width.head_dim, kv_heads=width.kv_heads)
    return full * mechanism_macs_per_token("attention", context, part) + (
        width.layers - full
    ) * mechanism_macs_per_token("kda", context, part)
