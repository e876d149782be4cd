"""A hybrid's memory against its all-attention twin: the same model with every layer full attention.

Kimi K3's page sets the growing MLA cache plus the fixed KDA boards (`core.specs.SPECS["kimi_k3"]`,
the release's config) beside what the same width would cache with attention in every layer, and the
context at which the two kinds of memory weigh the same.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core.specs import ModelSpec


def full_attention_twin(spec: ModelSpec) -> ModelSpec:
    """The same model with every layer full attention (its own MLA): what K3 would cache without KDA."""
    return dataclasses.replace(
        spec, key=f"{spec.key}_all_attention", name=f"{spec.name}, all layers MLA", kinds=(), linear=None
    )


@dataclass(frozen=True)
class MemoryAtContext:
    context: int
    hybrid_cache: float  # bytes of growing MLA cache
    hybrid_state: float  # bytes of fixed KDA boards (+ conv buffers)
    twin_cache: float  # bytes an all-attention model of the same width keeps

    @property
    def hybrid_total(self) -> float:
        return self.hybrid_cache + self.hybrid_state


def memory_at_contexts(spec: ModelSpec, contexts: list[int]) -> list[MemoryAtContext]:
    """Per-sequence memory of the hybrid and its all-attention twin (bf16 cache, fp32 boards)."""
    twin = full_attention_twin(spec)
    rows = []
    for context in contexts:
        cache = context * spec.kv_cache_bytes_per_token()
        rows.append(MemoryAtContext(context, cache, spec.state_bytes(), twin.cache_bytes(context)))
    return rows


def crossover_tokens(spec: ModelSpec) -> float:
    """Context length at which the growing cache weighs as much as the fixed boards."""
    return spec.state_bytes() / spec.kv_cache_bytes_per_token()


MEMORY_KINDS = ("kda", "mla")  # fixed boards, growing caches
