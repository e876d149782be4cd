"""Tables for Your GPU: the device card, each benchmark's points, and a one-line summary of each.

Plain rows (lists of dicts of ready-formatted strings) that a page hands to st.table, so every
number carries its unit and the same number of decimals; no Streamlit here. Only the page reads them
(the CLI prints through cli_io), so column names and notes are in the reader's language (`_`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from core.gpu.decode.ffn import MOE_WAY_WORDS
from core.gpu.decode.models import STATE_WAY_WORDS
from core.gpu.device.nvml import DeviceSnapshot
from core.gpu.suites.batch_bench import BatchResult
from core.gpu.suites.context_bench import ContextResult
from core.gpu.suites.moe_bench import MoeResult
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.kernels import KernelFloors
from core.i18n import N_, _, list_of, pgettext, run_on, with_percent
from core.plan import latency
from core.units import format_bytes, signed_percent

UNKNOWN = N_("unknown")


def or_unknown(value: Any, fmt: str = "{}") -> str:
    return _(UNKNOWN) if value is None else fmt.format(value)


def device_rows(snap: DeviceSnapshot, bandwidth: Bandwidth | None = None) -> list[dict[str, str]]:
    """The device card as (what, value) rows; 'unknown' where the driver would not say."""
    if not snap.available:  # every driver field would read 'unknown': say what there is instead
        rows = [("GPU", _("none found: the benchmarks run on the CPU"))]
        if bandwidth is not None:
            rows.append((_("Measured memory copy speed"), f"{bandwidth.device_bytes_per_s / 1e9:,.1f} GB/s"))
            if bandwidth.llc_bytes and bandwidth.llc_bytes_per_s:
                rows.append(
                    (
                        _("Measured cache copy speed ({size} last-level cache)").format(
                            size=format_bytes(bandwidth.llc_bytes)
                        ),
                        f"{bandwidth.llc_bytes_per_s / 1e9:,.1f} GB/s",
                    )
                )
            rows.append((_("How it was measured"), _(bandwidth.method)))
        return _what_value(rows)
    peak = snap.peak_bandwidth_bytes_per_s
    link = snap.pcie_bandwidth_bytes_per_s
    rows = [
        ("GPU", or_unknown(snap.name)),
        (_("Driver"), or_unknown(snap.driver)),
        (
            _("Architecture"),
            or_unknown(snap.architecture)
            + (
                ""
                if snap.compute_capability is None
                else _(" (compute {capability})").format(capability=snap.compute_capability)
            ),
        ),
        (
            _("Memory (VRAM)"),
            _(UNKNOWN)
            if snap.vram_total_bytes is None
            else _("{total} total, {used} in use").format(
                total=format_bytes(snap.vram_total_bytes), used=format_bytes(snap.vram_used_bytes or 0)
            ),
        ),
        (_("Memory bus"), or_unknown(snap.bus_width_bits, _("{} bit"))),
        (_("Max memory clock"), or_unknown(snap.max_mem_clock_mhz, "{:,} MHz")),
        (
            _("Peak bandwidth (2 × clock × bus ÷ 8)"),
            or_unknown(None if peak is None else peak / 1e9, "{:,.0f} GB/s"),
        ),
        (
            _("PCIe link now"),
            _(UNKNOWN) if snap.pcie_gen is None else f"Gen{snap.pcie_gen} x{or_unknown(snap.pcie_width)}",
        ),
        (
            _("PCIe link at best"),
            _(UNKNOWN)
            if link is None
            else _("{link} ≈ {speed} GB/s each way").format(
                link=f"Gen{snap.pcie_max_gen or snap.pcie_gen} x{snap.pcie_max_width or snap.pcie_width}",
                speed=f"{link / 1e9:,.1f}",
            ),
        ),
        (_("Power limit (enforced)"), or_unknown(snap.power_limit_w, "{:,.0f} W")),
        (_("Energy counter"), _("yes") if snap.energy_counter else _("no (power is sampled instead)")),
    ]
    if bandwidth is not None:
        rows.append((_("Measured copy bandwidth"), f"{bandwidth.device_bytes_per_s / 1e9:,.1f} GB/s"))
        rows.append((_("Measured host → device"), f"{bandwidth.link_bytes_per_s / 1e9:,.1f} GB/s"))
    return _what_value(rows)


def _what_value(rows: list[tuple[str, str]]) -> list[dict[str, str]]:
    """(what, value) pairs as table rows under the two column names."""
    return [{_("what"): k, pgettext("table column", "value"): v} for k, v in rows]


def cache_ceiling_words(
    llc_bytes: int | None, llc_bytes_per_s: float | None, memory_bytes_per_s: float | None = None
) -> str | None:
    """Why a CPU run's roofline has two speeds (`Bandwidth.for_reading`), in words; None on a GPU
    or where the cache could not be read."""
    if not llc_bytes or not llc_bytes_per_s:
        return None
    values = dict(size=format_bytes(llc_bytes), cache=f"{llc_bytes_per_s / 1e9:,.1f}")
    if memory_bytes_per_s is None:
        return _(
            "On a CPU the roofline has two speeds. A step whose bytes fit in the processor's {size} last-level "
            "cache finds them there from the step before, so its ceiling is the cache's copy speed ({cache} GB/s, "
            "measured here); a bigger step reads main memory."
        ).format(**values)
    return _(
        "On a CPU the roofline has two speeds. A step whose bytes fit in the processor's {size} last-level "
        "cache finds them there from the step before, so its ceiling is the cache's copy speed ({cache} GB/s, "
        "measured here); a bigger step reads main memory ({memory} GB/s). Where the bytes outgrow the cache, "
        "the roofline drops."
    ).format(**values, memory=f"{memory_bytes_per_s / 1e9:,.1f}")


def rate(tokens_per_s: float | None) -> str:
    """Tokens/s with one decimal below 1,000 and none above: '41.9', '1,116'."""
    if tokens_per_s is None or tokens_per_s != tokens_per_s:
        return "—"
    return f"{tokens_per_s:,.1f}" if tokens_per_s < 1000 else f"{tokens_per_s:,.0f}"


def rate_with_spread(mean: float | None, std: float | None) -> str:
    """'350.7 ± 112.0': the mean of the repeats ± their sample standard deviation."""
    if mean is None or mean != mean:
        return "—"
    return f"{rate(mean)} ± {rate(std or 0.0)}"


def percent(part: float | None, whole: float | None) -> str:
    """'71 %', and two significant digits below 10 % ('0.17 %'): a small model far below its roofline
    on a CPU read '0 %' in every row."""
    if not part or not whole or part != part:
        return "—"
    share = 100 * part / whole
    return with_percent(f"{share:.0f}" if share >= 9.95 else f"{share:.2g}")


def context_rows(result: ContextResult) -> list[dict[str, str]]:
    """One row per measured depth (and one for an out-of-memory depth), numbers as text with units.
    On CUDA the eager and CUDA-graph figures stand side by side (the headline is the graphed one)."""
    graphed = any(p.graphed_tokens_per_s is not None for s in result.series for p in s.points)
    rows = []
    for s in result.series:
        for p in s.points:
            both = (
                {
                    _("eager tokens/s"): rate(p.eager_tokens_per_s),
                    _("CUDA-graph tokens/s"): rate(p.graphed_tokens_per_s),
                }
                if graphed
                else {}
            )
            rows.append(
                {
                    _("model"): _(s.model),
                    _("depth d"): f"{p.depth:,}",
                    _("tokens/s (mean ± std)"): rate_with_spread(p.tokens_per_s, p.std_tokens_per_s),
                    **both,
                    _("ms/token"): f"{p.ms_per_token:,.2f}",
                    _("roofline tokens/s"): rate(p.predicted_tokens_per_s),
                    _("% of roofline"): percent(p.tokens_per_s, p.predicted_tokens_per_s),
                    _("cache/state"): format_bytes(p.memory_bytes),
                    _("streamed from host"): format_bytes(p.spilled_bytes) if p.spilled_bytes else "—",
                }
            )
        if s.oom_depth is not None:
            rows.append(
                {
                    _("model"): _(s.model),
                    _("depth d"): f"{s.oom_depth:,}",
                    _("tokens/s (mean ± std)"): _("out of memory"),
                    **({_("eager tokens/s"): "—", _("CUDA-graph tokens/s"): "—"} if graphed else {}),
                    _("ms/token"): "—",
                    _("roofline tokens/s"): "—",
                    _("% of roofline"): "—",
                    _("cache/state"): "—",
                    _("streamed from host"): "—",
                }
            )
    return rows


HEADLINE_COLUMNS = (
    N_("model"), N_("depth d"), N_("tokens/s (mean ± std)"), N_("% of roofline"), N_("cache/state")
)  # fmt: skip


def context_headline_rows(result: ContextResult) -> list[dict[str, str]]:
    """`context_rows` cut to the columns that make the lesson's point (speed, how near the
    memory wall, what the model keeps), plus 'streamed from host' where something spilled:
    five columns fit a 390 px phone; every figure stays in `context_rows`."""
    spilled = any(p.spilled_bytes for s in result.series for p in s.points)
    keep = [_(column) for column in HEADLINE_COLUMNS + ((N_("streamed from host"),) if spilled else ())]
    return [{column: row[column] for column in keep} for row in context_rows(result)]


def moe_rows(result: MoeResult) -> list[dict[str, str]]:
    """One row per model; the energy columns only when the device gave an energy reading."""
    with_energy = any(r.avg_watts is not None or r.energy_method for r in result.rows)
    with_note = any(r.oom_message for r in result.rows)
    rows = []
    for r in result.rows:
        row = {
            _("model"): _(r.model),
            _(
                "parameters: total / awake per token"
            ): f"{r.total_params / 1e6:,.2f} M / {r.active_params / 1e6:,.2f} M "
            f"({percent(r.active_params, r.total_params)})",
            _("tokens/s (mean ± std)"): rate_with_spread(r.tokens_per_s, r.std_tokens_per_s),
            _("roofline tokens/s"): rate(r.predicted_tokens_per_s),
            _("% of roofline"): percent(r.tokens_per_s, r.predicted_tokens_per_s),
        }
        if with_energy:
            row[_("GPU power")] = "—" if r.avg_watts is None else f"{r.avg_watts:,.1f} W"
            row[_("J per token")] = "—" if r.joules_per_token is None else f"{r.joules_per_token:.4g} J"
            row[_("J per token − idle")] = (
                "—" if r.net_joules_per_token is None else f"{r.net_joules_per_token:.4g} J"
            )
            row[_("energy from")] = _energy_method(r.energy_method) if r.energy_method else "—"
        if with_note:
            row[_("note")] = quoted(r.oom_message) if r.oom_message else ""
        rows.append(row)
    return rows


# how a row's energy was read (core.gpu.device.energy, kept in English in the JSON), translated when shown
ENERGY_METHODS = (N_("energy counter"), N_("sampled power"))


def _energy_method(method: str) -> str:
    """'sampled power (the energy counter went backwards …)' in the reader's words: the method
    translated, the note after it quoted as the device wrote it."""
    head, sep, note = method.partition(" (")
    return _(head) + (f" ({quoted(note.removesuffix(')'))})" if sep else "")


def quoted(text: str) -> str:
    """A line a device, driver or library wrote (an out-of-memory error), shown as it is: unchanged in
    English, in the reader's quotation marks elsewhere ('「…」' in Japanese), so it reads as a quote."""
    return pgettext("a device's own message, quoted as it is", "{text}").format(text=text)


def _trials_text(trials: dict[str, float | str], words: dict[str, str]) -> str:
    """'way A: 337.4 tokens/s · way B: could not run (why)'."""
    return " · ".join(
        _("{way}: {speed} tokens/s").format(way=_(words.get(way, way)), speed=rate(speed))
        if isinstance(speed, float)
        else _("{way}: could not run ({why})").format(way=_(words.get(way, way)), why=quoted(speed))
        for way, speed in trials.items()
    )


def _way_note(
    way: str, trials: dict[str, float | str] | None, words: dict[str, str], untried: str, tried: str
) -> str:
    """A part's way in the reader's words: `untried` when it was the only way run, else `tried` with what
    each way it tried reached (both given translated, with `{way}`, and `{trials}` in `tried`)."""
    named = _(words.get(way, way))
    if not trials:
        return untried.format(way=named)
    return tried.format(way=named, trials=_trials_text(trials, words))


def moe_way_note(result: MoeResult) -> str | None:
    """How the MoE read its chosen experts, and what the other ways it tried reached."""
    row = next((r for r in result.rows if r.way), None)
    if row is None:
        return None
    return _way_note(
        row.way,
        row.way_trials,
        MOE_WAY_WORDS,
        _(
            "The MoE read its chosen experts through a {way}. Where a card can also read them in place "
            "(an NVIDIA GPU with Triton, or bf16 on Hopper), a short trial keeps the fastest way."
        ),
        _(
            "The MoE read its chosen experts with {way}, the fastest of the ways this card ran in a short "
            "trial: {trials}. Copying the chosen experts out before multiplying moves them twice more; engines "
            "read them where they lie."
        ),
    )


def state_way_note(result: ContextResult) -> str | None:
    """How the fixed-state step ran, when it had more than one way, and what the others reached."""
    series = next((s for s in result.series if s.way), None)
    if series is None:
        return None
    return _way_note(
        series.way,
        series.way_trials,
        STATE_WAY_WORDS,
        _("The fixed-state step ran as {way}."),
        _(
            "The fixed-state step ran as {way}, the faster of the ways this card ran in a short trial at the "
            "first depth: {trials}. As PyTorch ops the step reads and writes the whole state several times and "
            "launches a kernel per op; fused, it reads it once."
        ),
    )


# how a point's operations were counted (core.gpu.timing.kernels, kept in English in the JSON), shown translated
KERNEL_COUNTS = (N_("CUDA graph nodes"), N_("CUDA kernels (torch.profiler)"), N_("aten ops (torch.profiler)"))


def milliseconds(seconds: float | None) -> str:
    """'0.36 ms', or '—' where there is no figure."""
    return "—" if seconds is None else _("{ms:.2f} ms").format(ms=1000 * seconds)


def floor_rows(points: Iterable[tuple[str, str, KernelFloors]], where: str) -> list[dict[str, str]]:
    """Operations per step beside bytes: one row per counted point — (model, `where` (depth or batch), the
    point) — with its operations, its bytes' floor, its kernel floor and which of the two is higher.
    Points whose operations were not counted (runs written before they were) give no row."""
    rows = []
    for model, at, p in points:
        if p.kernels_per_step is None:
            continue
        higher = "—" if p.bytes_floor_s is None else _("kernels") if p.kernel_bound else _("bytes")
        rows.append(
            {
                _("model"): _(model),
                where: at,
                _("operations per step"): f"{p.kernels_per_step:,.0f}",
                _("bytes' floor"): milliseconds(p.bytes_floor_s),
                _("kernel floor"): milliseconds(p.kernel_floor_s),
                _("higher floor"): higher,
            }
        )
    return rows


def context_floor_rows(result: ContextResult) -> list[dict[str, str]]:
    """`floor_rows` of every depth of every series."""
    return floor_rows(((s.model, f"{p.depth:,}", p) for s in result.series for p in s.points), _("depth d"))


def moe_floor_rows(result: MoeResult) -> list[dict[str, str]]:
    """`floor_rows` of the dense model and the MoE (at the run's one depth)."""
    return floor_rows(((r.model, f"{result.depth:,}", r) for r in result.rows), _("depth d"))


def batch_floor_rows(result: BatchResult) -> list[dict[str, str]]:
    """`floor_rows` of every batch timed (a step serves the whole batch: the floors are per step)."""
    points = ((s.model, f"{p.batch:,}", p) for s in result.series for p in s.points if p.fits)
    return floor_rows(points, _("batch"))


def floors_words(points: Iterable[KernelFloors]) -> str | None:
    """What the floor table shows, computed from its points: how the operations were counted, what each
    floor is, and at how many points the kernel floor is the higher; None when none was counted."""
    counted = [p for p in points if p.kernels_per_step is not None]
    if not counted:
        return None
    ways = list_of(_(how) for how in dict.fromkeys(p.kernels_counted for p in counted if p.kernels_counted))
    said = _(
        "Operations per step: {how}, counted once for each point after its timed steps. The kernel floor is "
        "those operations one after another at {us:g} µs each (the planner's stated floor per kernel); the "
        "bytes' floor is a step's bytes ÷ the copy speed."
    ).format(how=ways or _(UNKNOWN), us=latency.KERNEL_FLOOR_S * 1e6)
    judged = [p for p in counted if p.bytes_floor_s is not None]
    if not judged:
        return said
    bound = sum(p.kernel_bound for p in judged)
    if bound == len(judged):
        verdict = _(
            "At every point the kernel floor is the higher: the operation count, not the bytes, sets the pace."
        )
    elif bound == 0:
        verdict = _("At every point the bytes' floor is the higher: the bytes set the pace.")
    else:
        verdict = _(
            "The kernel floor is the higher at {n} of {total} points: there the operation count, not the bytes, "
            "sets the pace."
        ).format(n=bound, total=len(judged))
    return run_on(said, verdict)


def yours_rows(context: ContextResult | None, moe: MoeResult | None) -> list[dict[str, str]]:
    """The reader's headline numbers in the same words as the published table."""
    rows = []
    what, result = _("what"), _("result")
    if context is not None:
        for s in context.series:
            if len(s.points) >= 2:
                a, b = s.points[0], s.points[-1]
                rows.append(
                    {
                        what: _("{model}: depth {first} → {last}").format(
                            model=_(s.model), first=f"{a.depth:,}", last=f"{b.depth:,}"
                        ),
                        result: f"{a.tokens_per_s:,.1f} → {b.tokens_per_s:,.1f} t/s "
                        f"({signed_percent(b.tokens_per_s / a.tokens_per_s - 1)})",
                    }
                )
            if s.oom_depth is not None:
                rows.append(
                    {
                        what: _("{model}: out of memory").format(model=_(s.model)),
                        result: _("at depth {depth}").format(depth=f"{s.oom_depth:,}"),
                    }
                )
    if moe is not None and len(moe.rows) == 2:
        dense, experts = moe.rows
        if dense.tokens_per_s and experts.tokens_per_s and dense.tokens_per_s == dense.tokens_per_s:
            rows.append(
                {
                    what: _("MoE vs dense speed ({experts})").format(experts=_reader_experts(moe.experts)),
                    result: signed_percent(experts.tokens_per_s / dense.tokens_per_s - 1),
                }
            )
        if dense.net_joules_per_token and experts.net_joules_per_token is not None:
            rows.append(
                {
                    what: _("MoE vs dense energy per token"),
                    result: signed_percent(experts.net_joules_per_token / dense.net_joules_per_token - 1),
                }
            )
    return rows


_EXPERTS = N_("{shared} shared + {top_k} of {routed} routed")  # core.gpu.suites.moe_bench's words


def _reader_experts(words: str) -> str:
    """'2 shared + 2 of 16 routed' (as the MoE benchmark wrote it) in the reader's language."""
    match = re.fullmatch(r"(?P<shared>\S+) shared \+ (?P<top_k>\S+) of (?P<routed>\S+) routed", words)
    return _(_EXPERTS).format(**match.groupdict()) if match else words
