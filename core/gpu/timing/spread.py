"""The median of repeated speed readings and how far they spread: what a noisy probe reports.

On a shared CPU one copy can run at a third of the next one's speed, so the best of a few copies is an
outlier, not a ceiling: the roofline divides by the median, and the page shows the range beside it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Spread:
    """Readings of one quantity (bytes/s): their median, lowest, highest and how many there were."""

    median: float
    low: float
    high: float
    count: int

    @property
    def relative(self) -> float:
        """(highest − lowest) ÷ median: 0 for readings that all agree."""
        return (self.high - self.low) / self.median


def spread_of(samples: Iterable[float]) -> Spread:
    """Median, min and max of `samples`; ValueError for none, or for one that is not a finite number > 0."""
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("no readings to summarise")
    bad = [v for v in values if not (math.isfinite(v) and v > 0)]
    if bad:
        raise ValueError(f"a reading must be a finite number above zero, got {bad[0]!r}")
    return Spread(statistics.median(values), min(values), max(values), len(values))
