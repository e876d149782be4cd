"""The sentences under the GPT-2 and KV cache pages' pictures, computed from what the pictures show: which positions
the step grid ran, what the cache's heatmaps hold after a step, and the live check that the cached
run chose what a recomputing run chose."""

from __future__ import annotations

from core.figures.recompute_grid import GridCounts
from core.i18n import N_, _, run_on
from core.units import format_small


def grid_caption(counts: GridCounts, prompt_length: int, unit: str, *, cached: bool) -> str:
    """What to look at in the "which positions ran" picture, in words computed from the cells it
    shows: how many positions its steps ran, how many of them again, and the shape that makes.
    After step 1 alone (one row: the prompt, all new) no shape shows yet, so it says which one the
    next steps draw — the triangle without a cache (`cached` False), the diagonal with one."""
    frame = counts.frame
    unit = _(unit)
    legend = _(
        "Each row is one step, each column one {unit} of the text: dark = read for the first time, "
        "light blue = run **again**."
    ).format(unit=unit)
    if frame.filled < frame.first:
        return legend
    if frame.filled == frame.first:
        shown = _("step {first}").format(first=frame.first)
    else:
        shown = _("steps {first}–{last}").format(first=frame.first, last=frame.filled)
    with_prompt = frame.first == 1 and prompt_length > 1
    follows = _(" The picture follows the newest dozen steps.") if frame.first > 1 else ""
    if frame.filled == 1:  # only the prompt's row: no shape yet, say what the next rows add
        if cached:
            said = _(
                "In step 1 the model read the {prompt:,}-{unit} prompt, **all new**, and kept it in the "
                "cache. From step 2 on each row runs only the one new {unit}: Step on and a diagonal grows."
            )
        else:
            said = _(
                "In step 1 the model read the {prompt:,}-{unit} prompt, **all new**. From step 2 on "
                "each row runs all of them **again** plus one new {unit}: Step on and a triangle grows."
            )
    elif counts.recomputed == 0:
        if with_prompt:
            said = _(
                "In {shown} the model ran {total:,} positions, **all new**: the {prompt:,}-{unit} prompt at "
                "step 1, then one {unit} per step. One dark cell per row, a diagonal: nothing is run twice."
            )
        else:
            said = _(
                "In {shown} the model ran {total:,} positions, **all new**: one {unit} per step. One dark cell "
                "per row, a diagonal: nothing is run twice."
            )
    elif with_prompt:
        said = _(
            "In {shown} the model ran {total:,} positions, but only {new:,} were new; the other {again:,} "
            "(light blue) it had already computed at an earlier step. Each row re-runs every {unit} to its "
            "left, one more than the row above, so the cells pile up into a triangle (a trapezoid, since the "
            "prompt fills the first row)."
        )
    else:
        said = _(
            "In {shown} the model ran {total:,} positions, but only {new:,} were new; the other {again:,} "
            "(light blue) it had already computed at an earlier step. Each row re-runs every {unit} to its "
            "left, one more than the row above, so the cells pile up into a triangle."
        )
    words = said.format(
        shown=shown,
        total=counts.total,
        new=counts.new,
        again=counts.recomputed,
        prompt=prompt_length,
        unit=unit,
    )
    return run_on(legend, f"{words}{follows}")


def live_check_words(check, unit: str) -> str:
    """The cached-vs-recomputed check in words: how many steps agree, and by how much the scores differ
    (exactly equal, which the first steps often are, or by float rounding)."""
    unit = _(unit)
    if check.same_tokens != check.steps:
        agree = _(
            "Live check: the cached run and a run that recomputes everything chose the same {unit} at only "
            "{same} of {steps} steps so far;"
        )
    elif check.steps == 1:
        agree = _(
            "Live check: the cached run and a run that recomputes everything chose the same {unit} at the first "
            "step;"
        )
    else:
        agree = _(
            "Live check: the cached run and a run that recomputes everything chose the same {unit} at all "
            "{steps} steps so far;"
        )
    if check.max_logit_difference == 0:
        scores = _("their scores for every possible next {unit} are exactly equal.")
    else:
        scores = _(
            "their scores for every possible next {unit} differ by at most {difference} (float rounding: a "
            "computer keeps only the leading digits of each number, so the same sums added in another order can "
            "end in another digit)."
        )
    said = dict(unit=unit, same=check.same_tokens, steps=check.steps)
    scores = scores.format(difference=format_small(check.max_logit_difference), unit=unit)
    return run_on(agree.format(**said), scores)


HEATMAP_COLUMNS = N_(
    "Columns are the head's *channels*: each column is one of the numbers in its key (left) or value (right) vector."
)  # the engineers' note under the heatmaps


def heatmap_caption(rows: int, prompt_length: int, t: int, live, ids: list[int]) -> str:
    """What to look at in the key/value heatmaps after step t: which rows the prompt wrote, the one
    row each later step appended (outlined), and why old rows keep their colour (what the columns
    are is `HEATMAP_COLUMNS`, the engineers' note)."""
    unit = live.unit_word
    if rows == 0:
        return _(HEATMAP_COLUMNS)
    newest = _("row {row}, {label}").format(
        row=rows - 1, label=f"`{live.tokenizer.label(ids[rows - 1]).replace('`', 'ˋ')}`"
    )
    if t <= 1:
        grew = _(
            "the {n:,} rows of the prompt, all written at step 1; the last ({newest}) is outlined."
        ).format(n=prompt_length, newest=newest)
    else:
        grew = _(
            "rows 0–{last} hold the prompt, written at step 1, and each of the {since} steps since "
            "appended **one row** at the bottom, for the {unit} it read: the newest, {newest}, is outlined."
        ).format(last=prompt_length - 1, since=t - 1, unit=unit, newest=newest)
    return _(
        "**Look at the bottom edge.** After step {t} the cache holds {rows} rows: {grew} Red is positive, "
        "blue negative, on one colour range for the whole run, so an old row keeps its colour as you step: "
        "it is never rewritten, only read."
    ).format(t=t, rows=rows, grew=grew)
