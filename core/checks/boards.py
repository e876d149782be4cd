"""Checks of the lessons that build the fixed-size board: the primer, linear attention, collisions."""

from __future__ import annotations

import functools

import numpy as np

from core import board as bd
from core.board import vectors
from core.checks.questions import Choice, Number, Question
from core.i18n import _, number
from core.specs import SPECS

A, B = (2.0, 1.0), (1.0, 3.0)  # two small arrows whose dot product a reader works out by hand
COLLISION_ROWS = 8  # the Collisions lesson's board (its d slider starts here)


def primer() -> tuple[Question, ...]:
    pairs = vectors.primer_pairs()  # the primer's own pairs: apple → red, sky → blue, …
    first, second = pairs.key_names[:2]
    blue = pairs.value_names[1]
    leak = round(vectors.dot(pairs.key(first), pairs.key(second)), 2)
    dot = vectors.dot(np.array(A), np.array(B))
    return (
        Number(
            "dot",
            _("a = ({a1}, {a2}) and b = ({b1}, {b2}). What is their dot product a · b?").format(
                a1=number(A[0]), a2=number(A[1]), b1=number(B[0]), b2=number(B[1])
            ),
            answer=dot,
            why=_(
                "Multiply place by place and add: {a1}×{b1} + {a2}×{b2} = {dot}, as section 2 spells it out under "
                "its two arrows."
            ).format(a1=number(A[0]), a2=number(A[1]), b1=number(B[0]), b2=number(B[1]), dot=number(dot)),
        ),
        Number(
            "leak",
            _(
                "The board of section 4 holds {first} → {red} and {second} → {blue}. Read it with {first}'s key: "
                "how much comes back in {blue}'s column? (two decimals)"
            ).format(first=first, second=second, red=pairs.value_names[0], blue=blue),
            answer=leak,
            tolerance=0.005,
            step=0.01,
            why=_(
                "Reading {first} returns {leak} in {blue}'s column: {first} · {second} = {leak}, because the two "
                "keys point partly the same way (section 4's read-back chart)."
            ).format(first=first, second=second, blue=blue, leak=number(leak, 2)),
        ),
        Choice(
            "orthogonal",
            _("Why do the board lessons like keys at right angles to each other?"),
            (
                _("Keys at right angles take less memory"),
                _("Their dot product is 0, so reading one key brings back none of the other's value"),
                _("They keep the board's numbers small"),
            ),
            answer=1,
            why=_(
                "At 90° the dot product is 0 (section 2's arrows), and a read leaks each written value by its "
                "key's dot product with the one you read (section 4)."
            ),
        ),
    )


def linear_attention() -> tuple[Question, ...]:
    head = SPECS["kimi_k3"].linear  # one real head: the lesson's "Memory stays flat" chart
    d_k, d_v = head.head_k_dim, head.head_v_dim
    cross = bd.break_even_tokens(d_k, d_v)
    return (
        Choice(
            "flat",
            _("You write 10 times as many tokens. How much bigger does the board get?"),
            (_("10 times bigger"), _("100 times bigger"), _("Not at all: it stays d_k × d_v numbers")),
            answer=2,
            why=_(
                "In “Memory stays flat” the board's line is flat while the cache's climbs with every token."
            ),
        ),
        Number(
            "cross",
            _(
                "One head keeps keys of {d_k} numbers and values of {d_v}. After how many tokens does a cache "
                "hold as many numbers as the board?"
            ).format(d_k=d_k, d_v=d_v),
            answer=cross,
            why=_(
                "The board holds {d_k} × {d_v} numbers and the cache adds {d_k} + {d_v} per token, so it catches up "
                "after {cross} tokens: where the two lines cross in “Memory stays flat”."
            ).format(d_k=d_k, d_v=d_v, cross=cross),
        ),
        Choice(
            "fold",
            _("Why can a board take the place of the cache at all?"),
            (
                _("Without the softmax, (QKᵀ)V = Q(KᵀV): keys and values fold into one small matrix first"),
                _("Old tokens stop mattering after a while, so they can be dropped"),
                _("The board keeps a compressed copy of every token"),
            ),
            answer=0,
            why=_("Section 1 runs both routes on the same numbers: the results match cell by cell."),
        ),
    )


@functools.cache
def orthogonal_capacity(d: int) -> int:
    """The most pairs a d-row board with orthogonal keys reads back all right (the Collisions curve)."""
    ns = list(range(1, 2 * d + 1))
    return bd.last_full_recall(ns, bd.recall_curve("linear", d, ns, keys="orthogonal"))


def collisions() -> tuple[Question, ...]:
    d = COLLISION_ROWS
    full = orthogonal_capacity(d)
    return (
        Number(
            "capacity",
            _(
                "A board with d = {d} rows and keys at right angles: up to how many pairs does it read back all "
                "right?"
            ).format(d=d),
            answer=full,
            why=_(
                "Only {d} keys can be at right angles in {d} numbers: in “Recall against the number of pairs” the "
                "orthogonal line stays at 100% up to n = {full}, then falls."
            ).format(d=d, full=full),
        ),
        Choice(
            "more_rows",
            _("Double d and keep the number of pairs. Does the blur get better or worse?"),
            (
                _("Worse: a bigger board mixes more"),
                _("No change: the blur depends only on the number of pairs"),
                _("Better: with more rows the keys overlap less"),
            ),
            answer=2,
            why=_("Move the d slider in section 1: the right panel sharpens once d is larger than n."),
        ),
        Choice(
            "cleverer",
            _("Could a cleverer way of writing fit more than d unrelated pairs on a d-row board?"),
            (
                _("No: d rows give at most d directions that do not overlap, so more pairs must share them"),
                _("Yes: write the pairs in a better order"),
                _("Yes: scale each pair down before adding it"),
            ),
            answer=0,
            why=_(
                "Trained models meet the same wall: in section 3 the boards fall once the pairs outnumber their rows."
            ),
        ),
    )
