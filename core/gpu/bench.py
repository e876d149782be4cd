"""Your GPU's decode benchmarks, headless: the whole suite and its CLI.

`python -m core.gpu.bench --preset tiny --out results.json` measures the copy bandwidth,
context vs speed (core.gpu.suites.context_bench; again under a VRAM budget if one is given) and
dense vs experts (core.gpu.suites.moe_bench), one benchmark per machine (core.gpu.serving.runner),
all through one pipeline (core.gpu.pipeline) into one typed result (core.gpu.output.result). Method:
llama-bench (ggml-org/llama.cpp tools/llama-bench; docs/sources.md §6.1, §6.5),
timed in core.gpu.timing, eager and (on CUDA) as replayed CUDA graphs.

It runs wherever a CUDA PyTorch does: it needs torch, numpy and nvidia-ml-py only (no
Streamlit, no plotly). Every argument is checked before anything is measured (one-line
error, exit status 2). The JSON is rewritten after every part and every depth, so a run
that is killed or times out keeps what it measured; Ctrl-C or SIGTERM stops it cleanly
(core.gpu.output.cli_io), marks the result stopped and exits 128 + the signal number.

`python -m core.gpu.bench --checkpoint FOLDER` times a real checkpoint instead (GPT-2 in the
course's module; Qwen3 and Qwen3.5 in the course's modules, graph-captured on CUDA; Llama, Mistral,
Qwen2 through transformers, an optional extra):
decode speed vs depth with its own KV cache, beside the roofline of its config
(core.gpu.suites.checkpoint_bench). A folder that is not a usable checkpoint, or a depth beyond its
window, is refused before anything loads.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from core.gpu import pipeline
from core.gpu.bench_args import NEWER_WAYS, PROG, parse_args
from core.gpu.decode.models import preset_summary
from core.gpu.output import cli_io
from core.gpu.output.result import SuiteResult
from core.gpu.output.summary import print_checkpoint, print_summary
from core.gpu.pipeline import CheckpointSpec, SuiteSpec
from core.gpu.presets import PRESETS, Preset, preset_for_vram
from core.gpu.serving.runner import Busy, run_exclusive
from core.gpu.timing.bench_env import BenchEnv, make_env
from core.models.hf_tokenizer import CheckpointError

__all__ = ["NEWER_WAYS", "PROG", "auto_preset", "main", "parse_args", "print_progress", "suite_spec"]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.check:
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    env = make_env(args.device)
    if args.checkpoint is not None:
        spec = SuiteSpec(checkpoint=CheckpointSpec(args.checkpoint, args.depths, args.checkpoint_settings))
    else:
        spec = suite_spec(args, PRESETS[auto_preset(env) if args.preset == "auto" else args.preset])
        print(f"preset {spec.preset.name}: {preset_summary(spec.preset, env.dtype)}", flush=True)
    out = cli_io.ResultFile(Path(args.out))
    try:
        with cli_io.StopOnSignal() as stop:
            result = run_exclusive(
                pipeline.run, spec, env, print_progress, stop.is_set, lambda r: out.write(r.to_json())
            )
        if isinstance(result, Busy):
            print(result.message, file=sys.stderr)
            return 2
        out.write(result.to_json())
    except CheckpointError as error:  # the weights themselves would not load (checked up front otherwise)
        cli_io.fail(PROG, str(error))
    except OSError as error:  # the results file became unwritable during the run (disk full, removed)
        cli_io.fail(PROG, f"could not write {out.path}: {error.strerror or error}")
    finally:
        env.close()
    _print(result)
    print(f"wrote {out.path}")
    return stop.exit_code


def suite_spec(args: Any, preset: Preset) -> SuiteSpec:
    """The preset's suite as the flags ask for it: the preset changed by them, then the parts."""
    changes: dict[str, Any] = {}
    if args.depth_seconds is not None:
        changes["depth_seconds"] = args.depth_seconds
    if args.depths is not None:
        changes["depths"] = args.depths
    if args.eager_only:
        changes["use_graphs"] = False
    if args.skip_ways:
        changes["skip_ways"] = args.skip_ways
    if args.batch_pair is not None:
        changes["batch_pair"] = args.batch_pair
    if args.pair_layers is not None:
        changes["pair_layers"] = args.pair_layers
    if args.pair_vocab is not None:
        changes["pair_vocab"] = args.pair_vocab
    return SuiteSpec(
        replace(preset, **changes),
        vram_budget_bytes=None if args.vram_budget_gb is None else int(args.vram_budget_gb * 1024**3),
        cpu_layers=not args.no_cpu_layers,
        moe=not args.no_moe,
        moe_sized_by_card=args.moe_sized_by_card,
        moe_shape=args.moe_shape,
        retime_dense=args.retime_dense,
        batches=args.batch,
        batch_depth=args.batch_depth,
    )


def _print(result: SuiteResult) -> None:
    if result.checkpoint is not None:
        print_checkpoint(result.checkpoint)
    else:
        print_summary(result)


def print_progress(fraction: float, message: str) -> None:
    """The CLI's progress line, on stderr so stdout keeps the summary."""
    print(f"[{100 * fraction:5.1f} %] {message}", file=sys.stderr, flush=True)


def auto_preset(env: BenchEnv) -> str:
    """'cpu' without CUDA; on a GPU by its memory (preset_for_vram)."""
    if env.device.type != "cuda":
        return "cpu"
    return preset_for_vram(torch.cuda.get_device_properties(env.device).total_memory)


if __name__ == "__main__":
    sys.exit(main())
