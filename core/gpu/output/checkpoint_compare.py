"""The sentence under the GPU page's side-by-side checkpoint charts, computed from the runs themselves.

Given the checkpoint runs one reader made on one device (core.gpu.suites.checkpoint_bench results), say what
the charts show in numbers: for a dense model and a hybrid, at the deepest depth both were timed at,
the memory each held (the hybrid's fixed boards named) and the speed each reached, and how fast each
cache grows per token; for any other pair, each run's speed at its shallowest and deepest depth.
"""

from __future__ import annotations

from core.gpu.suites.checkpoint_bench import CheckpointPoint, CheckpointResult
from core.i18n import _
from core.units import format_bytes


def _at(result: CheckpointResult, depth: int) -> CheckpointPoint:
    return next(p for p in result.points if p.depth == depth)


def _rate(tokens_per_s: float) -> str:
    return _("{rate} tokens/s").format(rate=f"{tokens_per_s:,.1f}")


def compare_words(results: list[CheckpointResult]) -> str:
    """One or two plain sentences with every number from `results` (each with at least one point)."""
    dense = [r for r in results if not r.state_bytes]
    hybrid = [r for r in results if r.state_bytes]
    if dense and hybrid:
        return _dense_against_hybrid(dense[-1], hybrid[-1])
    return " ".join(
        _("{name}: {first_rate} at depth {first}, {last_rate} at depth {last}.").format(
            name=r.name,
            first_rate=_rate(r.points[0].tokens_per_s),
            first=f"{r.points[0].depth:,}",
            last_rate=_rate(r.points[-1].tokens_per_s),
            last=f"{r.points[-1].depth:,}",
        )
        for r in results
    )


def _dense_against_hybrid(dense: CheckpointResult, hybrid: CheckpointResult) -> str:
    common = sorted({p.depth for p in dense.points} & {p.depth for p in hybrid.points})
    growth = _(
        "Per token of context the dense model's cache grows by {dense}, the hybrid's by {hybrid} (only its "
        "attention layers keep rows)."
    ).format(
        dense=format_bytes(dense.cache_bytes_per_token), hybrid=format_bytes(hybrid.cache_bytes_per_token)
    )
    if not common:
        return growth + " " + _("The two runs share no depth, so their speeds are not compared at one.")
    d = common[-1]
    a, b = _at(dense, d), _at(hybrid, d)
    words = (
        _(
            "At depth {depth}, {dense} held {dense_cache} of KV cache and wrote {dense_rate}; {hybrid} held "
            "{hybrid_held} ({boards} of it fixed boards, the same at every depth) and wrote {hybrid_rate}, "
            "{times} the dense speed (faster)."
        )
        if b.tokens_per_s > a.tokens_per_s
        else _(
            "At depth {depth}, {dense} held {dense_cache} of KV cache and wrote {dense_rate}; {hybrid} held "
            "{hybrid_held} ({boards} of it fixed boards, the same at every depth) and wrote {hybrid_rate}, "
            "{times} the dense speed (slower)."
        )
    )
    return (
        words.format(
            depth=f"{d:,}",
            dense=dense.name,
            dense_cache=format_bytes(a.cache_bytes),
            dense_rate=_rate(a.tokens_per_s),
            hybrid=hybrid.name,
            hybrid_held=format_bytes(b.cache_bytes + b.state_bytes),
            boards=format_bytes(b.state_bytes),
            hybrid_rate=_rate(b.tokens_per_s),
            times=_("{ratio:.2f}×").format(ratio=b.tokens_per_s / a.tokens_per_s),  # Japanese: 倍
        )
        + " "
        + growth
    )
