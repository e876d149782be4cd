"""The sentence under the GPU page's side-by-side checkpoint charts, computed from the runs themselves.

Given the checkpoint runs one reader made on one device (core.gpu.checkpoint_bench results), say what
the charts show in numbers: for a dense model and a hybrid, at the deepest depth both were timed at,
the memory each held (the hybrid's fixed boards named) and the speed each reached, and how fast each
cache grows per token; for any other pair, each run's speed at its shallowest and deepest depth.
"""

from __future__ import annotations

from core.gpu.checkpoint_bench import CheckpointPoint, CheckpointResult
from core.units import format_bytes


def _at(result: CheckpointResult, depth: int) -> CheckpointPoint:
    return next(p for p in result.points if p.depth == depth)


def _rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.1f} tokens/s"


def compare_words(results: list[CheckpointResult]) -> str:
    """One or two plain sentences with every number from `results` (each with at least one point)."""
    dense = [r for r in results if not r.state_bytes]
    hybrid = [r for r in results if r.state_bytes]
    if dense and hybrid:
        return _dense_against_hybrid(dense[-1], hybrid[-1])
    return " ".join(
        f"{r.name}: {_rate(r.points[0].tokens_per_s)} at depth {r.points[0].depth:,}, "
        f"{_rate(r.points[-1].tokens_per_s)} at depth {r.points[-1].depth:,}."
        for r in results
    )


def _dense_against_hybrid(dense: CheckpointResult, hybrid: CheckpointResult) -> str:
    common = sorted({p.depth for p in dense.points} & {p.depth for p in hybrid.points})
    growth = (
        f"Per token of context the dense model's cache grows by {format_bytes(dense.cache_bytes_per_token)}, "
        f"the hybrid's by {format_bytes(hybrid.cache_bytes_per_token)} (only its attention layers keep rows)."
    )
    if not common:
        return growth + " The two runs share no depth, so their speeds are not compared at one."
    d = common[-1]
    a, b = _at(dense, d), _at(hybrid, d)
    faster = "faster" if b.tokens_per_s > a.tokens_per_s else "slower"
    return (
        f"At depth {d:,}, {dense.name} held {format_bytes(a.cache_bytes)} of KV cache and wrote "
        f"{_rate(a.tokens_per_s)}; {hybrid.name} held {format_bytes(b.cache_bytes + b.state_bytes)} "
        f"({format_bytes(b.state_bytes)} of it fixed boards, the same at every depth) and wrote "
        f"{_rate(b.tokens_per_s)}, {b.tokens_per_s / a.tokens_per_s:.2f}× the dense speed ({faster}). "
        + growth
    )
