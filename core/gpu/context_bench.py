"""Context vs speed: decode tokens/s at growing context depth, beside the roofline.

For each depth d of a preset (llama-bench's `tg @ d`; reference/gpu-measurement.md §5):
full attention, whose KV cache grows a row per token, and a fixed-state model of the same
width, each timed by `time_decode` and set beside the bandwidth roofline (core/roofline.py).
A VRAM budget keeps the cache rows past it in host memory, streamed every step: the spill.
Running out of memory at some depth ends that series with the depth recorded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from core.gpu import timing
from core.gpu.models import build
from core.gpu.nvml import DeviceSnapshot
from core.gpu.presets import Preset
from core.gpu.timing import Bandwidth, BenchEnv, OomHook, Progress, ShouldStop, never, no_progress
from core.roofline import CARDS, DEFAULT_CARD, bandwidth_bound_tokens_per_s, spill_split, spill_time_per_token


@dataclass
class DepthPoint:
    depth: int
    tokens_per_s: float
    std_tokens_per_s: float
    samples_tokens_per_s: list[float]
    memory_bytes: int  # cache or state at this depth
    spilled_bytes: int  # of it, kept in host memory and streamed every step
    bytes_per_token: int  # active weights + cache/state
    predicted_tokens_per_s: float

    @property
    def ms_per_token(self) -> float:
        return 1000.0 / self.tokens_per_s

    @property
    def percent_of_roofline(self) -> float:
        return 100.0 * self.tokens_per_s / self.predicted_tokens_per_s


@dataclass
class Series:
    model: str  # "full attention" / "fixed state"
    total_params: int
    active_weight_bytes: int
    weight_bytes: int
    points: list[DepthPoint] = field(default_factory=list)
    spill_position: int | None = None  # first cache position that does not fit the budget
    spill_depth: int | None = None  # first measured depth whose cache exceeds the budget
    oom_depth: int | None = None  # depth where allocation ran out of memory; the series ends there
    oom_message: str | None = None


@dataclass
class ContextResult:
    preset: str
    device: str
    dtype: str
    budget_bytes: int | None
    bandwidth_bytes_per_s: float
    link_bytes_per_s: float
    series: list[Series]
    stopped: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for s_out, s in zip(out["series"], self.series, strict=True):
            for p_out, p in zip(s_out["points"], s.points, strict=True):
                p_out["ms_per_token"] = p.ms_per_token
                p_out["percent_of_roofline"] = p.percent_of_roofline
        return out


def resident_positions(budget_bytes: int | None, weight_bytes: int, bytes_per_position: int) -> int | None:
    """How many cache positions fit in the budget once every weight is resident (None: no budget)."""
    if budget_bytes is None:
        return None
    return max(0, (budget_bytes - weight_bytes) // bytes_per_position)


def predicted_tokens_per_s(
    active_bytes: int, memory_bytes: int, unread_bytes: int, budget_bytes: int | None, bw: Bandwidth
) -> float:
    """Roofline for one step: everything read from VRAM, or the spill model under a budget."""
    read = active_bytes + memory_bytes
    if budget_bytes is None:
        return bandwidth_bound_tokens_per_s(read, bw.device_bytes_per_s)
    return 1.0 / spill_time_per_token(
        read, budget_bytes, bw.device_bytes_per_s, bw.link_bytes_per_s, unread_bytes
    )


def run_context(
    preset: Preset,
    env: BenchEnv,
    bandwidth: Bandwidth,
    budget_bytes: int | None = None,
    kinds: tuple[str, ...] = ("attention", "state"),
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
    oom_hook: OomHook | None = None,
) -> ContextResult:
    """Tokens/s at every depth of the preset for each model kind; OOM ends a series, Stop ends all."""
    result = ContextResult(
        preset.name,
        env.device_label,
        str(env.dtype).removeprefix("torch."),
        budget_bytes,
        bandwidth.device_bytes_per_s,
        bandwidth.link_bytes_per_s,
        [],
    )
    tokens = timing.random_tokens(preset, env.device)
    total = len(kinds) * len(preset.depths)
    done = 0
    with timing.stoppable(result, progress):
        for kind in kinds:
            model = build(kind, preset, env.device, env.dtype)
            weights = model.total_params() * model.elem_bytes
            active = model.active_weight_bytes()
            series = Series(model.kind, model.total_params(), active, weights)
            result.series.append(series)
            per_pos = model.memory_bytes(1) if kind == "attention" else 0
            fit = resident_positions(budget_bytes, weights, per_pos) if per_pos else None
            series.spill_position = fit
            for depth in preset.depths:
                if should_stop():
                    raise timing.Stopped
                progress(done / total, f"{model.kind}: depth {depth:,}")
                try:
                    measured = timing.time_at_depth(
                        model, model.kind, preset, env, tokens, depth, should_stop, oom_hook, fit
                    )
                except Exception as error:  # out of memory ends the series; anything else is raised
                    series.oom_depth, series.oom_message = depth, timing.oom_message(error)
                    model.release()
                    env.free_memory()
                    done += len(preset.depths) - preset.depths.index(depth)
                    break
                memory = model.memory_bytes(depth)
                unread = weights - active
                spilled = 0
                if budget_bytes is not None:
                    spilled = int(spill_split(active + memory, budget_bytes, unread)[1])
                    if spilled > 0 and series.spill_depth is None and per_pos:
                        series.spill_depth = depth
                series.points.append(
                    DepthPoint(
                        depth,
                        measured.mean,
                        measured.std,
                        measured.samples_tokens_per_s,
                        memory,
                        spilled,
                        active + memory,
                        predicted_tokens_per_s(active, memory, unread, budget_bytes, bandwidth),
                    )
                )
                done += 1
            model.release()
            del model
            env.free_memory()
    return result


def predict_context(
    preset: Preset,
    bandwidth: Bandwidth,
    budget_bytes: int | None = None,
    elem_bytes: int = 2,
) -> dict[str, list[tuple[int, float]]]:
    """Roofline only, no run: (depth, tokens/s) per model kind, from shapes on the 'meta' device."""
    dtype = {2: torch.bfloat16, 4: torch.float32}[elem_bytes]
    out = {}
    for kind in ("attention", "state"):
        model = build(kind, preset, "meta", dtype)
        weights, active = model.total_params() * elem_bytes, model.active_weight_bytes()
        out[model.kind] = [
            (
                d,
                predicted_tokens_per_s(
                    active,
                    model.memory_bytes(d),
                    weights - active,
                    budget_bytes if kind == "attention" else None,
                    bandwidth,
                ),
            )
            for d in preset.depths
        ]
    return out


def reference_bandwidth(
    snapshot: DeviceSnapshot, measured: Bandwidth | None, on_gpu: bool
) -> tuple[Bandwidth, str]:
    """The bandwidth to draw a roofline for before (or without) a run, and words for where it came from:
    this machine's measured copy speed, else the GPU's spec-sheet peak, else the reference card."""
    if measured is not None:
        return measured, "this machine's measured copy speed"
    if on_gpu and snapshot.peak_bandwidth_bytes_per_s:
        link = snapshot.pcie_bandwidth_bytes_per_s or 16e9
        return Bandwidth(snapshot.peak_bandwidth_bytes_per_s, link, "spec"), (
            f"your {snapshot.name}'s spec-sheet bandwidth"
        )
    card = CARDS[DEFAULT_CARD]
    return Bandwidth(card.bandwidth_bytes_per_s, card.host_link_bytes_per_s, "spec"), (
        f"an {card.name} ({card.bandwidth_bytes_per_s / 1e9:,.0f} GB/s)"
    )
