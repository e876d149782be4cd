"""The roofline worked by hand with the reader's own measurement: bandwidth ÷ bytes per token = the
fastest tokens/s a step can reach, beside the tokens/s this machine really wrote.

It picks the deepest measured full-attention point that read nothing over a host link (so the
division is the whole story) and uses the memory speed the benchmark's roofline used for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.gpu.output.device_name import shown_device
from core.gpu.output.report import percent
from core.gpu.suites.context_bench import ContextResult, DepthPoint
from core.gpu.timing.bandwidth import Bandwidth
from core.i18n import _

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


def _bandwidth(result: ContextResult) -> Bandwidth:
    return Bandwidth(
        result.bandwidth_bytes_per_s, result.link_bytes_per_s, "", llc_bytes=result.llc_bytes,
        llc_bytes_per_s=result.llc_bytes_per_s,
    )  # fmt: skip


def _candidates(result: ContextResult) -> list[tuple[str, DepthPoint]]:
    """Unspilled points, full attention first, each series deepest first."""
    ordered = sorted(result.series, key=lambda s: s.model != "full attention")
    return [
        (s.model, p)
        for s in ordered
        for p in sorted(s.points, key=lambda p: -p.depth)
        if p.spilled_bytes == 0
        and p.bytes_per_token > 0
        and p.tokens_per_s > 0
        and not p.traffic.get("host_link")
        and not p.traffic.get("cpu_side")  # the division is all of it
    ]


def worked_example(result: ContextResult | None) -> WorkedExample | None:
    """The example for the deepest unspilled full-attention depth of `result`, or None without one."""
    candidates = _candidates(result) if result is not None else []
    if not candidates:
        return None
    model, point = candidates[0]
    bw = _bandwidth(result)
    speed = bw.for_reading(point.bytes_per_token)
    return WorkedExample(
        model, result.device, point.depth, speed, speed != result.bandwidth_bytes_per_s, point.bytes_per_token,
        speed / point.bytes_per_token, point.tokens_per_s,
    )  # fmt: skip
