"""Tables for lesson 10: the device card, each benchmark's points, and a one-line summary of each.

Plain rows (lists of dicts) that a page hands to st.dataframe; no Streamlit here.
"""

from __future__ import annotations

from typing import Any

from core.figures.style import format_bytes
from core.gpu.bench import Bandwidth, ContextResult, MoeResult
from core.gpu.nvml import DeviceSnapshot

UNKNOWN = "unknown"


def _or_unknown(value: Any, fmt: str = "{}") -> str:
    return UNKNOWN if value is None else fmt.format(value)


def device_rows(snap: DeviceSnapshot, bandwidth: Bandwidth | None = None) -> list[dict[str, str]]:
    """The device card as (what, value) rows; 'unknown' where the driver would not say."""
    peak = snap.peak_bandwidth_bytes_per_s
    link = snap.pcie_bandwidth_bytes_per_s
    rows = [
        ("GPU", _or_unknown(snap.name)),
        ("Driver", _or_unknown(snap.driver)),
        (
            "Architecture",
            _or_unknown(snap.architecture)
            + ("" if snap.compute_capability is None else f" (compute {snap.compute_capability})"),
        ),
        (
            "Memory (VRAM)",
            UNKNOWN
            if snap.vram_total_bytes is None
            else f"{format_bytes(snap.vram_total_bytes)} total, {format_bytes(snap.vram_used_bytes or 0)} in use",
        ),
        ("Memory bus", _or_unknown(snap.bus_width_bits, "{} bit")),
        ("Max memory clock", _or_unknown(snap.max_mem_clock_mhz, "{:,} MHz")),
        (
            "Peak bandwidth (2 × clock × bus ÷ 8)",
            _or_unknown(None if peak is None else peak / 1e9, "{:,.0f} GB/s"),
        ),
        (
            "PCIe link now",
            UNKNOWN if snap.pcie_gen is None else f"Gen{snap.pcie_gen} x{_or_unknown(snap.pcie_width)}",
        ),
        (
            "PCIe link at best",
            UNKNOWN
            if link is None
            else f"Gen{snap.pcie_max_gen or snap.pcie_gen} x{snap.pcie_max_width or snap.pcie_width} "
            f"≈ {link / 1e9:,.1f} GB/s each way",
        ),
        ("Power limit (enforced)", _or_unknown(snap.power_limit_w, "{:,.0f} W")),
        ("Energy counter", "yes" if snap.energy_counter else "no (power is sampled instead)"),
    ]
    if bandwidth is not None:
        rows.append(("Measured copy bandwidth", f"{bandwidth.device_bytes_per_s / 1e9:,.1f} GB/s"))
        rows.append(("Measured host → device", f"{bandwidth.link_bytes_per_s / 1e9:,.1f} GB/s"))
    return [{"what": k, "value": v} for k, v in rows]


def context_rows(result: ContextResult) -> list[dict[str, Any]]:
    rows = []
    for s in result.series:
        for p in s.points:
            rows.append(
                {
                    "model": s.model,
                    "depth": p.depth,
                    "tokens/s": round(p.tokens_per_s, 1),
                    "± std": round(p.std_tokens_per_s, 1),
                    "ms/token": round(p.ms_per_token, 3),
                    "roofline tokens/s": round(p.predicted_tokens_per_s, 1),
                    "% of roofline": round(p.percent_of_roofline, 1),
                    "memory": format_bytes(p.memory_bytes),
                    "streamed from host": format_bytes(p.spilled_bytes) if p.spilled_bytes else "—",
                }
            )
        if s.oom_depth is not None:
            rows.append(
                {
                    "model": s.model,
                    "depth": s.oom_depth,
                    "tokens/s": None,
                    "± std": None,
                    "ms/token": None,
                    "roofline tokens/s": None,
                    "% of roofline": None,
                    "memory": "out of memory",
                    "streamed from host": "—",
                }
            )
    return rows


def context_summary(result: ContextResult) -> dict[str, float]:
    """Per model: speed at the deepest measured depth as a fraction of its speed at the first."""
    out = {}
    for s in result.series:
        if len(s.points) >= 2:
            out[s.model] = s.points[-1].tokens_per_s / s.points[0].tokens_per_s
    return out


def moe_rows(result: MoeResult) -> list[dict[str, Any]]:
    def r3(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    return [
        {
            "model": r.model,
            "total parameters": f"{r.total_params:,}",
            "active parameters": f"{r.active_params:,}",
            "tokens/s": r3(r.tokens_per_s),
            "± std": r3(r.std_tokens_per_s),
            "roofline tokens/s": r3(r.predicted_tokens_per_s),
            "watts": r3(r.avg_watts),
            "J/token": r3(r.joules_per_token),
            "J/token − idle": r3(r.net_joules_per_token),
            "energy from": r.energy_method or "—",
            "note": r.oom_message or "",
        }
        for r in result.rows
    ]


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
                        f"({100 * (b.tokens_per_s / a.tokens_per_s - 1):+.0f} %)",
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
                    "result": f"{100 * (experts.tokens_per_s / dense.tokens_per_s - 1):+.0f} %",
                }
            )
        if dense.net_joules_per_token and experts.net_joules_per_token is not None:
            rows.append(
                {
                    "what": "MoE vs dense energy per token",
                    "result": f"{100 * (experts.net_joules_per_token / dense.net_joules_per_token - 1):+.0f} %",
                }
            )
    return rows
