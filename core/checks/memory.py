"""Checks of the two lessons that remember everything: GPT-2 without a cache, and the KV cache."""

from __future__ import annotations

from core.checks.questions import Choice, Number, Question
from core.i18n import _
from core.models.gpt2_cache import positions_computed_formula

STEPS = 100  # steps the reader counts, from a one-token prompt


def gpt2() -> tuple[Question, ...]:
    total = positions_computed_formula(1, STEPS, use_cache=False)
    return (
        Number(
            "total",
            _(
                "Start from a 1-token prompt with no cache. How many positions has the model run in total "
                "after {steps} steps?"
            ).format(steps=STEPS),
            answer=total,
            why=_(
                "Step n runs all n tokens again, so the total is 1 + 2 + … + {steps} = {total:,}: that is why the "
                "line in “Work piles up” bends upwards."
            ).format(steps=STEPS, total=total),
        ),
        Choice(
            "waste",
            _("Why does each step take longer than the one before?"),
            (
                _("The earlier tokens' numbers change at every step, so they must be computed again"),
                _("The model runs every earlier token again, although their numbers have not changed"),
                _("The model adds a layer for every token it writes"),
            ),
            answer=1,
            why=_(
                "A token only looks at the tokens before it, so its numbers never change: the light-blue squares "
                "of the grid are work the model had already done."
            ),
        ),
    )


def kv_cache() -> tuple[Question, ...]:
    cached = positions_computed_formula(1, STEPS, use_cache=True)
    return (
        Number(
            "cached_work",
            _(
                "Now with the cache on, from a 1-token prompt: how many positions has the model run after {steps} "
                "steps?"
            ).format(steps=STEPS),
            answer=cached,
            why=_(
                "The prompt once, then only the newest token at each step: {cached} in all. The grid shows one "
                "square per step, not a triangle."
            ).format(cached=cached),
        ),
        Choice(
            "same",
            _("Does the model with the cache ever write a different token than the one without?"),
            (
                _("Yes: the cache keeps rounded copies, so its answers drift"),
                _("Yes: old tokens can no longer see the new ones"),
                _("No: it computes the same numbers, only without redoing them"),
            ),
            answer=2,
            why=_("The live check “Same output as without a cache?” compares the two runs at every step."),
        ),
        Choice(
            "price",
            _("What grows instead, and why does that slow a long chat down?"),
            (
                _("The cache, a row per token, and every new token must read all of it from memory"),
                _("The work per step, which grows with the square of the length"),
                _("Nothing: the cache has a fixed size"),
            ),
            answer=0,
            why=_(
                "The cache pictures gain a row for every token, and reading them all back for each new token is "
                "the new bottleneck."
            ),
        ),
    )
