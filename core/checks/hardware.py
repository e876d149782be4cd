"""Checks of the lessons on real hardware and the wrap-up: Your GPU, the Planner, What changed."""

from __future__ import annotations

import functools
from dataclasses import replace

from core import roofline
from core.checks.questions import Choice, Number, Question
from core.i18n import _, number
from core.plan import CARDS, Plan, PlanInputs, parse, plan
from core.plan.config import SHIPPED_CONFIGS
from core.specs import SPECS
from core.units import format_bytes, format_context

GB = roofline.GB  # decimal gigabytes: bandwidths are quoted in GB per second
PLANNED = "llama3_1_8b"  # the planner's first model (its page opens on it)
SHORTER = 32_768  # a quarter of the planner's default conversation
WIDE = "llama3_8b"  # What changed's first width


def _per_second(tokens_per_s: float) -> float:
    """A fair margin for a division the reader does by hand from rounded numbers: 3%."""
    return max(1.0, 0.03 * tokens_per_s)


def your_gpu() -> tuple[Question, ...]:
    spec, card = SPECS[WIDE], roofline.CARDS["h200"]
    read = roofline.active_weight_bytes(spec)
    best = roofline.bandwidth_bound_tokens_per_s(read, card.bandwidth_bytes_per_s)
    return (
        Choice(
            "wall",
            _("One conversation at a time (batch 1): what usually sets how fast a card writes tokens?"),
            (
                _("How many multiplications per second it can do"),
                _("How fast its memory delivers the bytes each token must read"),
                _("How much memory it has"),
            ),
            answer=1,
            why=_(
                "The roofline beside each measurement is exactly that: the fastest a model goes if all it does is read its bytes."
            ),
        ),
        Number(
            "roofline",
            _(
                "{model} reads {read} GB of weights per token, and the memory of an {card} delivers {bandwidth} GB "
                "per second. At best, about how many tokens per second?"
            ).format(
                model=spec.name,
                read=number(read / GB, 1),
                card=card.name,
                bandwidth=number(card.bandwidth_bytes_per_s / GB),
            ),
            answer=round(best),
            tolerance=_per_second(best),
            why=_(
                "One token per full read: {bandwidth} ÷ {read} ≈ {best} tokens per second, the roofline's height."
            ).format(
                bandwidth=number(card.bandwidth_bytes_per_s / GB),
                read=number(read / GB, 1),
                best=number(best),
            ),
        ),
        Choice(
            "deeper",
            _("As the text in memory grows to 128K tokens, which model slows down?"),
            (
                _("The fixed state: its board fills up"),
                _("Both the same: speed depends only on the weights"),
                _("Full attention: every token reads its whole growing cache"),
            ),
            answer=2,
            why=_(
                "Chart 1, speed as the text in memory grows: the blue full-attention line falls, the teal one stays flat."
            ),
        ),
    )


@functools.cache
def planned() -> tuple[Plan, Plan]:
    """The planner's first plan (its page's defaults) and the same at a quarter of the context."""
    model = parse((SHIPPED_CONFIGS / f"{PLANNED}.json").read_text(encoding="utf-8"))
    return plan(model, PlanInputs()), plan(model, replace(PlanInputs(), context=SHORTER))


def planner() -> tuple[Question, ...]:
    long, short = planned()
    bandwidth = CARDS[long.inputs.card].bandwidth_bytes_per_s
    weights, cache = long.step_reads.weights_read, long.step_reads.cache
    best = short.decode_tokens_per_s
    return (
        Number(
            "shorter",
            _(
                "{model} on one {card} at {context} tokens: each step reads {weights} GB of weights and {cache} GB "
                "of cache, and the card delivers {bandwidth} GB per second. At {shorter} tokens, a quarter of the "
                "cache, about how many tokens per second at best?"
            ).format(
                model=long.model_name,
                card=long.card_name,
                context=format_context(long.inputs.context),
                weights=number(weights / GB, 1),
                cache=number(cache / GB, 1),
                bandwidth=number(bandwidth / GB),
                shorter=format_context(SHORTER),
            ),
            answer=round(best),
            tolerance=_per_second(best),
            why=_(
                "A step then reads {weights} + {cache} = {read} GB, and {bandwidth} ÷ {read} ≈ {best}: the blue "
                "line of “decode ceiling vs context” at {shorter}."
            ).format(
                weights=number(short.step_reads.weights_read / GB, 1),
                cache=number(short.step_reads.cache / GB, 1),
                read=number(short.read_per_step / GB, 1),
                bandwidth=number(bandwidth / GB),
                best=number(best),
                shorter=format_context(SHORTER),
            ),
        ),
        Choice(
            "falls",
            _("Why does the decode ceiling fall as the conversation grows?"),
            (
                _("Every step reads the whole cache, and the cache grows with the conversation"),
                _("The weights grow with the conversation"),
                _("A longer conversation needs more arithmetic per weight"),
            ),
            answer=0,
            why=_(
                "In the memory bar the blue cache grows with the conversation, and the blue line of the ceiling falls with it."
            ),
        ),
        Choice(
            "batch",
            _(
                "Eight conversations share one card (batch 8). How often does a decoding step read the weights?"
            ),
            (
                _("Eight times, once per conversation"),
                _("Once, for the whole batch"),
                _("Never: the weights stay inside the card's cores"),
            ),
            answer=1,
            why=_(
                "The planner's sentence in one line: each step reads the weights once for the whole batch; each conversation adds its own cache."
            ),
        ),
    )


def what_changed() -> tuple[Question, ...]:
    width = roofline.Width.of(SPECS[WIDE])
    board_128k = roofline.mechanism_memory_bytes("kda", 131_072, width)
    board_1m = roofline.mechanism_memory_bytes("kda", 1_048_576, width)
    return (
        Number(
            "board",
            _(
                "At {model}'s width every board stage holds {board} at 128K tokens. How many MiB does one hold at "
                "1M tokens?"
            ).format(model=width.name, board=format_bytes(board_128k)),
            answer=round(board_1m / 2**20, 1),
            tolerance=0.05,
            step=0.1,
            why=_(
                "Still {board}: a board is one matrix per head in every layer, whatever the length, so its deep-pink "
                "line in “Memory kept as the text grows” is flat."
            ).format(board=format_bytes(board_1m)),
        ),
        Choice(
            "rewrite",
            _("Why did DeltaNet learn to rewrite?"),
            (
                _("Adding made the board grow with every token"),
                _("Adding could not be done in parallel"),
                _("Adding blends a key that is written again with what it held before"),
            ),
            answer=2,
            why=_(
                "The problem box reads the four board stages as one sentence: adding blends, so DeltaNet rewrites."
            ),
        ),
        Choice(
            "per_channel",
            _("Why did KDA give each key channel its own fade rate?"),
            (
                _("One rate for the whole board throws away the useful with the stale"),
                _("One rate could not be learned"),
                _("The rows of a board hold numbers of different sizes"),
            ),
            answer=0,
            why=_(
                "The same sentence, one stage on: one fade for the whole board clears a fact worth keeping with a finished topic."
            ),
        ),
    )
