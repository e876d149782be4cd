"""The two benchmarks the page submits: one call = one benchmark with its own device and bandwidth.

Each returns {"bandwidth": Bandwidth, <"context" | "moe">: result, "device": snapshot}
and takes the `progress`/`should_stop` callbacks that core.gpu.runner.BenchRunner hands in.
"""

from __future__ import annotations

from typing import Any

from core.gpu.context_bench import run_context
from core.gpu.models import PRESETS
from core.gpu.moe_bench import run_moe
from core.gpu.timing import (
    OomHook,
    Progress,
    ShouldStop,
    make_env,
    measure_copy_bandwidth,
    never,
    no_progress,
)

OOM_HOOK: OomHook | None = None  # tests set this to simulate running out of memory at some depth


def context_benchmark(
    preset_name: str,
    budget_bytes: int | None = None,
    device: str = "auto",
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
) -> dict[str, Any]:
    """Bandwidth, then the context sweep → {"bandwidth": Bandwidth, "context": ContextResult, "device": snapshot}."""
    preset = PRESETS[preset_name]
    env = make_env(device)
    progress(0.0, "measuring copy bandwidth")
    bw = measure_copy_bandwidth(env, preset.copy_bytes)
    ctx = run_context(
        preset,
        env,
        bw,
        budget_bytes,
        progress=lambda f, m: progress(0.05 + 0.95 * f, m),
        should_stop=should_stop,
        oom_hook=OOM_HOOK,
    )
    return {"bandwidth": bw, "context": ctx, "device": env.snapshot}


def moe_benchmark(
    preset_name: str,
    device: str = "auto",
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
) -> dict[str, Any]:
    """Bandwidth, then dense vs MoE → {"bandwidth": Bandwidth, "moe": MoeResult, "device": snapshot}."""
    preset = PRESETS[preset_name]
    env = make_env(device)
    progress(0.0, "measuring copy bandwidth")
    bw = measure_copy_bandwidth(env, preset.copy_bytes)
    moe = run_moe(
        preset,
        env,
        bw,
        progress=lambda f, m: progress(0.05 + 0.95 * f, m),
        should_stop=should_stop,
        oom_hook=OOM_HOOK,
    )
    return {"bandwidth": bw, "moe": moe, "device": env.snapshot}
