"""The roofline worked by hand with the reader's own measurement: bandwidth ÷ bytes per token = the
fastest tokens/s a step can reach, beside the tokens/s this machine really wrote.

It picks the deepest measured full-attention point that read nothing over a host link (so the
division is the whole story) and uses the memory speed the benchmark's roofline used for it, with the
spread of the copies that speed is the median of. `overhead` then splits the time a step takes over its
ceiling: the empty-cache step (depth 0) bounds the fixed work every step does; the rest grows with the cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.gpu.output.device_name import shown_device
from core.gpu.output.report import percent
from core.gpu.suites.context_bench import ContextResult, DepthPoint
from core.gpu.timing.spread import Spread
from core.i18n import _, run_on
from core.units import format_bytes

MB = 1e6  # decimal megabytes: a reader divides MB/s by MB by hand


@dataclass(frozen=True)
class WorkedExample:
    """One measured depth with the numbers of the division."""

    model: str
    device: str
    depth: int
    bandwidth_bytes_per_s: float  # the memory speed the roofline used for this step's bytes
    from_cache: bool  # that speed is the CPU cache's, not main memory's (the step's bytes fit in it)
    bytes_per_token: int
    roofline_tokens_per_s: float
    measured_tokens_per_s: float
    spread: Spread | None = None  # the copies whose median `bandwidth_bytes_per_s` is (None: not kept)
    copy_bytes: int | None = None  # the main-memory copy's buffer

    @property
    def share(self) -> float:
        """Measured ÷ roofline, 0…1 (a little above 1 is timing noise)."""
        return self.measured_tokens_per_s / self.roofline_tokens_per_s

    def division(self) -> str:
        """'94,229 MB/s ÷ 147.1 MB per token = 641 tokens/s at most'."""
        return _("{bandwidth} MB/s ÷ {bytes} MB per token = {roofline} tokens/s at most").format(
            bandwidth=f"{self.bandwidth_bytes_per_s / MB:,.0f}",
            bytes=f"{self.bytes_per_token / MB:,.1f}",
            roofline=f"{self.roofline_tokens_per_s:,.0f}",
        )

    def sentence(self) -> str:
        """The example in words, every number from the measurement."""
        numbers = dict(
            device=shown_device(self.device),
            bandwidth=f"{self.bandwidth_bytes_per_s / MB:,.0f}",
            depth=f"{self.depth:,}",
            model=_(self.model),
            bytes=f"{self.bytes_per_token / MB:,.1f}",
            roofline=f"{self.roofline_tokens_per_s:,.0f}",
            measured=f"{self.measured_tokens_per_s:,.1f}",
            share=percent(self.share, 1.0),
        )
        if self.from_cache:
            return _(
                "On {device}, its last-level cache (the step's bytes fit in it) copied {bandwidth} MB per second. "
                "At depth {depth}, one step of the {model} model reads {bytes} MB (its weights and its cache), so "
                "it can write at most {roofline} tokens per second. It wrote {measured}: {share} of that ceiling."
            ).format(**numbers)
        return _(
            "On {device}, its main memory copied {bandwidth} MB per second. At depth {depth}, one step of the "
            "{model} model reads {bytes} MB (its weights and its cache), so it can write at most {roofline} "
            "tokens per second. It wrote {measured}: {share} of that ceiling."
        ).format(**numbers)

    def spread_sentence(self) -> str | None:
        """The copies behind the bandwidth: how many, the median the division uses, their lowest and highest."""
        if self.spread is None:
            return None
        numbers = dict(
            count=self.spread.count,
            low=f"{self.spread.low / MB:,.0f}",
            high=f"{self.spread.high / MB:,.0f}",
            size=format_bytes(self.copy_bytes or 0),
        )
        if self.from_cache:
            return _(
                "That speed is the median of {count} copies of buffers that fit in the cache; they ranged from "
                "{low} to {high} MB/s (a shared machine is not equally fast from one moment to the next)."
            ).format(**numbers)
        if self.device.upper().startswith("CPU"):
            return _(
                "That speed is the median of {count} copies of a {size} buffer, far larger than the CPU's caches; "
                "they ranged from {low} to {high} MB/s (a shared machine is not equally fast from one moment to "
                "the next)."
            ).format(**numbers)
        return _(
            "That speed is the median of {count} copies of a {size} buffer; they ranged from {low} to {high} MB/s."
        ).format(**numbers)


def worked_example(result: ContextResult | None) -> WorkedExample | None:
    """The example for the deepest unspilled full-attention depth of `result`, or None without one."""
    candidates = _candidates(result) if result is not None else []
    if not candidates:
        return None
    model, point = candidates[0]
    bw = result.bandwidth()
    speed = bw.for_reading(point.bytes_per_token)
    return WorkedExample(
        model, result.device, point.depth, speed, speed != result.bandwidth_bytes_per_s, point.bytes_per_token,
        speed / point.bytes_per_token, point.tokens_per_s, bw.spread(point.bytes_per_token), bw.copy_bytes,
    )  # fmt: skip


def _candidates(result: ContextResult) -> list[tuple[str, DepthPoint]]:
    """Unspilled points, full attention first, each series deepest first."""
    ordered = sorted(result.series, key=lambda s: s.model != "full attention")
    return [(s.model, p) for s in ordered for p in sorted(s.points, key=lambda p: -p.depth) if _usable(p)]


def _usable(p: DepthPoint) -> bool:
    """A point the division is all of: measured, nothing spilled, nothing over a host link or on the CPU side."""
    return (
        p.spilled_bytes == 0
        and p.bytes_per_token > 0
        and p.tokens_per_s > 0
        and not p.traffic.get("host_link")
        and not p.traffic.get("cpu_side")
    )


@dataclass(frozen=True)
class Overhead:
    """Where a step's time over its ceiling goes, in ms per step: the fixed part, bounded by the
    empty-cache step (depth 0: measured − ceiling), and the rest at the example's depth, which grows with
    the cache. Fixed work runs whatever the context, so at depth 0 it is all of the gap."""

    device: str
    depth: int
    empty_ms: float  # measured, depth 0
    empty_ceiling_ms: float  # the roofline's, depth 0
    ms: float  # measured, at `depth`
    ceiling_ms: float  # the roofline's, at `depth`

    @property
    def fixed_ms(self) -> float:
        """Time the empty-cache step took beyond reading its bytes (0 when it ran at its ceiling)."""
        return max(0.0, self.empty_ms - self.empty_ceiling_ms)

    @property
    def gap_ms(self) -> float:
        return self.ms - self.ceiling_ms

    @property
    def share(self) -> float:
        """The share of the gap at `depth` the fixed work explains, 0…1."""
        return min(1.0, self.fixed_ms / self.gap_ms)

    @property
    def rest_ms(self) -> float:
        """What is left of the gap: time that grows with the cache beyond reading it."""
        return max(0.0, self.gap_ms - self.fixed_ms)

    def sentence(self) -> str:
        """The split in words, every number from the run."""
        what = (
            _("on a CPU, mostly Python and starting many small operations")
            if self.device.upper().startswith("CPU")
            else _("on a GPU, mostly starting the step's many small calculations")
        )
        numbers = dict(
            empty=_ms(self.empty_ms), fixed=_ms(self.fixed_ms), what=what, depth=f"{self.depth:,}",
            gap=_ms(self.gap_ms), share=percent(self.share, 1.0), rest=_ms(self.rest_ms),
        )  # fmt: skip
        first = _(
            "Where the rest of the time goes: with an empty cache (depth 0) a step took {empty} ms, {fixed} ms "
            "more than reading its bytes needs — fixed work every step does, whatever the context ({what})."
        ).format(**numbers)
        if self.share >= 1.0:
            then = _(
                "At depth {depth} a step takes {gap} ms more than its ceiling, and that fixed work explains all of it."
            )
        else:
            then = _(
                "At depth {depth} a step takes {gap} ms more than its ceiling: the fixed work explains {share} of "
                "that gap, and the other {rest} ms grows with the cache."
            )
        return run_on(first, then.format(**numbers))

    def short_sentence(self) -> str:
        """The split in one plain sentence (Story): the share of the gap that is fixed work."""
        numbers = dict(depth=f"{self.depth:,}", share=percent(self.share, 1.0))
        if self.share >= 1.0:
            return _(
                "At depth {depth}, all the time a step takes over its ceiling is fixed work every step does."
            ).format(**numbers)
        return _(
            "At depth {depth}, {share} of the time a step takes over its ceiling is fixed work every step does; "
            "the rest grows with the cache."
        ).format(**numbers)


def overhead(result: ContextResult | None, example: WorkedExample | None) -> Overhead | None:
    """The split of `example`'s gap, from the depth-0 point of the same series; None without an example
    deeper than 0, without a usable depth-0 point, or where the step ran at its ceiling (no gap)."""
    if result is None or example is None or example.depth == 0:
        return None
    series = next((s for s in result.series if s.model == example.model), None)
    empty = next((p for p in (series.points if series else []) if p.depth == 0 and _usable(p)), None)
    if empty is None:
        return None
    bw = result.bandwidth()
    found = Overhead(
        example.device, example.depth, 1e3 / empty.tokens_per_s,
        1e3 * empty.bytes_per_token / bw.for_reading(empty.bytes_per_token),
        1e3 / example.measured_tokens_per_s, 1e3 / example.roofline_tokens_per_s,
    )  # fmt: skip
    return found if found.gap_ms > 0 else None


def _ms(x: float) -> str:
    """Milliseconds with three significant digits, never in e-notation: '0.0412', '3.07', '41.2', '1,234'."""
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}" if x >= 0.001 else f"{x:.2g}" if x > 0 else "0"
