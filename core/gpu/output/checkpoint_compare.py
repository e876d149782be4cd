"""The sentence under the GPU page's side-by-side checkpoint charts, computed from the runs themselves.

Given the checkpoint runs one reader made on one device (core.gpu.suites.checkpoint_bench results), say what
the charts show in numbers: for a dense model and a hybrid, at the deepest depth both were timed at,
the memory each held (the hybrid's fixed boards named) and the speed each reached, the share of its own
roofline each reached, whether a run's operations per step (× the planner's floor per kernel) weigh more
than its bytes — then the kernel count, not the architecture, decides that run's speed — and how fast
each cache grows per token; for any other pair, each run's speed at its shallowest and deepest depth.
"""

from __future__ import annotations

from core.gpu.suites.checkpoint_bench import CheckpointPoint, CheckpointResult
from core.i18n import _, run_on
from core.plan import latency
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
        return run_on(growth, _("The two runs share no depth, so their speeds are not compared at one."))
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
    said = words.format(
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
    return run_on(said, _shares(a, b), *_floors(dense.name, a, hybrid.name, b), growth)


def _ms(seconds: float) -> str:
    return _("{ms:.2f} ms").format(ms=1000 * seconds)


def _shares(a: CheckpointPoint, b: CheckpointPoint) -> str:
    """Each run's speed as a share of its own roofline (its bytes ÷ the bandwidth)."""
    return _(
        "Against its own roofline the dense model reached {dense:.0f}% and the hybrid {hybrid:.0f}% (each "
        "roofline its bytes ÷ the bandwidth: {dense_floor} and {hybrid_floor} a token)."
    ).format(
        dense=a.percent_of_roofline,
        hybrid=b.percent_of_roofline,
        dense_floor=_ms(a.bytes_floor_s),
        hybrid_floor=_ms(b.bytes_floor_s),
    )


def _floors(dense: str, a: CheckpointPoint, hybrid: str, b: CheckpointPoint) -> tuple[str, ...]:
    """Which floor is higher for each run — its operations one after another, or its bytes — and so what
    decides the comparison (two sentences); none when a run's operations were not counted."""
    if a.kernel_floor_s is None or b.kernel_floor_s is None:
        return ()
    us = latency.KERNEL_FLOOR_S * 1e6
    counts = _(
        "Operations per step: {dense} {dense_kernels:,.0f}, {hybrid} {hybrid_kernels:,.0f}; at {us:g} µs each "
        "(the planner's stated floor per kernel) they take at least {dense_floor} and {hybrid_floor}."
    ).format(
        dense=dense,
        dense_kernels=a.kernels_per_step,
        hybrid=hybrid,
        hybrid_kernels=b.kernels_per_step,
        us=us,
        dense_floor=_ms(a.kernel_floor_s),
        hybrid_floor=_ms(b.kernel_floor_s),
    )
    bound = [name for name, p in ((dense, a), (hybrid, b)) if p.kernel_bound]
    if len(bound) == 2:
        verdict = _(
            "Both kernel floors are above the bytes' floors: at this depth the operation counts, not the "
            "architectures, decide the comparison."
        )
    elif bound:
        verdict = _(
            "{name}'s kernel floor is above its bytes' floor: at this depth its operation count, not its "
            "architecture, decides its speed."
        ).format(name=bound[0])
    else:
        verdict = _(
            "Both bytes' floors are above the kernel floors: the bytes each architecture reads set the pace."
        )
    return counts, verdict
