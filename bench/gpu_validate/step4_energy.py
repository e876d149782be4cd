"""Check 4, run fourth — energy: idle power after a 5 s and a 15 s rest (settled?) vs right after work;
the energy counter vs power sampled from 1 s before an 8 s window."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from bench.gpu_validate.runner import Expectations, Validator
from bench.gpu_validate.verdicts import pct, ratio
from core.gpu.device.energy import POWER_AVERAGE_S, EnergyMeter
from core.gpu.presets import GIB
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.steps import Stopped

CHECK, NAME = "4", "4 energy"


def run(v: Validator) -> tuple[dict[str, Any], Expectations]:
    env, s = v.env, v.s
    counter, power, source = _energy_sources(env)
    buf = torch.empty(min(s.copy_big, 1 * GIB), dtype=torch.uint8, device=env.device)
    dst = torch.empty_like(buf)

    def work(seconds: float) -> int:
        n, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            if v.should_stop():
                raise Stopped
            for _ in range(8):
                dst.copy_(buf)
            env.sync()
            n += 8
        return n

    def watts_over(seconds: float) -> float | None:
        meter = EnergyMeter(None, power, interval_s=0.05)
        meter.begin()
        time.sleep(seconds)
        reading = meter.end()
        return None if reading is None else reading.avg_watts

    work(s.burst_s)
    right_after = watts_over(s.after_s)
    idle = {}  # rest (s) → idle watts: settled when the later equals the earlier
    rested = 0.0
    for rest in s.rests_s:
        time.sleep(max(0.0, rest - rested))
        idle[rest] = watts_over(s.idle_s)
        rested = rest + s.idle_s
    first, last = idle[s.rests_s[0]], idle[s.rests_s[-1]]
    by_counter = EnergyMeter(counter, None)
    # NVML power is a 1 s average (Hopper): sampled from a second before the window opens
    by_samples = EnergyMeter(None, power, interval_s=0.05, lead_s=min(POWER_AVERAGE_S, s.window_s))
    env.sync()
    by_samples.start_lead()
    time.sleep(by_samples.lead_s)
    by_counter.begin()
    by_samples.begin()
    copies = work(s.window_s)
    env.sync()
    c, p = by_counter.end(), by_samples.end()
    data = {
        "source": source, "right_after_work_watts": right_after, "idle_after_rest_watts": first,
        "idle_watts_by_rest_s": idle, "sampled_lead_seconds": None if p is None else p.lead_seconds,
        "window_copies": copies, "counter_joules": None if c is None else c.joules,
        "counter_seconds": None if c is None else c.seconds, "sampled_joules": None if p is None else p.joules,
        "sampled_seconds": None if p is None else p.seconds, "power_limit_w": env.snapshot.power_limit_w,
    }  # fmt: skip
    avg = None if c is None else c.avg_watts
    e = v.e
    return data, [
        e(f"idle after a {s.rests_s[0]:g} s rest ÷ power right after work", ratio(first, right_after), 0, 1.02, "×"),
        e(f"idle after {s.rests_s[-1]:g} s ÷ after {s.rests_s[0]:g} s of rest (settled)", ratio(last, first), 0.95, 1.05, "×"),
        e("power sampled before the window opened", data["sampled_lead_seconds"], POWER_AVERAGE_S if v.cuda else 0, None, " s"),
        e("energy counter moved over the window", data["counter_joules"], 1e-9, None, " J"),
        e("counter ÷ sampled-power energy", ratio(data["counter_joules"], data["sampled_joules"]), 0.85, 1.15, "×"),
        e("average power while copying, % of the power limit", pct(avg, env.snapshot.power_limit_w), 20, 105, " %"),
    ]  # fmt: skip


def _energy_sources(env: BenchEnv) -> tuple[Callable[[], float | None], Callable[[], float | None], str]:
    """NVML's counter and power for the GPU; a synthetic 50 W card on a dry run (code path only).
    A GPU without NVML reads nothing, so its energy expectations fail with the reason in `source`."""
    if env.gpu is not None:
        return env.gpu.energy_mj, env.gpu.power_w, "NVML"
    if env.device.type == "cuda":
        reason = env.snapshot.reason or "NVML gave no device"
        return (lambda: None), (lambda: None), f"none: {reason}"
    t0 = time.perf_counter()
    return (lambda: 1e6 + 50_000.0 * (time.perf_counter() - t0)), (lambda: 50.0), "synthetic 50 W (dry run)"
