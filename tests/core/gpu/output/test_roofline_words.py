"""What the roofline divides by, in words computed from the run (core/gpu/output/roofline_words.py, issue 42).

The committed H200 run's full attention reached 101 % of its roofline at depth 131,072: beside that chart the
roofline must not read as a limit no step can pass. The sentence names the measured copy speed it divides by
and, where a point passed it, which one and by how much — every number from the run itself.
"""

from __future__ import annotations

import dataclasses

from core.gpu.output.committed_run import load
from core.gpu.output.roofline_words import denominator_words, highest_share


def test_the_committed_run_names_its_denominator_and_the_point_above_it():
    context = load().context
    share, series, depth = highest_share(context)
    assert share > 100 and series == "full attention"  # 101.3 % at depth 131,072 (bench.json)
    words = denominator_words(context)
    assert f"{context.bandwidth_bytes_per_s / 1e9:,.0f} GB/s" in words and "copy speed measured" in words
    assert f"reached {share:.0f}% of its roofline at depth {depth:,}" in words
    assert "fastest" not in words


def test_a_run_below_its_roofline_gets_the_denominator_alone():
    context = load().context
    below = dataclasses.replace(
        context,
        series=[
            dataclasses.replace(s, points=[p for p in s.points if p.percent_of_roofline <= 100])
            for s in context.series
        ],
    )
    words = denominator_words(below)
    assert "GB/s" in words and "beat a copy" not in words
