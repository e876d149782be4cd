"""What a measured roofline divides by, in words computed from the run (issue 42).

The benchmarks' roofline is bytes a step moves ÷ the copy speed measured on the same device
(core/gpu/timing/bandwidth.py: a copy reads and writes every byte, 2·n / t), not a data sheet's peak.
A decode step mostly reads, and reading alone can run a few percent faster than a copy, so a measured
point can sit just above its roofline — the committed H200 run's full attention reached 101 % of it. A
sentence calling the roofline a speed no step can pass, beside that chart, was wrong; this one names the
denominator and the highest share the run reached.
"""

from __future__ import annotations

from core.gpu.suites.context_bench import ContextResult
from core.i18n import _


def highest_share(result: ContextResult) -> tuple[float, str, int]:
    """(the highest % of its roofline any point reached, its series, its depth)."""
    return max(
        ((p.percent_of_roofline, s.model, p.depth) for s in result.series for p in s.points),
        default=(0.0, "", 0),
    )


def denominator_words(result: ContextResult) -> str:
    """One or two sentences under a context chart: the roofline's denominator, and how a point can pass it."""
    words = _(
        "The dashed roofline is the bytes each step moves ÷ {bandwidth:,.0f} GB/s, the copy speed measured on this "
        "device (a copy reads and writes every byte), not a data sheet's peak: it is the speed of moving those "
        "bytes as fast as a copy moves them, not a limit no step can pass."
    ).format(bandwidth=result.bandwidth_bytes_per_s / 1e9)
    share, series, depth = highest_share(result)
    if share > 100:
        words += " " + _(
            "A step that mostly reads can beat a copy by a few percent: {series} reached {share:.0f}% of its "
            "roofline at depth {depth:,}."
        ).format(series=_(series), share=share, depth=depth)
    return words
