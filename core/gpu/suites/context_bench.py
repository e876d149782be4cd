"""Context vs speed: decode tokens/s at growing context depth, beside the roofline.

For each depth d of a preset (llama-bench's `tg @ d`; docs/sources.md §6.1, §6.5):
full attention, whose KV cache grows a row per token, and a fixed-state model of the same
width, each timed eagerly and (on CUDA) as a replayed CUDA graph by `time_at_depth`, and set
beside the bandwidth roofline of the bytes the step really moves (`DecodeModel.traffic`).
A VRAM budget keeps the cache rows past it in pinned host memory, streamed every step: the
spill (core.gpu.decode.kv_cache, split by core.gpu.decode.spill). Its buffers are allocated once, at the
size of the deepest depth, after checking free host RAM, and released when the series ends.
Running out of memory at some depth ends that series with the depth recorded; each depth has
a time cap; `on_update` sees the result after every point (the CLI writes it to disk). Each point also
keeps the operations one step ran (a CUDA graph's nodes ÷ its steps, or one profiled step after the timed
ones: core.gpu.timing.kernels), so its kernel floor stands beside its bytes' floor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from core.gpu.decode import spill
from core.gpu.decode.cpu_layers import CpuLayersDecoder
from core.gpu.decode.kv_cache import pinned_host_bytes
from core.gpu.decode.models import DecodeModel, build
from core.gpu.decode.traffic import Traffic
from core.gpu.device.nvml import DeviceSnapshot
from core.gpu.presets import Preset
from core.gpu.timing import ways
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.decode_timer import (
    DepthTiming,
    SpeedPoint,
    kernels_at_depth,
    random_tokens,
    steps_room,
    time_at_depth,
)
from core.gpu.timing.errors import oom_message
from core.gpu.timing.steps import OomHook, Progress, ShouldStop, Stopped, never, no_progress, stoppable
from core.roofline import CARDS, DEFAULT_CARD, bandwidth_bound_tokens_per_s, spill_time_per_token

resident_positions = spill.resident_positions  # kept here: the page's tests and the CLI name it so


@dataclass
class DepthPoint(SpeedPoint):
    depth: int
    tokens_per_s: float  # the CUDA-graph figure where there is one, else the eager one
    std_tokens_per_s: float
    samples_tokens_per_s: list[float]
    memory_bytes: int  # cache or state at this depth
    spilled_bytes: int  # of it, kept in host memory and streamed every step
    bytes_per_token: int  # every byte one step moves (weights, cache/state, scratch)
    predicted_tokens_per_s: float
    timing: str = "eager"  # how tokens_per_s was measured: "eager" or "CUDA graph"
    eager_tokens_per_s: float | None = None
    eager_std_tokens_per_s: float | None = None
    graphed_tokens_per_s: float | None = None
    graphed_std_tokens_per_s: float | None = None
    graph_note: str | None = None
    capped: bool = False  # the depth's time cap cut its repetitions short
    traffic: dict[str, int] = field(default_factory=dict)
    gpu_layers: int | None = None  # CPU-layers mode: layers that ran on the GPU at this depth
    kernels_per_step: float | None = None  # operations per step (core.gpu.timing.kernels); None: not counted
    kernels_counted: str = ""  # how: a CUDA graph's nodes, the profiler's CUDA kernels or its aten ops


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
    held_bytes: int | None = None  # device memory the process held once the cache was allocated
    host_cache_bytes: int = 0  # pinned host memory the spilled cache took
    pinned_after_release: int | None = None  # pinned bytes torch still held after the series
    way: str | None = None  # how the step ran, when the model has more than one way (core.gpu.timing.ways)
    way_trials: dict[str, float | str] | None = None  # tokens/s of each way tried, or why it failed


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
    llc_bytes: int | None = None  # CPU runs: the last-level cache whose speed a step that fits in it gets
    llc_bytes_per_s: float | None = None
    copy_bytes: int | None = None  # the copy probe's buffer, and each of its readings (bytes/s):
    bandwidth_samples: list[float] = field(default_factory=list)  # main memory (its median is the roofline's)
    llc_samples: list[float] = field(default_factory=list)  # within the cache

    def bandwidth(self) -> Bandwidth:
        """The copy speeds this sweep's rooflines used, with their readings."""
        return Bandwidth(
            self.bandwidth_bytes_per_s, self.link_bytes_per_s, "", llc_bytes=self.llc_bytes,
            llc_bytes_per_s=self.llc_bytes_per_s, copy_bytes=self.copy_bytes,
            samples_bytes_per_s=list(self.bandwidth_samples), llc_samples_bytes_per_s=list(self.llc_samples),
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for s_out, s in zip(out["series"], self.series, strict=True):
            for p_out, p in zip(s_out["points"], s.points, strict=True):
                p_out["ms_per_token"] = p.ms_per_token
                p_out["percent_of_roofline"] = p.percent_of_roofline
                p_out |= p.floors_ms()
        return out


def predicted_tokens_per_s(
    active_bytes: int, memory_bytes: int, unread_bytes: int, budget_bytes: int | None, bw: Bandwidth
) -> float:
    """Roofline for one step: everything read from VRAM, or the spill model under a budget."""
    read = active_bytes + memory_bytes
    if budget_bytes is None:
        return bandwidth_bound_tokens_per_s(read, bw.for_reading(read))
    return 1.0 / spill_time_per_token(
        read, budget_bytes, bw.device_bytes_per_s, bw.link_bytes_per_s, unread_bytes
    )


def traffic_tokens_per_s(traffic: Traffic, bw: Bandwidth) -> float:
    """Roofline from a step's real traffic: VRAM bytes at copy speed (on a CPU, its cache's speed
    while the step's bytes fit in it: `Bandwidth.for_reading`), host-link bytes at link speed,
    bytes of CPU-computed layers at host memory speed."""
    on_device = traffic.total - traffic.host_link - traffic.cpu_side
    host = bw.host_bytes_per_s or bw.device_bytes_per_s
    seconds = (
        on_device / bw.for_reading(traffic.total)
        + traffic.host_link / bw.link_bytes_per_s
        + traffic.cpu_side / host
    )
    return 1.0 / seconds


Update = Callable[["ContextResult"], None]


def _no_update(result: ContextResult) -> None:
    """The default: nobody watches the points arrive."""


@dataclass
class SeriesPlan:
    """Where one series' cache goes: positions on the device, whether it is allocated once up front."""

    resident: int | None
    allocate_once: bool
    depths: tuple[int, ...]
    refusal: str | None = None  # why the deeper depths were not run (host RAM)
    refused_depth: int | None = None


def plan_series(
    model: DecodeModel, kind: str, preset: Preset, env: BenchEnv, budget_bytes: int | None
) -> SeriesPlan:
    """Split the cache for a budgeted attention series, once, at the size of its deepest depth:
    everything the process holds counted, the staging block included; depths whose host part
    would not fit in free RAM are refused up front. Other series allocate per depth, all resident."""
    if kind != "attention" or budget_bytes is None:
        return SeriesPlan(None, False, preset.depths)
    per_pos = model.memory_bytes(1)
    stage_per_pos = per_pos // preset.n_layers
    weights = model.total_params() * model.elem_bytes
    held = max(weights, env.held_bytes()) + (spill.WORKSPACE_BYTES if env.device.type == "cuda" else 0)
    depths = preset.depths
    max_len = steps_room(preset, depths[-1])
    fit = spill.resident_positions(budget_bytes, held, per_pos, stage_per_pos, max_len)
    plan = SeriesPlan(fit, True, depths)
    for i in range(len(depths), 0, -1):  # the deepest depths whose host part fits in free RAM
        per_layer = max(0, steps_room(preset, depths[i - 1]) - fit) * stage_per_pos
        if env.device.type == "cuda":  # torch's pinned allocator rounds each block up to a power of two
            per_layer = 1 << (per_layer - 1).bit_length() if per_layer else 0
        need = preset.n_layers * per_layer
        check = spill.check_host(need)
        if check.fits:
            break
        plan.refusal, plan.refused_depth = check.message, depths[i - 1]
    if plan.refusal:
        plan.depths = depths[: depths.index(plan.refused_depth)]
    return plan


def run_context(
    preset: Preset,
    env: BenchEnv,
    bandwidth: Bandwidth,
    budget_bytes: int | None = None,
    kinds: tuple[str, ...] = ("attention", "state"),
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
    oom_hook: OomHook | None = None,
    on_update: Update = _no_update,
    cpu_layers: bool = False,
) -> ContextResult:
    """Tokens/s at every depth of the preset for each model kind; OOM ends a series, Stop ends all.

    With a budget, full attention spills by streaming its cache (default) or, with `cpu_layers`,
    by running the layers that do not fit on the CPU (core.gpu.decode.cpu_layers), split per depth."""
    result = ContextResult(
        preset.name,
        env.device_label,
        str(env.dtype).removeprefix("torch."),
        budget_bytes,
        bandwidth.device_bytes_per_s,
        bandwidth.link_bytes_per_s,
        [],
        llc_bytes=bandwidth.llc_bytes,
        llc_bytes_per_s=bandwidth.llc_bytes_per_s,
        copy_bytes=bandwidth.copy_bytes,
        bandwidth_samples=list(bandwidth.samples_bytes_per_s),
        llc_samples=list(bandwidth.llc_samples_bytes_per_s),
    )
    tokens = random_tokens(preset, env.device)
    total = len(kinds) * len(preset.depths)
    done = 0
    with stoppable(result, progress):
        for kind in kinds:
            try:
                model = _build(kind, preset, env, budget_bytes, cpu_layers)
            except Exception as error:  # out of memory while building is a result; anything else is raised
                result.series.append(_unbuilt_series(kind, preset, env, oom_message(error)))
                env.free_memory()
                done += len(preset.depths)
                on_update(result)
                continue
            try:
                done = _run_series(
                    model, kind, preset, env, bandwidth, budget_bytes, tokens, result,
                    progress, should_stop, oom_hook, on_update, done, total,
                )  # fmt: skip
            finally:
                model.release()
                del model
                env.free_memory()
                if result.series:
                    result.series[-1].pinned_after_release = pinned_host_bytes()
                on_update(result)
    on_update(result)  # once more, now that a Stop is marked
    return result


def _build(
    kind: str, preset: Preset, env: BenchEnv, budget_bytes: int | None, cpu_layers: bool
) -> DecodeModel | CpuLayersDecoder:
    """The model of one series: split across GPU and CPU in CPU-layers mode, else all on the device."""
    if cpu_layers and kind == "attention" and budget_bytes is not None:
        held = env.outside_torch_bytes + (spill.WORKSPACE_BYTES if env.device.type == "cuda" else 0)
        return CpuLayersDecoder(preset, env.device, env.dtype, budget_bytes, held)
    return build(kind, preset, env.device, env.dtype)


def _unbuilt_series(kind: str, preset: Preset, env: BenchEnv, message: str) -> Series:
    """A series whose model ran out of memory while being built: sizes from a 'meta' copy, no points."""
    shape = build(kind, preset, "meta", env.dtype)
    weights = shape.total_params() * shape.elem_bytes
    series = Series(shape.kind, shape.total_params(), shape.active_weight_bytes(), weights)
    series.oom_depth = preset.depths[0]
    series.oom_message = f"out of memory while building the model: {message}"
    return series


def _run_series(
    model: DecodeModel | CpuLayersDecoder,
    kind: str,
    preset: Preset,
    env: BenchEnv,
    bandwidth: Bandwidth,
    budget_bytes: int | None,
    tokens: torch.Tensor,
    result: ContextResult,
    progress: Progress,
    should_stop: ShouldStop,
    oom_hook: OomHook | None,
    on_update: Update,
    done: int,
    total: int,
) -> int:
    weights = model.total_params() * model.elem_bytes
    active = model.active_weight_bytes()
    series = Series(model.kind, model.total_params(), active, weights)
    result.series.append(series)
    if isinstance(model, CpuLayersDecoder):  # split per depth, as Ollama splits per num_ctx
        plan = SeriesPlan(None, False, preset.depths)
    else:
        plan = plan_series(model, kind, preset, env, budget_bytes)
    series.spill_position = plan.resident
    if not isinstance(model, CpuLayersDecoder) and len(model.kernel_ways()) > 1 and plan.depths:
        series.way, series.way_trials = ways.choose_fastest(
            model, preset, env, tokens, plan.depths[0], should_stop
        )
    per_pos = model.memory_bytes(1) if kind == "attention" else 0
    allocated = False
    for depth in preset.depths:
        if should_stop():
            raise Stopped
        if depth not in plan.depths:
            series.oom_depth, series.oom_message = depth, f"not run: {plan.refusal}"
            break
        progress(done / total, f"{model.kind}: depth {depth:,}")
        try:
            if plan.allocate_once and not allocated:
                if oom_hook is not None:
                    oom_hook(model.kind, depth)
                model.allocate(steps_room(preset, plan.depths[-1]), plan.resident)
                allocated = True
                series.host_cache_bytes = getattr(getattr(model, "cache", None), "host_bytes", 0)
                series.held_bytes = env.held_bytes() or None
            measured = time_at_depth(
                model, model.kind, preset, env, tokens, depth, should_stop,
                None if allocated else oom_hook, plan.resident, allocate=not allocated,
            )  # fmt: skip
            counted = kernels_at_depth(model, depth, measured.best, tokens, env)  # untimed, once a depth
        except Exception as error:  # out of memory ends the series; anything else is raised
            series.oom_depth, series.oom_message = depth, oom_message(error)
            model.release()
            env.free_memory()
            done += len(preset.depths) - preset.depths.index(depth)
            break
        if series.held_bytes is None and env.held_bytes():
            series.held_bytes = env.held_bytes()
        series.points.append(
            _point(model, depth, measured, budget_bytes, bandwidth, plan.resident, per_pos, counted)
        )
        if isinstance(model, CpuLayersDecoder):
            point = series.points[-1]
            point.gpu_layers = model.n_gpu
            point.spilled_bytes = (preset.n_layers - model.n_gpu) * depth * per_pos // preset.n_layers
        if budget_bytes is not None and series.spill_depth is None and series.points[-1].spilled_bytes > 0:
            series.spill_depth = depth
        done += 1
        on_update(result)
    return done


def _point(
    model: DecodeModel | CpuLayersDecoder,
    depth: int,
    measured: DepthTiming,
    budget_bytes: int | None,
    bandwidth: Bandwidth,
    resident: int | None,
    per_pos: int,
    counted: tuple[float | None, str],
) -> DepthPoint:
    traffic = model.traffic(depth)
    spilled = 0 if resident is None or not per_pos else max(0, depth - resident) * per_pos
    best, eager, graphed = measured.best, measured.eager, measured.graphed
    return DepthPoint(
        depth,
        best.mean,
        best.std,
        best.samples_tokens_per_s,
        model.memory_bytes(depth),
        spilled,
        traffic.total,
        traffic_tokens_per_s(traffic, bandwidth),
        timing=best.method,
        eager_tokens_per_s=eager.mean,
        eager_std_tokens_per_s=eager.std,
        graphed_tokens_per_s=None if graphed is None else graphed.mean,
        graphed_std_tokens_per_s=None if graphed is None else graphed.std,
        graph_note=measured.graph_note,
        capped=measured.capped,
        traffic=traffic.to_dict(),
        kernels_per_step=counted[0],
        kernels_counted=counted[1],
    )


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
        out[model.kind] = []
        for d in preset.depths:
            moved = model.traffic(d).total  # every byte a step at depth d moves, all resident
            if budget_bytes is None or kind != "attention":
                out[model.kind].append((d, bandwidth_bound_tokens_per_s(moved, bandwidth.for_reading(moved))))
            else:
                unread = weights - active
                out[model.kind].append((d, predicted_tokens_per_s(moved, 0, unread, budget_bytes, bandwidth)))
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
