"""Expectations with a stated range and a verdict: what the validator (bench.gpu_validate) prints and saves.

An expectation is a measured value, the range it should fall in and a status: PASS inside,
FAIL outside (or when the value is missing), SKIP when it needs a GPU and the run has none —
a CPU dry run still executes the code and records the value, but does not judge it — and INFO
for a value recorded without a range: nothing was judged, so it never reads as a PASS.
"""

from __future__ import annotations

from typing import Any

STATUSES = ("PASS", "FAIL", "SKIP", "INFO")  # the order a summary counts them in


def expect(what: str, value: float | None, low: float | None = None, high: float | None = None,
           unit: str = "", needs_cuda: bool = True, cuda: bool = True, skip: bool = False) -> dict[str, Any]:  # fmt: skip
    """One expectation: PASS inside [low, high], FAIL outside, SKIP where it needs a GPU and there is none
    (or `skip`: this machine cannot run what it measures), INFO for a value without a range."""
    if skip or (needs_cuda and not cuda):
        status = "SKIP"
    elif value is None:
        status = "FAIL"
    elif low is None and high is None:
        status = "INFO"
    else:
        status = "PASS" if (low is None or value >= low) and (high is None or value <= high) else "FAIL"
    return dict(what=what, value=value, low=low, high=high, unit=unit, status=status)


def range_text(e: dict[str, Any]) -> str:
    """The expected range in words: '[35, 110] %', '≥ 1.2×', '≤ 0.9×'."""
    lo, hi, u = e["low"], e["high"], e["unit"]
    if lo is not None and hi is not None:
        return f"[{lo:g}, {hi:g}]{u}"
    if lo is None and hi is None:
        return "no range (recorded only)"
    return f"≥ {lo:g}{u}" if lo is not None else f"≤ {hi:g}{u}"


def ratio(a: float | None, b: float | None) -> float | None:
    """a ÷ b, or None when either is missing (or b is 0)."""
    return None if a is None or b is None or not b else a / b


def pct(a: float | None, b: float | None) -> float | None:
    """a as a percentage of b, or None."""
    r = ratio(a, b)
    return None if r is None else 100 * r
