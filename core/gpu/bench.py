"""Lesson 10's decode benchmarks, headless: the whole suite and its CLI.

`python -m core.gpu.bench --preset tiny --out results.json` measures the copy bandwidth,
context vs speed (core.gpu.context_bench; again under a VRAM budget if one is given) and
dense vs experts (core.gpu.moe_bench), one benchmark per machine (core.gpu.runner). Method:
llama-bench (ggml-org/llama.cpp tools/llama-bench; docs/sources.md §6.1, §6.5),
timed in core.gpu.timing, eager and (on CUDA) as replayed CUDA graphs.

It runs wherever a CUDA PyTorch does: it needs torch, numpy and nvidia-ml-py only (no
Streamlit, no plotly). Every argument is checked before anything is measured (one-line
error, exit status 2). The JSON is rewritten after every part and every depth, so a run
that is killed or times out keeps what it measured; Ctrl-C or SIGTERM stops it cleanly
(core.gpu.cli_io), marks the result stopped and exits 128 + the signal number.

`python -m core.gpu.bench --checkpoint FOLDER` times a real checkpoint instead (GPT-2 in the
course's module; Qwen3 and Qwen3.5 in the course's modules, graph-captured on CUDA; Llama, Mistral,
Qwen2 through transformers, an optional extra):
decode speed vs depth with its own KV cache, beside the roofline of its config
(core.gpu.checkpoint_bench). A folder that is not a usable checkpoint, or a depth beyond its
window, is refused before anything loads.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from core.gpu import batch_bench, checkpoint_bench, cli_io, moe_sizing
from core.gpu.context_bench import run_context
from core.gpu.export import to_json, versions
from core.gpu.ffn import IMPLS
from core.gpu.models import MOE_PART, STATE_PART, STATE_WAYS, part_way, preset_summary
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
from core.models.hf_tokenizer import CheckpointError

PROG = "python -m core.gpu.bench"


def _nothing(partial: dict[str, Any]) -> None:
    """The default: nobody saves the partial result."""


def run_suite(
    preset: Preset,
    env: BenchEnv,
    budget_bytes: int | None = None,
    moe: bool = True,
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
    on_update: Callable[[dict[str, Any]], None] = _nothing,
    cpu_layers: bool = True,
    moe_sized_by_card: bool = False,
    retime_dense: bool = False,
    batches: tuple[int, ...] = (),
    batch_depth: int = batch_bench.BATCH_DEPTH,
) -> dict[str, Any]:
    """Bandwidth, context sweep (and again under a VRAM budget), dense vs MoE, and — with a budget —
    the llama.cpp-style sweep whose layers that do not fit run on the CPU → one JSON-ready dict.

    `on_update(partial)` is called after every part and every measured depth with what there is so far.
    `moe_sized_by_card`: dense vs MoE with experts sized like real ones from this card's free memory
    and measured copy speed (core.gpu.moe_sizing), its sizes under `moe_sizing`; `retime_dense`: the
    dense twin timed again right after the MoE (`moe.dense_again`); `batches`: decode at each of these
    batches at `batch_depth`, full attention and the fixed state (core.gpu.batch_bench; `batch`).
    """
    started = time.time()
    out: dict[str, Any] = {
        "settings": {
            "preset": asdict(preset),
            "device": str(env.device),
            "dtype": str(env.dtype),
            "vram_budget_bytes": budget_bytes,
        },
        "versions": versions(),
        "device": env.snapshot.to_dict(),
        "complete": False,
        "stopped": False,
    }

    def update() -> None:
        out["seconds"] = time.time() - started
        out["stopped"] = should_stop()
        on_update(out)

    progress(0.0, "copy bandwidth")
    bw = measure_copy_bandwidth(env, preset.copy_bytes)
    out["bandwidth"] = asdict(bw)
    update()
    parts = 2 + (budget_bytes is not None) * (1 + cpu_layers) - (not moe) + bool(batches)
    part = 0

    def sub(fraction: float, message: str) -> None:
        progress((part + fraction) / parts, message)

    def keep(key: str) -> Callable[[Any], None]:
        def store(result: Any) -> None:
            out[key] = result.to_dict()
            update()

        return store

    run_context(preset, env, bw, None, progress=sub, should_stop=should_stop, on_update=keep("context"))
    part += 1
    if budget_bytes is not None and not should_stop():
        run_context(
            preset, env, bw, budget_bytes, kinds=("attention",), progress=sub, should_stop=should_stop,
            on_update=keep("context_budget"),
        )  # fmt: skip
        part += 1
    if moe and not should_stop():
        moe_preset = preset
        if moe_sized_by_card:
            sizing = moe_sizing.size_moe(
                env.free_bytes(), bw.device_bytes_per_s, torch.finfo(env.dtype).bits // 8
            )
            out["moe_sizing"] = asdict(sizing) | {"bytes_ratio": sizing.bytes_ratio}
            moe_preset = moe_sizing.sized_preset(preset, sizing)
        out["moe"] = run_moe(
            moe_preset, env, bw, progress=sub, should_stop=should_stop, retime_dense=retime_dense
        ).to_dict()
        update()
        part += 1
    if batches and not should_stop():
        progress(part / parts, f"batch {', '.join(map(str, batches))} at depth {batch_depth:,}")
        out["batch"] = batch_bench.run_batch(preset, env, batches, batch_depth, should_stop).to_dict()
        update()
    if budget_bytes is not None and cpu_layers and not should_stop():
        run_context(
            preset, env, bw, budget_bytes, kinds=("attention",), progress=sub, should_stop=should_stop,
            on_update=keep("context_cpu_layers"), cpu_layers=True,
        )  # fmt: skip
    out["complete"] = not should_stop()
    update()
    return out


def _print_summary(result: dict[str, Any]) -> None:
    bw = result.get("bandwidth")
    dev = result["device"]
    print(f"device: {result['settings']['device']} | NVML: {dev.get('name') or dev.get('reason')}")
    if bw:
        print(
            f"copy bandwidth {bw['device_bytes_per_s'] / 1e9:.1f} GB/s, link {bw['link_bytes_per_s'] / 1e9:.1f} GB/s"
        )
        if bw.get("llc_bytes") and bw.get("llc_bytes_per_s"):
            print(
                f"cache copy {bw['llc_bytes_per_s'] / 1e9:.1f} GB/s in the {bw['llc_bytes'] / 2**20:,.0f} MiB "
                "last-level cache: the roofline of a step whose bytes fit in it"
            )
    for key in ("context", "context_budget", "context_cpu_layers"):
        if key not in result:
            continue
        ctx = result[key]
        budget = ctx["budget_bytes"]
        print(f"\n{key}" + ("" if budget is None else f" (VRAM budget {budget / 1024**3:.2f} GiB)"))
        for s in ctx["series"]:
            for p in s["points"]:
                graphed = p.get("graphed_tokens_per_s")
                print(
                    f"  {s['model']:<15} d={p['depth']:>7}  {p['tokens_per_s']:9.1f} ± {p['std_tokens_per_s']:6.1f} t/s"
                    f"  ({p['timing']}; eager {p['eager_tokens_per_s']:.1f}"
                    + ("" if graphed is None else f", graphed {graphed:.1f}")
                    + f")  roofline {p['predicted_tokens_per_s']:10.1f}  ({p['percent_of_roofline']:5.1f} %)"
                    + ("  spilled" if p["spilled_bytes"] else "")
                    + ("" if p.get("gpu_layers") is None else f"  GPU layers: {p['gpu_layers']}")
                    + ("  capped" if p.get("capped") else "")
                )
            if s["oom_depth"] is not None:
                print(f"  {s['model']:<15} d={s['oom_depth']:>7}  {s['oom_message'] or 'out of memory'}")
            if s.get("way_trials"):
                print(f"  {'':<15} ran as {s['way']} ({_trials_line(s['way_trials'])})")
    if "moe" in result:
        moe = result["moe"]
        print(f"\ndense vs MoE at depth {moe['depth']} ({moe['experts']}), idle {moe['idle_watts']} W")
        for r in moe["rows"]:
            jpt = r["net_joules_per_token"]
            print(
                f"  {r['model']:<15} {r['tokens_per_s']:9.1f} ± {r['std_tokens_per_s']:6.1f} t/s ({r['timing']})"
                f"  watts {r['avg_watts']}  J/token (net) {jpt}"
            )
            if r.get("impl_trials"):
                print(f"  {'':<15} experts read by {r['moe_impl']} ({_trials_line(r['impl_trials'])})")
    if "batch" in result:
        batch = result["batch"]
        print(f"\nbatch at depth {batch['depth']:,}")
        for s in batch["series"]:
            print(f"  {s['model']:<15} at most {s['max_batch']:,} sequences fit")
            for p in s["points"]:
                if p["fits"]:
                    print(f"  {'':<15} B={p['batch']:>3}  {p['tokens_per_s_per_sequence']:9.1f} t/s a sequence, "
                          f"{p['tokens_per_s_total']:10.1f} t/s in all ({p['timing']})")  # fmt: skip
                else:
                    print(f"  {'':<15} B={p['batch']:>3}  {p['note']}")
    print(f"\n{result.get('seconds', 0.0):.1f} s" + ("  (stopped early)" if result.get("stopped") else ""))


def _trials_line(trials: dict[str, float | str]) -> str:
    """'trials: gather 337.4 t/s, triton 905.2 t/s, grouped failed (why)'."""
    return "trials: " + ", ".join(
        f"{way} {v:.1f} t/s" if isinstance(v, float) else f"{way} failed ({v})" for way, v in trials.items()
    )


# The ways a step can run besides the PyTorch one (core.gpu.ffn.IMPLS, core.gpu.models.STATE_WAYS),
# each named in its part ('moe:triton') or, bare, in every part that has it ('triton': core.gpu.ways).
NEWER_WAYS = (
    *dict.fromkeys([*IMPLS[1:], *STATE_WAYS[1:]]),
    *(part_way(MOE_PART, w) for w in IMPLS[1:]),
    *(part_way(STATE_PART, w) for w in STATE_WAYS[1:]),
)


def _way_list(text: str) -> tuple[str, ...]:
    """'moe:triton,grouped' → ('moe:triton', 'grouped'); an unknown way is a one-line argument error."""
    ways = tuple(w.strip() for w in text.split(",") if w.strip())
    unknown = [w for w in ways if w not in NEWER_WAYS]
    if unknown or not ways:
        raise argparse.ArgumentTypeError(f"{text!r}: choose from {', '.join(NEWER_WAYS)}")
    return ways


def _batch_list(text: str) -> tuple[int, ...]:
    """'1,4,16,64' → (1, 4, 16, 64): increasing whole numbers ≥ 1 (argparse type)."""
    try:
        batches = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of batches") from None
    if not batches or batches[0] < 1 or list(batches) != sorted(set(batches)):
        raise argparse.ArgumentTypeError(f"{text!r}: batches must be increasing whole numbers ≥ 1")
    return batches


def parse_args(argv: list[str] | None) -> Any:
    """Parse and check every argument before anything is measured (one-line error, exit 2)."""
    parser = cli_io.Parser(prog=PROG, description=__doc__.split("\n")[0])
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
        type=cli_io.positive_float,
        default=None,
        help="also run the context sweep pretending the card has this many GiB",
    )
    parser.add_argument("--no-moe", action="store_true", help="skip dense vs MoE")
    parser.add_argument("--check", action="store_true", help="check the arguments, then exit (0: all good)")
    parser.add_argument("--threads", type=cli_io.positive_int, default=None, help="torch CPU threads (≥ 1)")
    parser.add_argument(
        "--depth-seconds",
        type=cli_io.positive_float,
        default=None,
        help="time cap per depth (default: the preset's)",
    )
    parser.add_argument(
        "--depths", type=cli_io.depth_list, default=None, help="override the depths, e.g. 0,4096"
    )
    parser.add_argument("--eager-only", action="store_true", help="no CUDA graphs, eager steps only")
    parser.add_argument(
        "--checkpoint",
        metavar="FOLDER",
        default=None,
        help="time this local checkpoint (GPT-2, Llama, Mistral, Qwen2, Qwen3, Qwen3.5 in safetensors) instead",
    )
    parser.add_argument(
        "--skip-ways",
        type=_way_list,
        default=(),
        help=f"kernel ways not to try, e.g. moe:triton (of {', '.join(NEWER_WAYS)}; a bare way is skipped "
        "in every part; the PyTorch way always runs)",
    )
    parser.add_argument(
        "--moe-sized-by-card",
        action="store_true",
        help="dense vs MoE with experts sized like real ones from the GPU's free memory and copy speed",
    )
    parser.add_argument(
        "--batch",
        type=_batch_list,
        default=(),
        help="also time decode at these batches, e.g. 1,4,16,64 (full attention and the fixed state)",
    )
    parser.add_argument(
        "--batch-depth",
        type=cli_io.positive_int,
        default=batch_bench.BATCH_DEPTH,
        help=f"the context depth of --batch (default {batch_bench.BATCH_DEPTH:,})",
    )
    parser.add_argument(
        "--retime-dense",
        action="store_true",
        help="in dense vs MoE, time the dense model again after the MoE",
    )
    parser.add_argument(
        "--no-cpu-layers",
        action="store_true",
        help="with a budget, skip the sweep whose extra layers run on the CPU",
    )
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        cli_io.fail(PROG, "--device cuda was asked for, but this PyTorch sees no CUDA GPU")
    if args.moe_sized_by_card and (args.device == "cpu" or not torch.cuda.is_available()):
        cli_io.fail(PROG, "--moe-sized-by-card sizes the MoE from a GPU's memory: it needs a CUDA GPU")
    why = cli_io.check_out_path(Path(args.out))
    if why:
        cli_io.fail(PROG, why)
    if args.checkpoint is not None:
        args.checkpoint_settings = _checkpoint_settings(args)
    return args


def _checkpoint_settings(args: Any) -> checkpoint_bench.Settings:
    """Check the folder (config and headers only) and the depths against its window: exit 2 if bad."""
    settings = checkpoint_bench.Settings()
    if args.depth_seconds is not None:
        settings = dataclasses.replace(settings, depth_seconds=args.depth_seconds)
    try:
        info = checkpoint_bench.describe(args.checkpoint)
        if args.depths is not None:
            checkpoint_bench.check_depths(info, args.depths, settings)
    except CheckpointError as error:
        cli_io.fail(PROG, str(error))
    return settings


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.check:
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    env = make_env(args.device)
    if args.checkpoint is not None:
        return _run_checkpoint(args, env)
    preset = PRESETS[auto_preset(env) if args.preset == "auto" else args.preset]
    changes: dict[str, Any] = {}
    if args.depth_seconds is not None:
        changes["depth_seconds"] = args.depth_seconds
    if args.depths is not None:
        changes["depths"] = args.depths
    if args.eager_only:
        changes["use_graphs"] = False
    if args.skip_ways:
        changes["skip_ways"] = args.skip_ways
    preset = dataclasses.replace(preset, **changes)
    budget = None if args.vram_budget_gb is None else int(args.vram_budget_gb * 1024**3)
    print(f"preset {preset.name}: {preset_summary(preset, env.dtype)}", flush=True)
    out = cli_io.ResultFile(Path(args.out))

    try:
        with cli_io.StopOnSignal() as stop:
            result = run_exclusive(
                run_suite,
                preset,
                env,
                budget,
                not args.no_moe,
                print_progress,
                stop.is_set,
                lambda r: out.write(to_json(r)),
                cpu_layers=not args.no_cpu_layers,
                moe_sized_by_card=args.moe_sized_by_card,
                retime_dense=args.retime_dense,
                batches=args.batch,
                batch_depth=args.batch_depth,
            )
        if isinstance(result, Busy):
            print(result.message, file=sys.stderr)
            return 2
        out.write(to_json(result))
    except OSError as error:  # the results file became unwritable during the run (disk full, removed)
        cli_io.fail(PROG, f"could not write {out.path}: {error.strerror or error}")
    finally:
        env.close()
    _print_summary(result)
    print(f"wrote {out.path}")
    return stop.exit_code


def print_progress(fraction: float, message: str) -> None:
    """The CLI's progress line, on stderr so stdout keeps the summary."""
    print(f"[{100 * fraction:5.1f} %] {message}", file=sys.stderr, flush=True)


def _run_checkpoint(args: Any, env: BenchEnv) -> int:
    """Copy bandwidth, then the checkpoint's depth sweep; the JSON rewritten after every depth."""
    out = cli_io.ResultFile(Path(args.out))
    payload: dict[str, Any] = {
        "settings": {"checkpoint": args.checkpoint, "depths": args.depths, "device": str(env.device)},
        "versions": versions(),
        "device": env.snapshot.to_dict(),
        "complete": False,
        "stopped": False,
    }

    def sweep(should_stop: ShouldStop) -> checkpoint_bench.CheckpointResult:
        print_progress(0.0, "copy bandwidth")
        bw = measure_copy_bandwidth(env, PRESETS["cpu" if env.device.type != "cuda" else "small"].copy_bytes)
        payload["bandwidth"] = asdict(bw)

        def save(result: checkpoint_bench.CheckpointResult) -> None:
            payload["checkpoint"] = result.to_dict()
            payload["stopped"] = result.stopped
            out.write(to_json(payload))

        return checkpoint_bench.run_checkpoint(
            args.checkpoint, env, bw, args.depths, args.checkpoint_settings, print_progress, should_stop, save
        )

    try:
        with cli_io.StopOnSignal() as stop:
            result = run_exclusive(sweep, stop.is_set)
        if isinstance(result, Busy):
            print(result.message, file=sys.stderr)
            return 2
        payload["complete"] = not result.stopped
        out.write(to_json(payload))
    except CheckpointError as error:  # the weights themselves would not load (checked up front otherwise)
        cli_io.fail(PROG, str(error))
    except OSError as error:
        cli_io.fail(PROG, f"could not write {out.path}: {error.strerror or error}")
    finally:
        env.close()
    _print_checkpoint(result)
    print(f"wrote {out.path}")
    return stop.exit_code


def _print_checkpoint(r: checkpoint_bench.CheckpointResult) -> None:
    print(f"{r.name} ({r.family}, {r.params:,} parameters, {r.dtype}) on {r.device}")
    print(
        f"loader: {r.loader}; cache: {r.cache_kind}; copy bandwidth {r.bandwidth_bytes_per_s / 1e9:.1f} GB/s"
    )
    print(f"steps: {r.step_method}" + (f" ({r.graph_note})" if r.graph_note else ""))
    for p in r.points:
        print(
            f"  d={p.depth:>7}  {p.tokens_per_s:9.1f} ± {p.std_tokens_per_s:6.1f} t/s"
            f"  cache {p.cache_bytes / 1024**2:8.2f} MiB  bytes/token {p.bytes_per_token:,}"
            f"  roofline {p.predicted_tokens_per_s:10.1f}  ({p.percent_of_roofline:5.1f} %)"
            + ("  capped" if p.capped else "")
        )
    if r.oom_depth is not None:
        print(f"  d={r.oom_depth:>7}  {r.oom_message or 'out of memory'}")
    if r.stopped:
        print("(stopped early)")


def auto_preset(env: BenchEnv) -> str:
    """'cpu' without CUDA; on a GPU by its memory (preset_for_vram)."""
    if env.device.type != "cuda":
        return "cpu"
    return preset_for_vram(torch.cuda.get_device_properties(env.device).total_memory)


if __name__ == "__main__":
    sys.exit(main())
