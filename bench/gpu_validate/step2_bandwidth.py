"""Check 2, run second — bandwidth: device copy at 2 GiB vs an L2-sized copy; a bf16 GEMV; pinned vs
pageable host→device."""

from __future__ import annotations

from typing import Any

import torch

from bench.gpu_validate import probes
from bench.gpu_validate.runner import Expectations, Validator
from bench.gpu_validate.verdicts import pct, ratio
from core.gpu.presets import MIB
from core.gpu.timing.bench_env import BenchEnv

CHECK, NAME = "2", "2 bandwidth"


def run(v: Validator) -> tuple[dict[str, Any], Expectations]:
    env, s, dev = v.env, v.s, v.env.device
    l2 = probes.l2_bytes(dev)
    small = max(
        1 * MIB, (l2 or 8 * MIB) // 8
    )  # source + destination fit in a quarter of the L2 (H200: two halves)
    big = probes.copy_bandwidth(dev, s.copy_big)
    data = {
        "copy_big_bytes": s.copy_big, "copy_big_bytes_per_s": big,
        "l2_bytes": l2, "copy_l2_bytes": small, "copy_l2_bytes_per_s": probes.copy_bandwidth(dev, small),
        "gemv_shape": s.gemv, "gemv_bytes_per_s": probes.gemv_bandwidth(dev, env.dtype, *s.gemv),
        "nvml_peak_bytes_per_s": _peak_bandwidth(env),
        "pcie_bytes_per_s": env.snapshot.pcie_bandwidth_bytes_per_s,
    }  # fmt: skip
    if v.cuda:
        data["h2d_pinned_bytes_per_s"] = probes.h2d_bandwidth(s.h2d, pinned=True)
        data["h2d_pageable_bytes_per_s"] = probes.h2d_bandwidth(s.h2d, pinned=False)
    e = v.e
    return data, [
        e("2 GiB copy as % of NVML peak", pct(big, data["nvml_peak_bytes_per_s"]), 55, 100, " %"),
        e("L2-sized copy ÷ 2 GiB copy", ratio(data["copy_l2_bytes_per_s"], big), 0.8, 10, "×"),
        e("bf16 GEMV bytes/s as % of the 2 GiB copy", pct(data["gemv_bytes_per_s"], big), 50, 130, " %"),
        e("pinned ÷ pageable host→device", ratio(data.get("h2d_pinned_bytes_per_s"), data.get("h2d_pageable_bytes_per_s")), 1.2, None, "×"),
        e("pinned host→device as % of the PCIe link", pct(data.get("h2d_pinned_bytes_per_s"), data["pcie_bytes_per_s"]), 50, 100, " %"),
    ]  # fmt: skip


def _peak_bandwidth(env: BenchEnv) -> float | None:
    """NVML's 2 × max memory clock × bus width ÷ 8, else the same from torch's device properties."""
    if env.snapshot.peak_bandwidth_bytes_per_s or env.device.type != "cuda":
        return env.snapshot.peak_bandwidth_bytes_per_s
    props = torch.cuda.get_device_properties(env.device)
    clock_khz, bus = getattr(props, "memory_clock_rate", None), getattr(props, "memory_bus_width", None)
    return 2.0 * clock_khz * 1e3 * bus / 8.0 if clock_khz and bus else None
