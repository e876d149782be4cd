"""What a batch sweep (core.gpu.suites.batch_bench) says, in one sentence computed from its numbers.

The page shows it under the batch chart: at the largest batch the fixed state ran, how many tokens
per second it wrote in total and how many times full attention's that is (at the largest batch both
ran, when full attention no longer fit), and how many sequences of each fit the free memory at the
sweep's depth. For the released pair (Qwen3-8B's shapes against Qwen3.5-9B's) the same sentence names the
dense model and the hybrid, and sets the planner's largest batch for the same shapes beside each. Every
number comes from the `BatchResult`; none is typed.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.gpu.output.device_name import shown_device
from core.gpu.suites.batch_bench import BatchPoint, BatchResult, BatchSeries
from core.i18n import _, ngettext
from core.units import format_bytes, format_context


def ran(series: BatchSeries) -> dict[int, BatchPoint]:
    """The batches of a series that were timed, by batch."""
    return {p.batch: p for p in series.points if p.fits and p.tokens_per_s_total is not None}


@dataclass(frozen=True)
class BatchSummary:
    """The numbers of the sentence, each read from the sweep."""

    depth: int
    device: str
    state_batch: int  # the largest batch the fixed state ran
    state_total: float  # its tokens/s in total there
    compared_batch: int | None  # the largest batch both ran (None: none)
    state_total_compared: float | None
    attention_total_compared: float | None
    attention_max_batch: int
    state_max_batch: int
    attention_sequence_bytes: int
    state_sequence_bytes: int
    pair: str = "synthetic"
    attention_planner: int | None = None  # the planner's largest batch for the same shapes (released pair)
    state_planner: int | None = None

    @property
    def ratio(self) -> float | None:
        """Fixed state ÷ full attention, tokens/s in total at `compared_batch`."""
        if not self.attention_total_compared or self.state_total_compared is None:
            return None
        return self.state_total_compared / self.attention_total_compared

    def sentence(self) -> str:
        if self.pair == "released":
            return self._released_sentence()
        head = self._head(
            _(
                "At batch {batch} the fixed state wrote {total} tokens/s in total, {times} full attention's "
                "{attention}."
            ),
            _(
                "At batch {batch} the fixed state wrote {total} tokens/s in total; full attention did not run "
                "there. At batch {compared}, the largest both ran, the fixed state wrote {compared_total} tokens/s "
                "in total, {times} full attention's {attention}."
            ),
            _(
                "At batch {batch} the fixed state wrote {total} tokens/s in total; full attention ran at none of "
                "these batches."
            ),
        )
        n = self.attention_max_batch
        room = self._room()
        if n == 0:
            fits = _(
                "Beside the weights, in the memory free on {device}, full attention fits not even one sequence at "
                "depth {depth} ({cache} of cache each); the fixed state fits {state_fits} ({state} of state each)."
            )
        else:
            fits = ngettext(
                "Beside the weights, in the memory free on {device}, full attention fits at most {n} sequence at "
                "depth {depth} ({cache} of cache each); the fixed state fits {state_fits} ({state} of state each).",
                "Beside the weights, in the memory free on {device}, full attention fits at most {n} sequences at "
                "depth {depth} ({cache} of cache each); the fixed state fits {state_fits} ({state} of state each).",
                n,
            )
        return f"{head} {fits.format(**room)}"

    def _head(self, same: str, largest_both: str, none: str) -> str:
        """The first sentence, in the words given (translated) for where the two were compared: at the largest
        batch the fixed state ran (`same`), at the largest both ran (`largest_both`), or at none (`none`)."""
        if self.compared_batch == self.state_batch and self.ratio is not None:
            words = same
        elif self.compared_batch is not None and self.ratio is not None:
            words = largest_both
        else:
            words = none
        return words.format(**self._numbers())

    def _numbers(self) -> dict[str, object]:
        return dict(
            batch=self.state_batch,
            total=rate(self.state_total),
            compared=self.compared_batch,
            compared_total=rate(self.state_total_compared),
            times=times(self.ratio) if self.ratio is not None else "",
            attention=rate(self.attention_total_compared),
        )

    def _room(self) -> dict[str, str]:
        return dict(
            device=shown_device(self.device),
            n=f"{self.attention_max_batch:,}",
            depth=format_context(self.depth),
            cache=format_bytes(self.attention_sequence_bytes),
            state_fits=f"{self.state_max_batch:,}",
            state=format_bytes(self.state_sequence_bytes),
            attention_planner="—" if self.attention_planner is None else f"{self.attention_planner:,}",
            state_planner="—" if self.state_planner is None else f"{self.state_planner:,}",
        )

    def _released_sentence(self) -> str:
        """The released pair's sentence: the hybrid against the dense model, and the planner beside each."""
        head = self._head(
            _(
                "At batch {batch} the hybrid (Qwen3.5-9B's shapes) wrote {total} tokens/s in total, {times} the "
                "dense model's (Qwen3-8B's shapes) {attention}."
            ),
            _(
                "At batch {batch} the hybrid (Qwen3.5-9B's shapes) wrote {total} tokens/s in total; the dense model "
                "(Qwen3-8B's shapes) did not run there. At batch {compared}, the largest both ran, the hybrid wrote "
                "{compared_total} tokens/s in total, {times} the dense model's {attention}."
            ),
            _(
                "At batch {batch} the hybrid (Qwen3.5-9B's shapes) wrote {total} tokens/s in total; the dense model "
                "(Qwen3-8B's shapes) ran at none of these batches."
            ),
        )
        fits = ngettext(
            "Beside the weights, in the memory free on {device}, the dense model fits {n} sequence at depth {depth} "
            "({cache} each) and the hybrid {state_fits} ({state} each); the planner, asked about the same shapes "
            "and memory, says {attention_planner} and {state_planner}.",
            "Beside the weights, in the memory free on {device}, the dense model fits {n} sequences at depth "
            "{depth} ({cache} each) and the hybrid {state_fits} ({state} each); the planner, asked about the same "
            "shapes and memory, says {attention_planner} and {state_planner}.",
            self.attention_max_batch,
        )
        return f"{head} {fits.format(**self._room())}"


def summarise(result: BatchResult) -> BatchSummary | None:
    """The sentence's numbers, or None when the sweep lacks a kind or the fixed state timed no batch."""
    by_kind = {s.kind: s for s in result.series}
    attention, state = by_kind.get("attention"), by_kind.get("state")
    if attention is None or state is None or not ran(state):
        return None
    state_ran, attention_ran = ran(state), ran(attention)
    top = max(state_ran)
    both = [b for b in state_ran if b in attention_ran]
    compared = max(both) if both else None
    return BatchSummary(
        depth=result.depth,
        device=result.device,
        state_batch=top,
        state_total=state_ran[top].tokens_per_s_total,
        compared_batch=compared,
        state_total_compared=None if compared is None else state_ran[compared].tokens_per_s_total,
        attention_total_compared=None if compared is None else attention_ran[compared].tokens_per_s_total,
        attention_max_batch=attention.max_batch,
        state_max_batch=state.max_batch,
        attention_sequence_bytes=attention.per_sequence_bytes,
        state_sequence_bytes=state.per_sequence_bytes,
        pair=result.pair,
        attention_planner=attention.planner_max_batch,
        state_planner=state.planner_max_batch,
    )


def batch_sentence(result: BatchResult) -> str | None:
    summary = summarise(result)
    return None if summary is None else summary.sentence()


def rate(tokens_per_s: float | None) -> str:
    """12,345 tokens/s as '12,345'; below 100 with one decimal ('42.5')."""
    if tokens_per_s is None:
        return "—"
    return f"{tokens_per_s:,.0f}" if tokens_per_s >= 100 else f"{tokens_per_s:,.1f}"


def times(ratio: float) -> str:
    """'3.2×'; '12×' from ten up (Japanese: '3.2倍', '12倍')."""
    return _("{ratio:.0f}×").format(ratio=ratio) if ratio >= 10 else _("{ratio:.1f}×").format(ratio=ratio)
