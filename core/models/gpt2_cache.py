"""What a GPT-2's KV cache holds and what it saves, checked on real runs.

`cache_size` is the cache's bytes per token and per context (per layer: a key and a value row per
head); `positions_computed_formula` the positions a run computes with and without a cache (n(n+1)/2
in closed form); `compare_runs_per_step` the KV cache page's live check that the cached and
recomputing runs of `core.generation` agree; `RunSeries` a run's per-step numbers read off its traces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from core.models.gpt2 import GPT2
from core.trace import Trace


class Run(Protocol):
    """What a comparison reads of a run (`core.generation.GenerationRun`): its per-step traces."""

    traces: list[Trace]


def positions_computed_formula(prompt_length: int, steps: int, use_cache: bool) -> int:
    """Total positions run through the model after `steps` steps from a prompt of p bytes.

    Without a cache step i reads the whole text, p + i − 1 positions, so the total is
    p + (p+1) + … + (p+s−1) = n(n+1)/2 − (p−1)p/2 with n = p + s − 1 (just n(n+1)/2
    when the prompt is one byte). With a cache: the prompt once, then one per step.
    """
    if steps <= 0:
        return 0
    p, n = prompt_length, prompt_length + steps - 1
    if use_cache:
        return p + (steps - 1)
    return n * (n + 1) // 2 - (p - 1) * p // 2


@dataclass(frozen=True)
class RunComparison:
    """The live check of the KV cache page: do the cached and recomputing runs agree?"""

    steps: int
    same_tokens: int  # steps whose chosen byte is identical
    max_logit_difference: float  # largest |Δ logit| over every step and byte

    @property
    def identical(self) -> bool:
        return self.same_tokens == self.steps


def compare_runs(a: Run, b: Run, steps: int | None = None) -> RunComparison:
    """Compare the first `steps` steps of two runs of the same prompt (all common steps by default)."""
    n = min(len(a.traces), len(b.traces)) if steps is None else min(steps, len(a.traces), len(b.traces))
    pairs = list(zip(a.traces[:n], b.traces[:n], strict=True))
    same = sum(x.token == y.token for x, y in pairs)
    diff = max((float(np.abs(x.logits - y.logits).max()) for x, y in pairs), default=0.0)
    return RunComparison(n, same, diff)


def compare_runs_per_step(a: Run, b: Run) -> list[RunComparison]:
    """compare_runs for every prefix at once: entry t covers the first t steps (entry 0: none)."""
    out = [RunComparison(0, 0, 0.0)]
    same, diff = 0, 0.0
    for x, y in zip(a.traces, b.traces, strict=False):  # runs may stop at different lengths
        same += x.token == y.token
        diff = max(diff, float(np.abs(x.logits - y.logits).max()))
        out.append(RunComparison(len(out), same, diff))
    return out


class RunSeries:
    """Per-step numbers of a precomputed run, read off its traces, for the charts and counters."""

    def __init__(self, traces: list[Trace]):
        self.steps = list(range(1, len(traces) + 1))
        self.text_lengths = [t.position + 1 for t in traces]  # bytes read at each step
        self.positions_computed = [t.positions_computed for t in traces]
        self.cumulative_work = np.cumsum(self.positions_computed).astype(int).tolist()
        self.wall_ms = [t.wall_ms for t in traces]
        self.cache_bytes = [t.cache_bytes for t in traces]
        self.tokens = [t.token for t in traces]


@dataclass(frozen=True)
class CacheSize:
    """What the live model's KV cache costs per token, beside the catalog row it should match.

    `per_token` is in the model's own number format (fp32 here: 4 bytes); `per_token_16bit` the
    same cache stored in 16-bit, the convention of core/specs; `spec_16bit` that row's figure
    (GPT-2 small: 2 × 12 layers × 768 × 2 bytes = 36 KiB) or None when no row describes it.
    """

    per_token: int
    element_bytes: int
    per_token_16bit: int
    spec_name: str | None = None
    spec_16bit: float | None = None

    @property
    def matches_spec(self) -> bool | None:
        return None if self.spec_16bit is None else self.per_token_16bit == self.spec_16bit


def cache_size(model: GPT2, spec=None) -> CacheSize:
    """The model's cache bytes per token, and `spec`'s (a core.specs.ModelSpec) for comparison."""
    per_token = model.cache_bytes_per_token()
    element = model.element_bytes()
    per_16 = per_token * 2 // element
    if spec is None:
        return CacheSize(per_token, element, per_16)
    return CacheSize(per_token, element, per_16, spec.name, spec.kv_cache_bytes_per_token(2))
