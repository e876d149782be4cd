"""The flags of `python -m core.gpu.bench`, each checked before anything is measured (one-line error, exit 2)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import torch

from core.gpu.decode.ffn import MOE_WAYS
from core.gpu.decode.models import MOE_PART, STATE_PART, STATE_WAYS, part_way
from core.gpu.decode.pair_shapes import PATTERN
from core.gpu.output import cli_io
from core.gpu.presets import PRESETS
from core.gpu.suites import batch_bench, checkpoint_bench
from core.gpu.suites.moe_sizing import SHAPES
from core.models.hf_tokenizer import CheckpointError

PROG = "python -m core.gpu.bench"
DESCRIPTION = "Your GPU's decode benchmarks, headless: the whole suite and its CLI."

# The ways a step can run besides the PyTorch one (core.gpu.decode.ffn.MOE_WAYS, core.gpu.decode.models.STATE_WAYS),
# each named in its part ('moe:triton') or, bare, in every part that has it ('triton': core.gpu.timing.ways).
NEWER_WAYS = (
    *dict.fromkeys([*MOE_WAYS[1:], *STATE_WAYS[1:]]),
    *(part_way(MOE_PART, w) for w in MOE_WAYS[1:]),
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
    return cli_io.increasing_list(text, "batches", 1)


def _pair_layers(text: str) -> int:
    """A layer count for the released pair: a whole multiple of PATTERN (argparse type)."""
    layers = cli_io.positive_int(text)
    if layers % PATTERN:
        raise argparse.ArgumentTypeError(f"{text!r}: a multiple of {PATTERN} (the hybrid's 3:1 pattern)")
    return layers


def parse_args(argv: list[str] | None) -> Any:
    """Parse and check every argument before anything is measured (one-line error, exit 2)."""
    parser = cli_io.Parser(prog=PROG, description=DESCRIPTION)
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
        "--moe-shape",
        choices=SHAPES,
        default=None,
        help="dense vs MoE with a released MoE's experts: 'fine' (Qwen3.5-MoE's, 6 MiB in bf16) or 'large' "
        "(DeepSeek-V3's, 84 MiB); on a GPU as its free memory holds, on a CPU a few",
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
        "--batch-pair",
        choices=batch_bench.PAIRS,
        default=None,
        help="the --batch sweep's models: 'released' (Qwen3-8B against Qwen3.5-9B shapes, random weights) or "
        "'synthetic' (the preset's full attention against a pure fixed state); default: the preset's",
    )
    parser.add_argument(
        "--pair-layers",
        type=_pair_layers,
        default=None,
        help=f"the released pair with this many layers (a multiple of {PATTERN}; each layer's shapes as released; "
        "default: the preset's)",
    )
    parser.add_argument(
        "--pair-vocab",
        type=cli_io.positive_int,
        default=None,
        help="the released pair with at most this vocabulary (default: the preset's)",
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
