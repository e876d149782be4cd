"""Checks of the lessons that teach the board to rewrite and to forget: DeltaNet, Chunks, Forgetting."""

from __future__ import annotations

import functools
import math

import torch

from core import board as bd
from core.checks.questions import Choice, Number, Question
from core.i18n import _, number
from core.ops import forms, gated_delta_rule

REWRITE_PAIRS, REWRITE_ROWS, HALF = 6, 8, 0.5  # DeltaNet's section 1: six pairs, then apple again
CHUNK_TOKENS, CHUNK_SIZE = 64, 16
FADE, FADED_TOKENS = 0.5, 3


@functools.cache
def rewritten_shares(beta: float) -> tuple[str, str, float, float]:
    """DeltaNet's section 1 at write strength `beta` (the run the page draws): apple's first value, its new
    one, and how much of the first comes back when apple is read just before the rewrite and after it."""
    run = bd.write_stream(
        bd.rewrite_stream(REWRITE_PAIRS), "delta", d=REWRITE_ROWS, keys="orthogonal", beta=beta
    )
    first, new = run.pairs[0][1], run.pairs[-1][1]
    before = run.value_share("apple", first, run.T - 1)
    return first, new, round(before, 2), round(run.value_share("apple", first), 2)


def deltanet() -> tuple[Question, ...]:
    first, new, before, left = rewritten_shares(HALF)
    return (
        Number(
            "half",
            _(
                "Set the write strength β to {beta}. After apple → {first} and later apple → {new}, how much "
                "{first} comes back when you read apple? (two decimals)"
            ).format(beta=number(HALF, 1), first=first, new=new),
            answer=left,
            tolerance=0.005,
            step=0.01,
            why=_(
                "At β = {beta} the first write stores only {before} of {first}; the rewrite erases {beta} of what "
                "apple returns and writes {beta} of {new}, so {left} of {first} stays. The sentence under “The "
                "rewritten key” follows the β slider."
            ).format(
                beta=number(HALF, 1), before=number(before, 2), first=first, new=new, left=number(left, 2)
            ),
        ),
        Choice(
            "limit",
            _("Does erase-then-write let a board of d rows hold more than d unrelated pairs?"),
            (
                _("Yes: erasing frees room, so about twice as many fit"),
                _("No: it fixes a key written again, not the d-row limit"),
                _("Yes, as long as β = 1"),
            ),
            answer=1,
            why=_(
                "In section 2's recall curves neither rule gets past n = d: d rows cannot keep more pairs apart."
            ),
        ),
        Choice(
            "read_first",
            _("Why does DeltaNet read the key before it writes?"),
            (
                _("To erase exactly what the key returns now, so the new value replaces the old one"),
                _("To check whether the board is full"),
                _("To write new keys more strongly than old ones"),
            ),
            answer=0,
            why=_(
                "Old board − erase + write = new board: the erase is what the key returned (section 1's picture)."
            ),
        ),
    )


def chunks() -> tuple[Question, ...]:
    steps, waits = forms.waits_in_line(CHUNK_TOKENS, CHUNK_SIZE)
    return (
        Number(
            "waits",
            _(
                "{T} tokens, cut into chunks of {C}. How many waits in line (hand-overs of the board) are left?"
            ).format(T=CHUNK_TOKENS, C=CHUNK_SIZE),
            answer=waits,
            why=_(
                "One hand-over per chunk: {T} ÷ {C} = {waits}, the red lines of the timeline's bottom row, against "
                "{steps} one token at a time."
            ).format(T=CHUNK_TOKENS, C=CHUNK_SIZE, waits=waits, steps=steps),
        ),
        Choice(
            "same",
            _("Does the chunk size change what the model outputs?"),
            (
                _("Yes: bigger chunks give a blurrier board"),
                _("No: both forms compute the same board, up to float rounding"),
                _("Yes: smaller chunks are more exact"),
            ),
            answer=1,
            why=_("Section 2 runs both forms on the same inputs: what differs is float rounding."),
        ),
        Choice(
            "reply",
            _("Why do chunks speed up training, but not the writing of a reply?"),
            (
                _("A reply is written one token at a time, so no chunk of known tokens is there to work on"),
                _("A reply uses a different rule than training"),
                _("Chunks only run on the card the model was trained on"),
            ),
            answer=0,
            why=_(
                "The timeline's bottom row works on a whole chunk at once, which needs all of its tokens known: the "
                "text in training, or your prompt."
            ),
        ),
    )


@functools.cache
def faded_share(alpha: float, tokens: int) -> float:
    """What is left of an entry after `tokens` tokens of Gated DeltaNet that fade by `alpha` and write
    nothing (β = 0): the rule's own recurrence, on a one-number board."""
    shape = (1, tokens, 1)
    zeros = torch.zeros(*shape, 1, dtype=torch.float64)
    _out, board = gated_delta_rule.recurrent(
        zeros,
        zeros,
        zeros,
        beta=torch.zeros(shape, dtype=torch.float64),
        g=torch.full(shape, math.log(alpha), dtype=torch.float64),
        scale=1.0,
        initial_state=torch.ones(1, 1, 1, 1, dtype=torch.float64),
    )
    return round(float(board.squeeze()), 3)


def forgetting() -> tuple[Question, ...]:
    left = faded_share(FADE, FADED_TOKENS)
    return (
        Number(
            "fade",
            _(
                "Gated DeltaNet fades the board by α = {alpha} at every token. After {n} tokens that write "
                "nothing new, what share of an entry is left? (three decimals)"
            ).format(alpha=number(FADE, 1), n=FADED_TOKENS),
            answer=left,
            tolerance=0.0005,
            step=0.001,
            why=_(
                "Each token multiplies the board by α: {n} fades of {alpha} leave {left}. The bars of “fade rate "
                "per key channel” say how much each row keeps per token."
            ).format(n=FADED_TOKENS, alpha=number(FADE, 1), left=number(left, 3)),
        ),
        Choice(
            "name",
            _(
                "Gated DeltaNet with α = 0.1 at the topic switch: does the name, the fact worth keeping, survive?"
            ),
            (
                _("Yes: the gate fades only the rows of topic A"),
                _("Yes: a fade never touches what was written before the switch"),
                _("No: one rate fades every row, the name's rows too"),
            ),
            answer=2,
            why=_(
                "Gated DeltaNet's bars in “fade rate per key channel” are all alike, so the name fades with the "
                "topic."
            ),
        ),
        Choice(
            "per_channel",
            _("What can KDA do that Gated DeltaNet cannot?"),
            (
                _("Keep some rows (key channels) while it clears others"),
                _("Write two values under one key"),
                _("Grow the board when the topic changes"),
            ),
            answer=0,
            why=_(
                "KDA's bars differ from row to row: the name's channels stay near 1 while the topics' fade."
            ),
        ),
    )
