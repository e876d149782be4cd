"""The benchmarks the page submits: one call = one benchmark with its own device and bandwidth.

Each returns a `JobResult` — the copy bandwidth, the device snapshot and the one result it
measured (the context sweep brings its batch sweep along) — and takes the `progress`/`should_stop`
callbacks that core.gpu.runner.BenchRunner hands in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace as with_changes
from functools import partial

from core.gpu import timing
from core.gpu.batch_bench import BATCH_DEPTH, BATCHES, BatchResult, run_batch
from core.gpu.checkpoint_bench import CheckpointResult, run_checkpoint
from core.gpu.context_bench import ContextResult, run_context
from core.gpu.moe_bench import MoeResult, run_moe
from core.gpu.nvml import DeviceSnapshot
from core.gpu.presets import PRESETS, Preset

OOM_HOOK: timing.OomHook | None = None  # tests set this to simulate running out of memory at some depth


@dataclass
class JobResult:
    """What one page benchmark hands back: exactly one of `context`, `moe` and `checkpoint` is set;
    `batch` comes with `context` (None when the context sweep was stopped before it)."""

    bandwidth: timing.Bandwidth
    device: DeviceSnapshot
    context: ContextResult | None = None
    moe: MoeResult | None = None
    checkpoint: CheckpointResult | None = None
    batch: BatchResult | None = None


CPU_BATCHES = (1, 4, 16)  # on a CPU: a few sequences, so the sweep takes seconds, not minutes
CPU_BATCH_DEPTH = 1024  # a full-attention sequence of the `cpu` preset holds 8 MiB there, 128 MiB at 16
CPU_BATCH_SECONDS = 3.0  # time cap per batch on a CPU (the preset's own cap is per context depth)
CONTEXT_SHARE = 0.8  # of the progress bar after the copy test: the context sweep; the batch sweep the rest


@dataclass(frozen=True)
class BatchPlan:
    """The batch sweep a page run adds to its context sweep: which batches, at what depth, and the
    preset it times them with (its time cap shortened on a CPU)."""

    batches: tuple[int, ...]
    depth: int
    preset: Preset


def batch_plan(preset: Preset, on_cuda: bool) -> BatchPlan:
    """On a GPU: batch 1, 4, 16, 64 at 16K (or the preset's deepest depth, if shallower), as
    `bench --batch` and check 7 run it. On a CPU: 1, 4, 16 at 1K at most, a few seconds per batch."""
    deepest = max(preset.depths)
    if on_cuda:
        return BatchPlan(BATCHES, min(BATCH_DEPTH, deepest), preset)
    capped = with_changes(preset, depth_seconds=min(preset.depth_seconds, CPU_BATCH_SECONDS))
    return BatchPlan(CPU_BATCHES, min(CPU_BATCH_DEPTH, deepest), capped)


def _job(
    preset_name: str,
    device: str,
    progress: timing.Progress,
    run: Callable[..., ContextResult | MoeResult],
) -> JobResult:
    """Copy bandwidth first (the first 5 % of the bar), then `run(preset, env, bandwidth, progress=…)`."""
    preset = PRESETS[preset_name]
    env = timing.make_env(device)
    try:
        progress(0.0, "measuring copy bandwidth")
        bw = timing.measure_copy_bandwidth(env, preset.copy_bytes)
        result = run(preset, env, bw, progress=lambda f, m: progress(0.05 + 0.95 * f, m))
    finally:
        env.close()  # the NVML handle is released however the run ends
    if isinstance(result, ContextResult):
        return JobResult(bw, env.snapshot, context=result)
    return JobResult(bw, env.snapshot, moe=result)


def context_benchmark(
    preset_name: str,
    budget_bytes: int | None = None,
    device: str = "auto",
    progress: timing.Progress = timing.no_progress,
    should_stop: timing.ShouldStop = timing.never,
) -> JobResult:
    """Bandwidth, the context sweep at batch 1 (under the VRAM budget, if any), then — unless it was
    stopped — the batch sweep of `batch_plan` (in the whole free memory: a budget pretends only for
    the context sweep's cache)."""
    preset = PRESETS[preset_name]
    env = timing.make_env(device)
    batch: BatchResult | None = None
    try:
        progress(0.0, "measuring copy bandwidth")
        bw = timing.measure_copy_bandwidth(env, preset.copy_bytes)
        context = run_context(
            preset, env, bw, budget_bytes, should_stop=should_stop, oom_hook=OOM_HOOK,
            progress=lambda f, m: progress(0.05 + 0.95 * CONTEXT_SHARE * f, m),
        )  # fmt: skip
        if not context.stopped:
            plan = batch_plan(preset, env.device.type == "cuda")
            start = 0.05 + 0.95 * CONTEXT_SHARE
            batch = run_batch(
                plan.preset, env, plan.batches, plan.depth, should_stop,
                progress=lambda f, m: progress(start + (1 - start) * f, m),
            )  # fmt: skip
            progress(1.0, "stopped" if batch.stopped else "done")
    finally:
        env.close()  # the NVML handle is released however the run ends
    return JobResult(bw, env.snapshot, context=context, batch=batch)


QUICK_PRESET = "cpu"  # "Measure this machine": the CPU sizes, seconds on two cores
QUICK_LIMIT_S = 60.0  # and never longer than a minute: it stops there, keeping what it measured


def quick_benchmark(
    progress: timing.Progress = timing.no_progress,
    should_stop: timing.ShouldStop = timing.never,
    limit_s: float = QUICK_LIMIT_S,
) -> JobResult:
    """The one-click CPU measurement: the context sweep of the CPU preset, with the whole memory, on
    the CPU, stopped after `limit_s` seconds however busy the machine is."""
    deadline = time.monotonic() + limit_s
    return context_benchmark(
        QUICK_PRESET, None, "cpu", progress, lambda: should_stop() or time.monotonic() > deadline
    )


def moe_benchmark(
    preset_name: str,
    device: str = "auto",
    progress: timing.Progress = timing.no_progress,
    should_stop: timing.ShouldStop = timing.never,
) -> JobResult:
    """Bandwidth, then dense vs MoE."""
    return _job(preset_name, device, progress, partial(run_moe, should_stop=should_stop, oom_hook=OOM_HOOK))


def checkpoint_benchmark(
    folder: str,
    depths: tuple[int, ...] | None = None,
    device: str = "auto",
    progress: timing.Progress = timing.no_progress,
    should_stop: timing.ShouldStop = timing.never,
) -> JobResult:
    """Bandwidth, then decode speed vs depth on the reader's own checkpoint (core.gpu.checkpoint_bench)."""
    env = timing.make_env(device)
    try:
        progress(0.0, "measuring copy bandwidth")
        copy_bytes = PRESETS["small" if env.device.type == "cuda" else "cpu"].copy_bytes
        bw = timing.measure_copy_bandwidth(env, copy_bytes)
        result = run_checkpoint(
            folder,
            env,
            bw,
            depths,
            progress=lambda f, m: progress(0.05 + 0.95 * f, m),
            should_stop=should_stop,
        )
    finally:
        env.close()
    return JobResult(bw, env.snapshot, checkpoint=result)
