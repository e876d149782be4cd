"""The same plan at many context lengths (the page's speed-vs-context chart)."""

from __future__ import annotations

from dataclasses import replace

from core.plan.config import PlannedModel
from core.plan.inputs import PlanInputs
from core.plan.plan import Plan, plan

DEFAULT_CONTEXTS = tuple(2**n for n in range(10, 21))  # 1K … 1M


def sweep(
    model: PlannedModel, inputs: PlanInputs, contexts: tuple[int, ...] = DEFAULT_CONTEXTS
) -> list[Plan]:
    """One plan per context length, every other input unchanged."""
    return [plan(model, replace(inputs, context=int(t))) for t in sorted(set(contexts))]
