"""Tables for lesson 10: the device card, each benchmark's points, and a one-line summary of each.

Plain rows (lists of dicts of ready-formatted strings) that a page hands to st.table, so every
number carries its unit and the same number of decimals; no Streamlit here.
"""

from __future__ import annotations

from typing import Any

from core.gpu.context_bench import ContextResult
from core.gpu.ffn import IMPL_WORDS
from core.gpu.models import STATE_WAY_WORDS
from core.gpu.moe_bench import MoeResult
from core.gpu.nvml import DeviceSnapshot
from core.gpu.timing import Bandwidth
from core.units import format_bytes, signed_percent

UNKNOWN = "unknown"


def or_unknown(value: Any, fmt: str = "{}") -> str:
    return UNKNOWN if value is None else fmt.format(value)


def device_rows(snap: DeviceSnapshot, bandwidth: Bandwidth | None = None) -> list[dict[str, str]]:
    """The device card as (what, value) rows; 'unknown' where the driver would not say."""
    if not snap.available:  # every driver field would read 'unknown': say what there is instead
        rows = [("GPU", "none found: the benchmarks run on the CPU")]
        if bandwidth is not None:
            rows.append(("Measured memory copy speed", f"{bandwidth.device_bytes_per_s / 1e9:,.1f} GB/s"))
            if bandwidth.llc_bytes and bandwidth.llc_bytes_per_s:
                rows.append(
                    (
                        f"Measured cache copy speed ({format_bytes(bandwidth.llc_bytes)} last-level cache)",
                        f"{bandwidth.llc_bytes_per_s / 1e9:,.1f} GB/s",
                    )
                )
            rows.append(("How it was measured", bandwidth.method))
        return [{"what": k, "value": v} for k, v in rows]
    peak = snap.peak_bandwidth_bytes_per_s
    link = snap.pcie_bandwidth_bytes_per_s
    rows = [
        ("GPU", or_unknown(snap.name)),
        ("Driver", or_unknown(snap.driver)),
        (
            "Architecture",
            or_unknown(snap.architecture)
            + ("" if snap.compute_capability is None else f" (compute {snap.compute_capability})"),
        ),
        (
            "Memory (VRAM)",
            UNKNOWN
            if snap.vram_total_bytes is None
            else f"{format_bytes(snap.vram_total_bytes)} total, {format_bytes(snap.vram_used_bytes or 0)} in use",
        ),
        ("Memory bus", or_unknown(snap.bus_width_bits, "{} bit")),
        ("Max memory clock", or_unknown(snap.max_mem_clock_mhz, "{:,} MHz")),
        (
            "Peak bandwidth (2 × clock × bus ÷ 8)",
            or_unknown(None if peak is None else peak / 1e9, "{:,.0f} GB/s"),
        ),
        (
            "PCIe link now",
            UNKNOWN if snap.pcie_gen is None else f"Gen{snap.pcie_gen} x{or_unknown(snap.pcie_width)}",
        ),
        (
            "PCIe link at best",
            UNKNOWN
            if link is None
            else f"Gen{snap.pcie_max_gen or snap.pcie_gen} x{snap.pcie_max_width or snap.pcie_width} "
            f"≈ {link / 1e9:,.1f} GB/s each way",
        ),
        ("Power limit (enforced)", or_unknown(snap.power_limit_w, "{:,.0f} W")),
        ("Energy counter", "yes" if snap.energy_counter else "no (power is sampled instead)"),
    ]
    if bandwidth is not None:
        rows.append(("Measured copy bandwidth", f"{bandwidth.device_bytes_per_s / 1e9:,.1f} GB/s"))
        rows.append(("Measured host → device", f"{bandwidth.link_bytes_per_s / 1e9:,.1f} GB/s"))
    return [{"what": k, "value": v} for k, v in rows]


def cache_ceiling_words(
    llc_bytes: int | None, llc_bytes_per_s: float | None, memory_bytes_per_s: float | None = None
) -> str | None:
    """Why a CPU run's roofline has two speeds (`Bandwidth.for_reading`), in words; None on a GPU
    or where the cache could not be read."""
    if not llc_bytes or not llc_bytes_per_s:
        return None
    memory = (
        "."
        if memory_bytes_per_s is None
        else f" ({memory_bytes_per_s / 1e9:,.1f} GB/s). Where the bytes outgrow the cache, the roofline drops."
    )
    return (
        f"On a CPU the roofline has two speeds. A step whose bytes fit in the processor's "
        f"{format_bytes(llc_bytes)} last-level cache finds them there from the step before, so its ceiling "
        f"is the cache's copy speed ({llc_bytes_per_s / 1e9:,.1f} GB/s, measured here); a bigger step reads "
        f"main memory{memory}"
    )


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
    return f"{share:.0f} %" if share >= 9.95 else f"{share:.2g} %"


def context_rows(result: ContextResult) -> list[dict[str, str]]:
    """One row per measured depth (and one for an out-of-memory depth), numbers as text with units.
    On CUDA the eager and CUDA-graph figures stand side by side (the headline is the graphed one)."""
    graphed = any(p.graphed_tokens_per_s is not None for s in result.series for p in s.points)
    rows = []
    for s in result.series:
        for p in s.points:
            both = (
                {
                    "eager tokens/s": rate(p.eager_tokens_per_s),
                    "CUDA-graph tokens/s": rate(p.graphed_tokens_per_s),
                }
                if graphed
                else {}
            )
            rows.append(
                {
                    "model": s.model,
                    "depth d": f"{p.depth:,}",
                    "tokens/s (mean ± std)": rate_with_spread(p.tokens_per_s, p.std_tokens_per_s),
                    **both,
                    "ms/token": f"{p.ms_per_token:,.2f}",
                    "roofline tokens/s": rate(p.predicted_tokens_per_s),
                    "% of roofline": percent(p.tokens_per_s, p.predicted_tokens_per_s),
                    "cache/state": format_bytes(p.memory_bytes),
                    "streamed from host": format_bytes(p.spilled_bytes) if p.spilled_bytes else "—",
                }
            )
        if s.oom_depth is not None:
            rows.append(
                {
                    "model": s.model,
                    "depth d": f"{s.oom_depth:,}",
                    "tokens/s (mean ± std)": "out of memory",
                    **({"eager tokens/s": "—", "CUDA-graph tokens/s": "—"} if graphed else {}),
                    "ms/token": "—",
                    "roofline tokens/s": "—",
                    "% of roofline": "—",
                    "cache/state": "—",
                    "streamed from host": "—",
                }
            )
    return rows


HEADLINE_COLUMNS = ("model", "depth d", "tokens/s (mean ± std)", "% of roofline", "cache/state")


def context_headline_rows(result: ContextResult) -> list[dict[str, str]]:
    """`context_rows` cut to the columns that make the lesson's point (speed, how near the
    memory wall, what the model keeps), plus 'streamed from host' where something spilled:
    five columns fit a 390 px phone; every figure stays in `context_rows`."""
    spilled = any(p.spilled_bytes for s in result.series for p in s.points)
    keep = HEADLINE_COLUMNS + (("streamed from host",) if spilled else ())
    return [{column: row[column] for column in keep} for row in context_rows(result)]


def moe_rows(result: MoeResult) -> list[dict[str, str]]:
    """One row per model; the energy columns only when the device gave an energy reading."""
    with_energy = any(r.avg_watts is not None or r.energy_method for r in result.rows)
    with_note = any(r.oom_message for r in result.rows)
    rows = []
    for r in result.rows:
        row = {
            "model": r.model,
            "parameters: total / awake per token": f"{r.total_params / 1e6:,.2f} M / {r.active_params / 1e6:,.2f} M "
            f"({percent(r.active_params, r.total_params)})",
            "tokens/s (mean ± std)": rate_with_spread(r.tokens_per_s, r.std_tokens_per_s),
            "roofline tokens/s": rate(r.predicted_tokens_per_s),
            "% of roofline": percent(r.tokens_per_s, r.predicted_tokens_per_s),
        }
        if with_energy:
            row["GPU power"] = "—" if r.avg_watts is None else f"{r.avg_watts:,.1f} W"
            row["J per token"] = "—" if r.joules_per_token is None else f"{r.joules_per_token:.4g} J"
            row["J per token − idle"] = (
                "—" if r.net_joules_per_token is None else f"{r.net_joules_per_token:.4g} J"
            )
            row["energy from"] = r.energy_method or "—"
        if with_note:
            row["note"] = r.oom_message or ""
        rows.append(row)
    return rows


def _trials_text(trials: dict[str, float | str], words: dict[str, str]) -> str:
    """'way A: 337.4 tokens/s · way B: could not run (why)'."""
    return " · ".join(
        f"{words.get(way, way)}: {rate(speed)} tokens/s"
        if isinstance(speed, float)
        else f"{words.get(way, way)}: could not run ({speed})"
        for way, speed in trials.items()
    )


def moe_impl_note(result: MoeResult) -> str | None:
    """How the MoE read its chosen experts, and what the other ways it tried reached."""
    row = next((r for r in result.rows if r.moe_impl), None)
    if row is None:
        return None
    words = IMPL_WORDS.get(row.moe_impl, row.moe_impl)
    if not row.impl_trials:
        return (
            f"The MoE read its chosen experts through a {words}. Where a card can also read them in place "
            "(an NVIDIA GPU with Triton, or bf16 on Hopper), a short trial keeps the fastest way."
        )
    return (
        f"The MoE read its chosen experts with {words}, the fastest of the ways this card ran in a short "
        f"trial: {_trials_text(row.impl_trials, IMPL_WORDS)}. Copying the chosen experts out before "
        "multiplying moves them twice more; engines read them where they lie."
    )


def state_way_note(result: ContextResult) -> str | None:
    """How the fixed-state step ran, when it had more than one way, and what the others reached."""
    series = next((s for s in result.series if s.way), None)
    if series is None:
        return None
    words = STATE_WAY_WORDS.get(series.way, series.way)
    if not series.way_trials:
        return f"The fixed-state step ran as {words}."
    return (
        f"The fixed-state step ran as {words}, the faster of the ways this card ran in a short trial at the "
        f"first depth: {_trials_text(series.way_trials, STATE_WAY_WORDS)}. As PyTorch ops the step reads and "
        "writes the whole state several times and launches a kernel per op; fused, it reads it once."
    )


def yours_rows(context: ContextResult | None, moe: MoeResult | None) -> list[dict[str, str]]:
    """The reader's headline numbers in the same words as the published table."""
    rows = []
    if context is not None:
        for s in context.series:
            if len(s.points) >= 2:
                a, b = s.points[0], s.points[-1]
                rows.append(
                    {
                        "what": f"{s.model}: depth {a.depth:,} → {b.depth:,}",
                        "result": f"{a.tokens_per_s:,.1f} → {b.tokens_per_s:,.1f} t/s "
                        f"({signed_percent(b.tokens_per_s / a.tokens_per_s - 1)})",
                    }
                )
            if s.oom_depth is not None:
                rows.append({"what": f"{s.model}: out of memory", "result": f"at depth {s.oom_depth:,}"})
    if moe is not None and len(moe.rows) == 2:
        dense, experts = moe.rows
        if dense.tokens_per_s and experts.tokens_per_s and dense.tokens_per_s == dense.tokens_per_s:
            rows.append(
                {
                    "what": f"MoE vs dense speed ({moe.experts})",
                    "result": signed_percent(experts.tokens_per_s / dense.tokens_per_s - 1),
                }
            )
        if dense.net_joules_per_token and experts.net_joules_per_token is not None:
            rows.append(
                {
                    "what": "MoE vs dense energy per token",
                    "result": signed_percent(experts.net_joules_per_token / dense.net_joules_per_token - 1),
                }
            )
    return rows
