"""What turns a plan's figures into a what-if, in words a reader sees beside the headline."""

from __future__ import annotations

from core.i18n import _, run_on
from core.plan.cards import card
from core.plan.config import PlannedModel
from core.plan.inputs import PlanInputs
from core.plan.parallel import even_splits, split_heads
from core.units import format_context

METAL_SHARE = 0.75  # of unified memory a Mac's GPU may wire by default (about ⅔–¾; see `cautions`)


def cautions(model: PlannedModel, inputs: PlanInputs, needed: int | None = None) -> tuple[str, ...]:
    """What turns the figures into a what-if, in words a reader sees next to them: each caution of
    `caution_parts` whole, its plain words and then its source (the CLI, the CSV and the JSON)."""
    return tuple(run_on(plain, detail or "") for plain, detail in caution_parts(model, inputs, needed))


def caution_parts(
    model: PlannedModel, inputs: PlanInputs, needed: int | None = None
) -> tuple[tuple[str, str | None], ...]:
    """Each caution as (plain words, the engineer's source or None): a context past the trained length; a
    Mac whose usable share is above what Metal wires by default; a GPU count tensor parallelism cannot use
    (`even_splits`: uneven heads, or key/value heads it can neither divide nor repeat) — the counts it
    suggests are even splits that also hold the model, when `needed` (gpus_needed) is known. The plain
    words name no engine, tool or pull request (the planner's Story shows them alone)."""
    spec, gpus, out = model.spec, inputs.gpus, []
    if spec.context and inputs.context > spec.context:
        out.append(
            (
                _(
                    "{model} was trained for at most {trained:,} tokens (its config's context length): at "
                    "{context} these figures say what memory would hold, not that the model would still write sense."
                ).format(model=spec.name, trained=spec.context, context=format_context(inputs.context)),
                None,
            )
        )
    if card(inputs.card).unified and inputs.memory_share > METAL_SHARE:
        out.append(
            (
                _(
                    "macOS lets the graphics chip use only about two-thirds to three-quarters of a Mac's unified "
                    "memory (shared by the processor and the graphics chip) by default: set the usable share to "
                    "{share:g}, or raise the limit with `sudo sysctl iogpu.wired_limit_mb=<MiB>`."
                ).format(share=METAL_SHARE),
                _(
                    "Metal's recommendedMaxWorkingSetSize: 21.8 GB of 32 GB on an M1 Max in llama.cpp PR #2011."
                ),
            )
        )
    splits = even_splits(model)
    if gpus > 1 and gpus not in splits:
        even = [k for k in splits if needed is None or k >= needed] or splits[-1:]
        below = [k for k in even if k < gpus][-1:]
        above = [k for k in even if k > gpus][:1]
        options = _(" or ").join(str(k) for k in below + above)
        uneven = {name: n for name, n in split_heads(model).items() if n % gpus}
        refuses = _("vLLM, a serving engine, refuses such a split.")
        if uneven:
            name, n = next(iter(uneven.items()))
            out.append(
                (
                    _(
                        "{gpus} GPUs cannot split {model}'s {n} {kind} heads evenly, which tensor parallelism "
                        "needs; try {options} GPUs. The figures assume an even split."
                    ).format(gpus=gpus, model=spec.name, n=n, kind=_(name), options=options),
                    refuses,
                )
            )
        else:  # the heads split, but each GPU would hold part of a key/value head
            out.append(
                (
                    _(
                        "{gpus} GPUs cannot share {model}'s {kv} key/value heads: tensor parallelism needs a GPU "
                        "count that divides them or is a multiple of them; try {options} GPUs. The figures assume "
                        "an even split."
                    ).format(gpus=gpus, model=spec.name, kv=spec.attention.kv_heads, options=options),
                    refuses,
                )
            )
    return tuple(out)
