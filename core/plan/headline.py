"""The plan in words: the one sentence a beginner reads, and the notes every printed context and speed carry.

Two honesty rules live here so the page, the CLI, the CSV and the figures say them the same way:
- a context is never printed without the length the model was trained for beside it (the config's
  max_position_embeddings), because memory can hold far more tokens than a model can use well;
- a decode speed says which ceiling sets it (`speed_note`): the bandwidth (bytes ÷ bandwidth), the
  card's arithmetic, or the latency floor (core/plan/latency.py: kernels one after another and, past one
  GPU, Megatron-LM's two all-reduces per layer — Shoeybi et al. 2019, section 3: after the attention and
  after the feed-forward part the GPUs add up their partial results). The all-reduces are counted as
  latency in decode; prefill's speed still leaves them out (`ALL_REDUCE_SHORT`).
"""

from __future__ import annotations

from dataclasses import replace

from core.i18n import N_, _, pgettext, run_on
from core.plan.config import PlannedModel
from core.plan.decode import StepReads
from core.plan.inputs import PlanInputs
from core.plan.plan import Plan, plan
from core.units import format_bytes

# marked, not translated, here (module constants): `_()` them where they are shown
ALL_REDUCE_SHORT = N_("all-reduces between GPUs left out")  # prefill: its all-reduces are not timed
ALL_REDUCE_COUNTED = N_("two all-reduces per layer between the GPUs counted")  # decode: in the latency floor


def window_words(tokens: int, trained: int | None) -> str:
    """What `tokens` of context is beside the trained window, short enough for a label."""
    if not trained:
        return _("trained window unknown")
    if tokens > trained:
        return _("past the {trained:,} the model was trained for").format(trained=trained)
    return _("trained for {trained:,}").format(trained=trained)


def trained_words(trained: int | None) -> str:
    """The trained window on its own line: its size, or that the config does not give it."""
    if not trained:
        return _("unknown: the config gives no max_position_embeddings")
    return _("{trained:,} tokens (the config's max_position_embeddings)").format(trained=trained)


def longest_words(p: Plan) -> str:
    """The longest context memory holds at the plan's batch, with the trained window beside it."""
    trained = p.trained_context
    if not p.weights_fit:
        return _("weights alone do not fit")
    if p.max_context is None:
        if trained:
            return _("no memory limit, but the model was trained for {trained:,}").format(trained=trained)
        return _("no memory limit (trained window unknown)")
    if trained and p.max_context > trained:
        return _("memory allows {n:,} tokens, but the model was trained for {trained:,}").format(
            n=p.max_context, trained=trained
        )
    return _("{n:,} tokens ({window})").format(n=p.max_context, window=window_words(p.max_context, trained))


def speed_note(p: Plan) -> str:
    """Which ceiling sets the decode speed, in plain words (`Plan.decode_bound`); past one GPU it names the
    all-reduces the latency floor counts, so every tensor-parallel speed says what it includes."""
    floor, gpus = p.floor, p.inputs.gpus
    if p.decode_bound == "latency" and floor is not None:
        if gpus > 1:
            return _(
                "set by latency, not memory: {kernels:,} small programs the cards run one after another and "
                "{reduces:,} all-reduces, the times per token the GPUs add up their partial results"
            ).format(kernels=floor.kernels, reduces=floor.all_reduces)
        return _(
            "set by latency, not memory: {kernels:,} small programs the card runs one after another"
        ).format(kernels=floor.kernels)
    words = (
        _("set by how fast the card computes")
        if p.decode_bound == "compute"
        else _("set by how fast memory is read")
    )
    if gpus > 1 and floor is not None:
        words += _(" (the {reduces:,} all-reduces between the GPUs take less time)").format(
            reduces=floor.all_reduces
        )
    return words


def quoted_context(p: Plan) -> int | None:
    """The context the sentence quotes a speed at: the asked one when it fits, else the longest that
    fits, no longer than the trained window; None when not even an empty context fits."""
    if p.fits:
        return p.inputs.context
    if not p.weights_fit or not p.max_context:
        return None
    longest = p.max_context
    return min(longest, p.trained_context) if p.trained_context else longest


def quoted_plan(model: PlannedModel, p: Plan) -> Plan:
    """The plan at the context the sentence quotes (`quoted_context`): the page's first picture shows
    this one, so the bar and the sentence speak of the same conversation; `p` itself when nothing fits."""
    context = quoted_context(p)
    if context is None or context == p.inputs.context:
        return p
    return plan(model, replace(p.inputs, context=context))


def _fit_clause(p: Plan) -> str:
    b, trained = p.inputs.batch, p.trained_context
    each = "" if b == 1 else _(" for each of {b:,} conversations").format(b=b)
    if not p.weights_fit:
        need = (
            _("no even split of its heads over these cards holds it")
            if p.gpus_needed is None
            else _("{n:,} of these cards together would hold it").format(n=p.gpus_needed)
        )
        return _("the weights alone ({weights}) do not fit in {usable} of usable memory; {need}").format(
            weights=format_bytes(p.weights), usable=format_bytes(p.usable), need=need
        )
    if p.max_context == 0:
        return _("the weights fit, but no room is left for even an empty conversation")
    if p.max_context is None:
        limit = (
            _("the model was trained for {trained:,}").format(trained=trained)
            if trained
            else _("its trained window is unknown")
        )
        return _(
            "memory sets no limit on the context{each} (its memory per conversation stops growing), but {limit}"
        ).format(each=each, limit=limit)
    if trained and p.max_context > trained:
        return _(
            "memory allows {n:,} tokens of context{each}, but the model was trained for {trained:,}"
        ).format(n=p.max_context, each=each, trained=trained)
    return _("fits with up to {n:,} tokens of context{each} ({window})").format(
        n=p.max_context, each=each, window=window_words(p.max_context, trained)
    )


def _speed_clause(model: PlannedModel, p: Plan) -> str | None:
    context = quoted_context(p)
    if context is None:
        return None
    speed = quoted_plan(model, p).per_sequence_tokens_per_s
    if speed is None:
        return None
    b = p.inputs.batch
    who = _("one conversation") if b == 1 else _("each of {b:,} conversations").format(b=b)
    if context != p.inputs.context:
        where = _("at {n:,} tokens (the longest that fits)").format(n=context)
    elif p.trained_context and context > p.trained_context:
        where = _("at {n:,} tokens ({window})").format(
            n=context, window=window_words(context, p.trained_context)
        )
    else:
        where = _("at {n:,} tokens").format(n=context)
    note = speed_note(quoted_plan(model, p))
    words = _("{where}, at best about {speed:,.0f} tokens/s for {who}").format(
        where=where, speed=speed, who=who
    )
    return words + (_(", {note}").format(note=note) if note else "")


def headline(model: PlannedModel, inputs: PlanInputs) -> str:
    """The plan in one sentence: what fits (beside the trained window) and how fast one conversation goes.

    "Llama-3.1-8B on 1 × RTX 4090 24GB: fits with up to 44,175 tokens of context (trained for 131,072);
    at 44,175 tokens (the longest that fits), at best about 64 tokens/s for one conversation."
    """
    p = plan(model, inputs)
    speed = _speed_clause(model, p)
    words = _("{model} on {gpus} × {card}: {fit}").format(
        model=p.model_name, gpus=p.inputs.gpus, card=p.card_name, fit=_fit_clause(p)
    )
    return words + (_("; {speed}.").format(speed=speed) if speed else _("."))


# -- what one decode step reads, and why less than memory holds (`core.plan.decode.StepReads`) ----------


def sentences(items: list[str]) -> str:
    """Sentences run together: a space between them in English, nothing in Japanese."""
    return run_on(*items)


def _listed(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c" in the reader's language."""
    if len(items) < 2:
        return "".join(items)
    head = pgettext("between the items of a list", ", ").join(items[:-1])
    return pgettext("before the last item of a list", "{items} and {last}").format(items=head, last=items[-1])


def _skipped(reads: StepReads) -> list[str]:
    """The stored weights a step leaves unread, each with its size."""
    out = []
    if reads.table:
        out.append(_("the input table ({size})").format(size=format_bytes(reads.table)))
    if reads.positions:
        out.append(_("the table of positions ({size})").format(size=format_bytes(reads.positions)))
    if reads.idle_experts:
        out.append(_("the experts no token picked ({size})").format(size=format_bytes(reads.idle_experts)))
    return out


def reads_words(model: PlannedModel, p: Plan) -> str:
    """What one decode step reads, part by part, and why that is less weight than memory holds; the
    numbers are `p.step_reads` (they add up to `p.read_per_step`)."""
    reads, b = p.step_reads, p.inputs.batch
    parts = [_("{size} of the weights it uses").format(size=format_bytes(reads.weights_read))]
    if reads.cache:
        parts.append(_("{size} of cache").format(size=format_bytes(reads.cache)))
    if reads.state:
        parts.append(
            _("{size} of fixed state (read, then written back)").format(size=format_bytes(reads.state_moved))
        )
    if b == 1:
        words = _("Each step writes one token and reads {read} from memory: {parts}.")
    else:
        words = _(
            "Each step writes one token for each of {b:,} conversations and reads {read} from memory, once for "
            "all of them: {parts}."
        )
    out = [words.format(b=b, read=format_bytes(reads.total), parts=_listed(parts))]
    if skipped := _skipped(reads):
        out.append(
            _(
                "That is less than the {weights} the weights take in memory, because a step skips {skipped}."
            ).format(weights=format_bytes(reads.weights), skipped=_listed(skipped))
        )
    if reads.table:
        out.append(
            _(
                "The input table holds a row of numbers for each of the {rows:,} word pieces the model knows; a "
                "step looks up only the row of the token it just wrote."
            ).format(rows=model.spec.vocab)
        )
    if reads.positions:
        out.append(
            _(
                "The table of positions holds a row for each of the {rows:,} places a token can sit at; a step "
                "looks up only the row of the place it writes at."
            ).format(rows=model.spec.context)
        )
    return sentences(out)
