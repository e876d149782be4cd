"""How close a real engine comes to the planner's ceiling: one published llama.cpp run, set against
the planner's own figure for the same model, card and formats.

The run (core/specs/published.py, a community report): Llama 8B, Q4_0 weights, q8_0 KV cache, all on one
RTX 3090, llama-bench tg128 after filling the context to depth d. The planner plans Llama-3.1-8B (the
same shapes as Llama 3 8B) with those formats at context d, so the share is measured ÷ our ceiling —
not ÷ a bound someone else worked out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from core.i18n import _
from core.plan.config import SHIPPED_CONFIGS, parse
from core.plan.decode import decode_step
from core.plan.inputs import PlanInputs
from core.specs.published import Published, depth_run, measured_speeds
from core.units import format_context


@dataclass(frozen=True)
class Calibration:
    depth: int  # tokens already in the context
    measured: float  # tokens/s, as published
    ceiling: float  # tokens/s, the planner's roofline for the same setting

    @property
    def share(self) -> float:
        return self.measured / self.ceiling


def source_run() -> Published:
    """The published row: the RTX 3090's Llama 8B decode at four depths."""
    return depth_run("Llama 8B")


@cache
def calibration() -> tuple[Calibration, ...]:
    """Measured vs the planner's ceiling at each published depth."""
    model = parse((SHIPPED_CONFIGS / "llama3_1_8b.json").read_text(encoding="utf-8"))
    base = PlanInputs(weight_format="q4_0", cache_format="q8_0", card="rtx3090", batch=1, gpus=1)
    out = []
    for depth, speed in measured_speeds(source_run()).items():
        ceiling = 1 / decode_step(model, replace(base, context=depth)).seconds  # batch 1
        out.append(Calibration(depth, speed, ceiling))
    return tuple(out)


def shares_words() -> str:
    """Every published depth's share, in words: '72% at an empty context, 60% at 16K, 53% at 32K and 47% at 64K'."""
    parts = [
        _("{share:.0%} at {depth}").format(
            share=r.share, depth=_("an empty context") if r.depth == 0 else format_context(r.depth)
        )
        for r in calibration()
    ]
    if len(parts) == 1:
        return parts[0]
    return _("{rest} and {last}").format(rest=_(", ").join(parts[:-1]), last=parts[-1])


def calibration_words() -> str:
    """One sentence for the planner's assumptions, its percentages computed, not typed."""
    return _(
        "Measured decode of Llama 8B (Q4_0 weights, q8_0 cache) on an RTX 3090 with llama.cpp reached this share "
        "of this planner's ceiling for the same setting: {shares} (a community report; the source is in "
        "the Your GPU lesson's published table). A real engine stays below the ceiling, and further below it as "
        "the context grows."
    ).format(shares=shares_words())
