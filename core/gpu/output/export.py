"""Benchmark results out: one CSV table of every measured point, strict JSON, the page's JSON payload
and version info."""

from __future__ import annotations

import csv
import io
import json
import math
import platform
from importlib import metadata
from typing import Any

import torch

from core.gpu.decode import triton_support
from core.gpu.device.nvml import DeviceSnapshot
from core.gpu.suites.batch_bench import BatchResult
from core.gpu.suites.context_bench import ContextResult, DepthPoint
from core.gpu.suites.moe_bench import MoeResult, MoeRow
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.kernels import KernelFloors

CSV_FIELDS = (
    "benchmark",
    "model",
    "depth",
    "tokens_per_s",
    "std_tokens_per_s",
    "timing",
    "eager_tokens_per_s",
    "graphed_tokens_per_s",
    "ms_per_token",
    "bytes_per_token",
    "predicted_tokens_per_s",
    "percent_of_roofline",
    "memory_bytes",
    "spilled_bytes",
    "avg_watts",
    "joules_per_token",
    "net_joules_per_token",
    "energy_method",
    "batch",
    "kernels_per_step",
    "kernels_counted",
    "bytes_floor_ms",
    "kernel_floor_ms",
    "note",
)


def to_csv(
    context: ContextResult | None = None, moe: MoeResult | None = None, batch: BatchResult | None = None
) -> str:
    """One row per measured point, both benchmarks (and the batch sweep: tokens/s per sequence, the floors
    per step of the whole batch) in one table, each with its operations per step and both floors where
    they were counted."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    if context is not None:
        for s in context.series:
            for p in s.points:
                writer.writerow(
                    _row("context", s.model, p.depth, p)
                    | _speeds(p)
                    | {
                        "ms_per_token": f"{p.ms_per_token:.4f}",
                        "memory_bytes": p.memory_bytes,
                        "spilled_bytes": p.spilled_bytes,
                        "bytes_per_token": p.bytes_per_token,
                        "note": "capped by the time limit" if p.capped else "",
                    }
                )
            if s.oom_depth is not None:
                writer.writerow(
                    _row("context", s.model, s.oom_depth) | {"note": f"out of memory: {s.oom_message}"}
                )
    if moe is not None:
        for r in moe.rows:
            writer.writerow(
                _row("dense vs MoE", r.model, moe.depth, r)
                | _speeds(r)
                | {
                    "bytes_per_token": "" if r.bytes_per_token is None else r.bytes_per_token,
                    "avg_watts": "" if r.avg_watts is None else f"{r.avg_watts:.2f}",
                    "joules_per_token": "" if r.joules_per_token is None else f"{r.joules_per_token:.6f}",
                    "net_joules_per_token": ""
                    if r.net_joules_per_token is None
                    else f"{r.net_joules_per_token:.6f}",
                    "energy_method": r.energy_method or "",
                    "note": r.oom_message or "",
                }
            )
    if batch is not None:
        for s in batch.series:
            for p in s.points:
                writer.writerow(
                    _row("batch", s.model, batch.depth, p)
                    | {
                        "batch": p.batch,
                        "tokens_per_s": _num(p.tokens_per_s_per_sequence),
                        "predicted_tokens_per_s": _num(p.predicted_tokens_per_s_per_sequence),
                        "timing": p.timing or "",
                        "memory_bytes": "" if p.memory_bytes is None else p.memory_bytes,
                        "note": p.note or "",
                    }
                )
    return buf.getvalue()


def _row(benchmark: str, model: str, depth: int, point: KernelFloors | None = None) -> dict[str, object]:
    """The columns every row starts with, and a measured point's operations per step, how they were counted
    and both floors (blank where they were not counted)."""
    row: dict[str, object] = {"benchmark": benchmark, "model": model, "depth": depth}
    if point is None:
        return row
    counted = point.kernels_per_step
    return (
        row
        | {
            "kernels_per_step": "" if counted is None else f"{counted:g}",
            "kernels_counted": point.kernels_counted,
        }
        | {key: _num(ms) for key, ms in point.floors_ms().items()}
    )


def _speeds(point: DepthPoint | MoeRow) -> dict[str, str]:
    """A timed point's speed columns: tokens/s ± std, its roofline and share of it, how it ran, both ways."""
    return {
        "tokens_per_s": f"{point.tokens_per_s:.4f}",
        "std_tokens_per_s": f"{point.std_tokens_per_s:.4f}",
        "predicted_tokens_per_s": f"{point.predicted_tokens_per_s:.4f}",
        "percent_of_roofline": f"{point.percent_of_roofline:.2f}",
        "timing": point.timing,
        "eager_tokens_per_s": _num(point.eager_tokens_per_s),
        "graphed_tokens_per_s": _num(point.graphed_tokens_per_s),
    }


def _num(value: float | None) -> str:
    return "" if value is None or value != value else f"{value:.4f}"


def page_payload(
    snapshot: DeviceSnapshot,
    bandwidth: Bandwidth | None,
    context: ContextResult | None,
    moe: MoeResult | None,
    batch: BatchResult | None = None,
) -> dict[str, Any]:
    """What the page's JSON download holds: the device, the software, the copy bandwidth and both results
    (and the batch sweep of the same run, where there is one)."""
    payload = {
        "device": snapshot.to_dict(),
        "versions": versions(),
        "bandwidth": None if bandwidth is None else vars(bandwidth),
        "context": None if context is None else context.to_dict(),
        "moe": None if moe is None else moe.to_dict(),
    }
    return payload if batch is None else payload | {"batch": batch.to_dict()}


def versions() -> dict[str, str | None]:
    """The software a run used; Triton's version is read from its package metadata, not imported
    (the GPU page's fused kernels differ by Triton release; CUDA PyTorch wheels ship it as
    'triton' or, on some builds, 'pytorch-triton')."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": str(torch.backends.cudnn.version()) if torch.cuda.is_available() else None,
        "nvidia_ml_py": _installed("nvidia-ml-py"),
        "triton": _installed("triton") or _installed("pytorch-triton"),
        "triton_toolchain": triton_support.missing_toolchain() or "C compiler and Python.h found",
        "platform": platform.platform(),
    }


def _installed(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)


def _finite(obj: Any) -> Any:
    """NaN/inf → None so the JSON is strict."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def to_json(payload: dict[str, Any]) -> str:
    return json.dumps(_finite(payload), indent=2, default=_json_default)
