"""How close a real engine comes to the planner's ceiling: one published llama.cpp run, set against
the planner's own figure for the same model, card and formats.

The run (core/gpu/published.py, a community report): Llama 8B, Q4_0 weights, q8_0 KV cache, all on one
RTX 3090, llama-bench tg128 after filling the context to depth d. The planner plans Llama-3.1-8B (the
same shapes as Llama 3 8B) with those formats at context d, so the share is measured ÷ our ceiling —
not ÷ a bound someone else worked out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from core.gpu.published import Published, depth_run, measured_speeds

CONFIG = Path(__file__).resolve().parents[2] / "assets" / "configs" / "llama3_1_8b.json"


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
    from core.plan.config import parse
    from core.plan.plan import PlanInputs, plan

    model = parse(CONFIG.read_text(encoding="utf-8"))
    base = PlanInputs(weight_format="q4_0", cache_format="q8_0", card="rtx3090", batch=1, gpus=1)
    out = []
    for depth, speed in measured_speeds(source_run()).items():
        ceiling = plan(model, replace(base, context=depth), explain=False).decode_tokens_per_s
        out.append(Calibration(depth, speed, ceiling))
    return tuple(out)


def share_at(depth: int) -> float:
    """Measured ÷ ceiling at one published depth (0, 16384, 32768 or 65536 tokens)."""
    (row,) = [c for c in calibration() if c.depth == depth]
    return row.share


def calibration_words() -> str:
    """One sentence for the planner's assumptions, its percentages computed, not typed."""
    first, *rest = calibration()
    later = [f"{r.share:.0%} at {_depth(r.depth)}" for r in rest]
    listed = ", ".join(later[:-1]) + (" and " if len(later) > 1 else "") + (later[-1] if later else "")
    return (
        f"Measured decode of Llama 8B (Q4_0 weights, q8_0 cache) on an RTX 3090 with llama.cpp ran at "
        f"{first.share:.0%} of this planner's ceiling for the same setting at {_depth(first.depth)}"
        + (f", {listed}" if listed else "")
        + " (a community report; the source is in the Your GPU lesson's published table): a real engine stays below the ceiling"
        + (", and further below it as the context grows." if later else ".")
    )


def _depth(tokens: int) -> str:
    return "an empty context" if tokens == 0 else f"{tokens // 1024}K"
