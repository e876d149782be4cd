"""A short look before the newer kernels are timed: the tools they need, and one launch each.

What check 6 of the validator (bench.gpu_validate) runs first, in at most `BUDGET_S` seconds: Triton's version,
the C toolchain Triton builds its launcher with, the CUDA driver library (libcuda), then each newer
way launched once eagerly and once captured in a CUDA graph and replayed, its output compared with
the gathered way's (the MoE) or the PyTorch ops' (the fixed state). A way that fails here is not
timed at all — the first run of a new kernel is where a sticky CUDA error is most likely. Without
a CUDA device the launches are reported as skipped, with the reason.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import importlib.metadata
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from typing import Any

import torch

from core.gpu.decode import triton_support
from core.gpu.decode.models import MOE_PART, STATE_PART, build, moe_layer, part_way
from core.gpu.presets import Preset
from core.gpu.timing import graphs
from core.gpu.timing.errors import error_line

BUDGET_S = 20.0
MATCH = 0.03  # max |difference| ÷ max |output| a way may differ by (bf16 rounding is ~0.01)
NO_CUDA = "no CUDA device: the kernels are launched and graph-captured on a GPU only"


def toolchain() -> dict[str, Any]:
    """Triton's version, the C compiler (and its first --version line), Python.h, and libcuda's
    path and driver version — each None with the reason where it is missing."""
    try:
        triton = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        triton = None
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")
    cc_version = None
    if cc:
        try:
            done = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=5)
            cc_version = (done.stdout.splitlines() or [""])[0] or None
        except (OSError, subprocess.TimeoutExpired) as error:
            cc_version = f"could not run: {error}"
    return {
        "triton": triton,
        "c_compiler": cc,
        "c_compiler_version": cc_version,
        "toolchain_missing": triton_support.missing_toolchain(),
        **_libcuda(),
    }


def _libcuda() -> dict[str, Any]:
    """Where libcuda is and the driver version it reports (cuDriverGetVersion: 12080 → '12.8')."""
    name = ctypes.util.find_library("cuda")
    out: dict[str, Any] = {"libcuda": name, "libcuda_driver_version": None}
    if name is None:
        out["libcuda_missing"] = "no libcuda on the library path (the NVIDIA driver's user-space part)"
        return out
    try:
        version = ctypes.c_int()
        if ctypes.CDLL(name).cuDriverGetVersion(ctypes.byref(version)) == 0:
            out["libcuda_driver_version"] = f"{version.value // 1000}.{version.value % 1000 // 10}"
    except OSError as error:
        out["libcuda_missing"] = f"could not load {name}: {error}"
    return out


def launch_and_capture(run: Callable[[], torch.Tensor], reference: torch.Tensor) -> dict[str, Any]:
    """Launch `run` once, then capture it in a CUDA graph and replay it: did each work, and how far
    each output is from `reference` (max |difference| ÷ max |output|)."""
    out: dict[str, Any] = {"launched": False, "captured": False}

    def diff(x: torch.Tensor) -> float:
        return float((x.float() - reference.float()).abs().max() / reference.float().abs().max())

    try:
        out["eager_difference"] = diff(run())
        torch.cuda.synchronize()
        out["launched"] = True
        graph = torch.cuda.CUDAGraph()
        with graphs.capturing(graph):
            captured = run()
        graph.replay()
        torch.cuda.synchronize()
        out["graphed_difference"] = diff(captured)
        out["captured"] = True
        del graph
    except Exception as error:  # the finding: kept in words, and the way is not timed
        out["error"] = error_line(error, 400, whole=True)
    return out


def passed(result: dict[str, Any]) -> bool:
    """Launched, captured, and both outputs within MATCH of the reference."""
    return bool(result.get("captured")) and all(
        result.get(k, 1.0) <= MATCH for k in ("eager_difference", "graphed_difference")
    )


def run(
    preset: Preset, device: torch.device, dtype: torch.dtype, budget_s: float = BUDGET_S
) -> dict[str, Any]:
    """The toolchain, then each newer way of this preset's widths launched and captured once
    ('moe:grouped', 'moe:triton', 'state:triton'), until `budget_s` is spent."""
    t0 = time.perf_counter()
    out: dict[str, Any] = {"toolchain": toolchain(), "ways": {}}
    if device.type != "cuda":
        out["skipped"] = NO_CUDA
        return out
    torch.manual_seed(0)
    layer = moe_layer(preset, device, dtype)
    h = torch.randn(1, preset.d_model, device=device, dtype=dtype)
    reference = layer(h)
    tries: list[tuple[str, Callable[[], dict[str, Any]]]] = []
    for way in layer.runnable_ways():
        if way != "gather":
            tries.append((part_way(MOE_PART, way), lambda i=way, m=layer: _moe_way(m, i, h, reference)))
    if triton_support.available(device):
        tries.append((part_way(STATE_PART, "triton"), lambda: _state_way(preset, device, dtype)))
    for name, attempt in tries:
        if time.perf_counter() - t0 > budget_s:
            out["ways"][name] = {"error": f"not tried: the preflight's {budget_s:.0f} s were spent"}
            continue
        started = time.perf_counter()
        out["ways"][name] = attempt() | {"seconds": time.perf_counter() - started}
    del layer
    out["seconds"] = time.perf_counter() - t0
    return out


def _moe_way(layer: Any, way: str, h: torch.Tensor, reference: torch.Tensor) -> dict[str, Any]:
    try:
        layer.use(way)
        return launch_and_capture(lambda: layer(h), reference)
    finally:
        layer.use("gather")


def _state_way(preset: Preset, device: torch.device, dtype: torch.dtype) -> dict[str, Any]:
    """The fused state step against the PyTorch ops on a two-layer model, one step from the same state."""
    small = dataclasses.replace(preset, n_layers=2)
    ops = build("state", small, device, dtype)
    fused = build("state", small, device, dtype)
    fused.load_state_dict(ops.state_dict())
    fused.use_way("triton")
    token = torch.tensor([3], device=device)
    try:
        for model in (ops, fused):
            model.allocate(8)
            torch.manual_seed(1)
            model.fill(5)
        start = [s.clone() for s in fused.state]
        reference = ops.step(token)

        def step() -> torch.Tensor:
            for s, s0 in zip(fused.state, start, strict=True):
                s.copy_(s0)  # the same state before every launch, so each output is comparable
            fused.pos = 5
            return fused.step(token)

        return launch_and_capture(step, reference)
    finally:
        ops.release()
        fused.release()


def summary(result: dict[str, Any]) -> str:
    """One line: 'Triton 3.6.0, gcc (…) 12.2.0, libcuda 13.0; moe:grouped ok, moe:triton failed (…)'."""
    tools = result["toolchain"]
    cuda = tools["libcuda_driver_version"] or tools.get("libcuda_missing") or "no libcuda"
    parts = [f"Triton {tools['triton'] or 'not installed'}", tools["c_compiler_version"] or "no C compiler",
             f"libcuda {cuda}"]  # fmt: skip
    ways = [f"{w} {'ok' if passed(r) else 'failed (' + r.get('error', 'outputs differ') + ')'}"
            for w, r in result["ways"].items()]  # fmt: skip
    return ", ".join(parts) + "; " + (result.get("skipped") or ", ".join(ways) or "no newer way to launch")
