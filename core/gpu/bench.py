"""Lesson 10's decode benchmarks, headless: the whole suite and its CLI.

`python -m core.gpu.bench --preset tiny --out results.json` measures the copy bandwidth,
context vs speed (core.gpu.context_bench; again under a VRAM budget if one is given) and
dense vs experts (core.gpu.moe_bench), one benchmark per process (core.gpu.runner), and
writes the JSON (core.gpu.export). Method: llama-bench (ggml-org/llama.cpp
tools/llama-bench; reference/gpu-measurement.md §1.1, §5), timed in core.gpu.timing.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from core.gpu.context_bench import run_context
from core.gpu.export import to_json, versions
from core.gpu.moe_bench import run_moe
from core.gpu.presets import PRESETS, Preset, preset_for_vram
from core.gpu.runner import Busy, run_exclusive
from core.gpu.timing import (
    BenchEnv,
    Progress,
    ShouldStop,
    make_env,
    measure_copy_bandwidth,
    never,
    no_progress,
)


def run_suite(
    preset: Preset,
    env: BenchEnv,
    budget_bytes: int | None = None,
    moe: bool = True,
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
) -> dict[str, Any]:
    """Bandwidth, context sweep (and again under a VRAM budget), dense vs MoE → one JSON-ready dict."""
    started = time.time()
    progress(0.0, "copy bandwidth")
    bw = measure_copy_bandwidth(env, preset.copy_bytes)
    parts = 3 if budget_bytes is not None else 2
    part = 0

    def sub(fraction: float, message: str) -> None:
        progress((part + fraction) / parts, message)

    out: dict[str, Any] = {
        "settings": {
            "preset": asdict(preset),
            "device": str(env.device),
            "dtype": str(env.dtype),
            "vram_budget_bytes": budget_bytes,
        },
        "versions": versions(),
        "device": env.snapshot.to_dict(),
        "bandwidth": asdict(bw),
    }
    out["context"] = run_context(preset, env, bw, None, progress=sub, should_stop=should_stop).to_dict()
    part += 1
    if budget_bytes is not None and not should_stop():
        ctx = run_context(
            preset, env, bw, budget_bytes, kinds=("attention",), progress=sub, should_stop=should_stop
        )
        out["context_budget"] = ctx.to_dict()
        part += 1
    if moe and not should_stop():
        out["moe"] = run_moe(preset, env, bw, progress=sub, should_stop=should_stop).to_dict()
    out["stopped"] = should_stop()
    out["seconds"] = time.time() - started
    return out


def _print_summary(result: dict[str, Any]) -> None:
    bw = result["bandwidth"]
    dev = result["device"]
    print(f"device: {result['settings']['device']} | NVML: {dev.get('name') or dev.get('reason')}")
    print(
        f"copy bandwidth {bw['device_bytes_per_s'] / 1e9:.1f} GB/s, link {bw['link_bytes_per_s'] / 1e9:.1f} GB/s"
    )
    for key in ("context", "context_budget"):
        if key not in result:
            continue
        ctx = result[key]
        budget = ctx["budget_bytes"]
        print(f"\n{key}" + ("" if budget is None else f" (VRAM budget {budget / 1024**3:.2f} GiB)"))
        for s in ctx["series"]:
            for p in s["points"]:
                print(
                    f"  {s['model']:<15} d={p['depth']:>7}  {p['tokens_per_s']:9.1f} ± {p['std_tokens_per_s']:6.1f} t/s"
                    f"  roofline {p['predicted_tokens_per_s']:10.1f}  ({p['percent_of_roofline']:5.1f} %)"
                    + ("  spilled" if p["spilled_bytes"] else "")
                )
            if s["oom_depth"] is not None:
                print(f"  {s['model']:<15} d={s['oom_depth']:>7}  out of memory")
    if "moe" in result:
        moe = result["moe"]
        print(f"\ndense vs MoE at depth {moe['depth']} ({moe['experts']}), idle {moe['idle_watts']} W")
        for r in moe["rows"]:
            jpt = r["net_joules_per_token"]
            print(
                f"  {r['model']:<15} {r['tokens_per_s']:9.1f} ± {r['std_tokens_per_s']:6.1f} t/s"
                f"  watts {r['avg_watts']}  J/token (net) {jpt}"
            )
    print(f"\n{result['seconds']:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.gpu.bench", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--preset",
        choices=[*PRESETS, "auto"],
        default="auto",
        help="model sizes (auto: by VRAM, 'cpu' without CUDA)",
    )
    parser.add_argument("--out", default="results/gpu_bench.json", help="where to write the JSON")
    parser.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    parser.add_argument(
        "--vram-budget-gb",
        type=float,
        default=None,
        help="also run the context sweep pretending the card has this many GiB",
    )
    parser.add_argument("--no-moe", action="store_true", help="skip dense vs MoE")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    env = make_env(args.device)
    preset_name = args.preset
    if preset_name == "auto":
        preset_name = auto_preset(env)
    preset = PRESETS[preset_name]
    budget = None if args.vram_budget_gb is None else int(args.vram_budget_gb * 1024**3)
    print(f"preset {preset.name}: {preset.description}", flush=True)

    def progress(fraction: float, message: str) -> None:
        print(f"[{100 * fraction:5.1f} %] {message}", file=sys.stderr, flush=True)

    result = run_exclusive(run_suite, preset, env, budget, not args.no_moe, progress)
    if isinstance(result, Busy):
        print(result.message, file=sys.stderr)
        return 2

    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_json(result))
    _print_summary(result)
    print(f"wrote {path}")
    return 0


def auto_preset(env: BenchEnv) -> str:
    """'cpu' without CUDA; on a GPU by its memory (preset_for_vram)."""
    if env.device.type != "cuda":
        return "cpu"
    return preset_for_vram(torch.cuda.get_device_properties(env.device).total_memory)


if __name__ == "__main__":
    sys.exit(main())
