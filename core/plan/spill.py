"""How long a conversation grows before memory runs out: one function for the planner and for the KV cache page.

The KV cache page's calculator used to say a conversation with Llama-3-8B at 4 bits spills out of an RTX 3060 at
67,671 tokens while the planner, for the same card, said 52,568 (issue 42): the lesson counted a flat
4.0 bits a weight and no room for the runtime, the planner GGUF Q4_0's 4.5 bits (its output head in
Q6_K) and a reserve. Both now ask `longest_context` (the planner's `max_context`) and `spill_point`
(one token past it) with the same formats, so one model on one card has one number.

    fits(T) ⟺ batch × (cache at T, as stored across the GPUs) ≤ share × memory × GPUs − weights − reserve

`on_one_card` is the KV cache page's setting: one sequence, the whole card (a home computer's llama.cpp or
Ollama uses all of it: share `HOME_SHARE`), weights in a GGUF format, a 16-bit cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.plan.cards import card
from core.plan.config import PlannedModel
from core.plan.footprint import replication, reserve_bytes, sequence_at, stored_per_sequence, weight_bytes
from core.plan.inputs import MAX_SEARCH_CONTEXT, PlanInputs
from core.plan.memory import unbounded_growth
from core.specs import ModelSpec

HOME_SHARE = 1.0  # the KV cache page: the whole card (llama.cpp and Ollama take what they need, no utilisation cap)


def room_for_cache(model: PlannedModel, inputs: PlanInputs, memory_bytes: float | None = None) -> float:
    """Usable memory left for the cache once weights and the reserve sit in it (all GPUs together);
    `memory_bytes`: one card's memory, where the card is not in the planner's table (the KV cache page's cards)."""
    memory = card(inputs.card).memory_bytes if memory_bytes is None else memory_bytes
    usable = inputs.memory_share * memory * inputs.gpus
    return usable - weight_bytes(model, inputs.weight_format) - reserve_bytes(model, inputs.gpus)


def _fits(model: PlannedModel, inputs: PlanInputs, room: float, tokens: int) -> bool:
    per_sequence = stored_per_sequence(sequence_at(model, inputs, tokens), replication(model, inputs.gpus))
    return inputs.batch * per_sequence <= room


def longest_context(model: PlannedModel, inputs: PlanInputs, memory_bytes: float | None = None) -> int | None:
    """Longest context whose cache for `inputs.batch` sequences fits (0 also when not even an empty one
    does); None when memory sets no limit (a cache that stops growing, or one past 2^34 tokens)."""
    room = room_for_cache(model, inputs, memory_bytes)
    if not _fits(model, inputs, room, 0):
        return 0
    if not unbounded_growth(model) and _fits(model, inputs, room, MAX_SEARCH_CONTEXT):
        return None
    lo, hi = 0, MAX_SEARCH_CONTEXT
    if _fits(model, inputs, room, hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _fits(model, inputs, room, mid) else (lo, mid)
    return lo


def spill_point(model: PlannedModel, inputs: PlanInputs, memory_bytes: float | None = None) -> int | None:
    """The first context that no longer fits: `longest_context` + 1; 0 when not even an empty context
    fits; None when memory sets no limit."""
    if not _fits(model, inputs, room_for_cache(model, inputs, memory_bytes), 0):
        return 0
    longest = longest_context(model, inputs, memory_bytes)
    return None if longest is None else longest + 1


@dataclass(frozen=True)
class OnOneCard:
    """The KV cache page's model on one card, counted as the planner counts it (core/roofline.py takes these)."""

    weight_bytes: float  # every weight in the format (GGUF Q4_0: 4.5 bits, its head Q6_K)
    bytes_per_weight: float  # their average per parameter: what core.roofline multiplies counts by
    reserve_bytes: float  # the runtime and one prefill chunk's activations
    budget_bytes: float  # HOME_SHARE × the card's memory
    spill: int | None  # `spill_point`

    @property
    def weights_fit(self) -> bool:
        return self.weight_bytes + self.reserve_bytes <= self.budget_bytes


def on_one_card(spec: ModelSpec, memory_bytes: float, weight_format: str) -> OnOneCard:
    """`spec` (a catalog model) on a card of `memory_bytes`, one sequence, a 16-bit cache, `weight_format`
    a planner format (formats.WEIGHT_FORMATS): the planner's weights, reserve and spill point."""
    model = PlannedModel(spec, spec.key)
    inputs = PlanInputs(batch=1, weight_format=weight_format, cache_format="bf16", memory_share=HOME_SHARE)
    weights = weight_bytes(model, weight_format)
    return OnOneCard(
        weights,
        weights / spec.total_params(),
        reserve_bytes(model, 1),
        HOME_SHARE * memory_bytes,
        spill_point(model, inputs, memory_bytes),
    )
