"""The benchmarks the page submits: one call = one benchmark with its own device and bandwidth.

Each builds the `SuiteSpec` of its one part (the context sweep brings its batch sweep along), runs it
through the one pipeline (core.gpu.pipeline) on its own device, and returns the `SuiteResult`
— the copy bandwidth, the device snapshot and what it measured; it takes the `progress`/`should_stop`
callbacks that core.gpu.serving.runner.BenchRunner hands in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace as with_changes

from core.gpu import pipeline
from core.gpu.output.result import SuiteResult
from core.gpu.pipeline import Bar, CheckpointSpec, SuiteSpec
from core.gpu.presets import PRESETS, Preset
from core.gpu.suites.batch_bench import BATCH_DEPTH, BATCHES
from core.gpu.timing import bench_env
from core.gpu.timing.steps import OomHook, Progress, ShouldStop, never, no_progress
from core.i18n import N_

OOM_HOOK: OomHook | None = None  # tests set this to simulate running out of memory at some depth

# What one page benchmark hands back: exactly one of `context`, `moe` and `checkpoint` is set;
# `batch` comes with `context` (None when the context sweep was stopped before it).
JobResult = SuiteResult

CPU_BATCHES = (1, 4, 16)  # on a CPU: a few sequences, so the sweep takes seconds, not minutes
CPU_BATCH_DEPTH = 1024  # a full-attention sequence of the `cpu` preset holds 8 MiB there, 128 MiB at 16
CPU_PAIR_WIDTH_DIVISOR = 8  # the page's CPU batch sweep times the released pair at 1/8 of its widths
CPU_PAIR_VOCAB = 4096
CPU_BATCH_SECONDS = 3.0  # time cap per batch on a CPU (the preset's own cap is per context depth)
CONTEXT_SHARE = 0.8  # of the progress bar after the copy test: the context sweep; the batch sweep the rest
COPY_SHARE = 0.05  # of the progress bar: the copy test
PAGE_BAR = Bar(COPY_SHARE, N_("measuring copy bandwidth"), batch_heading=False)


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
    capped = with_changes(
        preset,
        depth_seconds=min(preset.depth_seconds, CPU_BATCH_SECONDS),
        # a click on a shared CPU server: the released pair's schedule (GQA vs 3 : 1) at an eighth of its
        # widths, about 60 MB of weights each, not the 4 GB the `cpu` preset's full widths allocate
        pair_width_divisor=max(preset.pair_width_divisor, CPU_PAIR_WIDTH_DIVISOR),
        pair_vocab=min(preset.pair_vocab or CPU_PAIR_VOCAB, CPU_PAIR_VOCAB),
    )
    return BatchPlan(CPU_BATCHES, min(CPU_BATCH_DEPTH, deepest), capped)


def _job(
    spec_for: Callable[[bench_env.BenchEnv], SuiteSpec],
    device: str,
    progress: Progress,
    should_stop: ShouldStop,
) -> SuiteResult:
    """Make the device, run the spec `spec_for(env)` builds for it through the pipeline, close the device."""
    env = bench_env.make_env(device)
    try:
        return pipeline.run(spec_for(env), env, progress, should_stop, oom_hook=OOM_HOOK)
    finally:
        env.close()  # the NVML handle is released however the run ends


def context_benchmark(
    preset_name: str,
    budget_bytes: int | None = None,
    device: str = "auto",
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
) -> SuiteResult:
    """Bandwidth, the context sweep at batch 1 (under the VRAM budget, if any), then — unless it was
    stopped — the batch sweep of `batch_plan` (in the whole free memory: a budget pretends only for
    the context sweep's cache)."""
    preset = PRESETS[preset_name]

    def spec(env: bench_env.BenchEnv) -> SuiteSpec:
        plan = batch_plan(preset, env.device.type == "cuda")
        bar = with_changes(
            PAGE_BAR, shares=(CONTEXT_SHARE, 1 - CONTEXT_SHARE), end=(N_("done"), N_("stopped"))
        )
        return SuiteSpec(preset, context_budget_bytes=budget_bytes, moe=False, batches=plan.batches,
                         batch_depth=plan.depth, batch_preset=plan.preset, bar=bar)  # fmt: skip

    return _job(spec, device, progress, should_stop)


QUICK_PRESET = "cpu"  # "Measure this machine": the CPU sizes, seconds on two cores
QUICK_LIMIT_S = 60.0  # and never longer than a minute: it stops there, keeping what it measured


def quick_benchmark(
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
    limit_s: float = QUICK_LIMIT_S,
) -> SuiteResult:
    """The one-click CPU measurement: the context sweep of the CPU preset, with the whole memory, on
    the CPU, stopped after `limit_s` seconds however busy the machine is."""
    deadline = time.monotonic() + limit_s
    return context_benchmark(
        QUICK_PRESET, None, "cpu", progress, lambda: should_stop() or time.monotonic() > deadline
    )


def moe_benchmark(
    preset_name: str,
    device: str = "auto",
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
) -> SuiteResult:
    """Bandwidth, then dense vs MoE."""
    spec = SuiteSpec(PRESETS[preset_name], context=False, bar=PAGE_BAR)
    return _job(lambda env: spec, device, progress, should_stop)


def checkpoint_benchmark(
    folder: str,
    depths: tuple[int, ...] | None = None,
    device: str = "auto",
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
) -> SuiteResult:
    """Bandwidth, then decode speed vs depth on the reader's own checkpoint (core.gpu.suites.checkpoint_bench)."""
    spec = SuiteSpec(checkpoint=CheckpointSpec(folder, depths), bar=PAGE_BAR)
    return _job(lambda env: spec, device, progress, should_stop)
