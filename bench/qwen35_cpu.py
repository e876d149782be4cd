"""Qwen3.5 decode speed on this CPU at batch 1, beside the memory roofline, in fp32 and bf16.

    .venv/bin/python -m bench.qwen35_cpu ~/models/Qwen3.5-0.8B          # a released folder
    .venv/bin/python -m bench.qwen35_cpu --tiny                         # the tests' tiny random folder
    .venv/bin/python -m bench.qwen35_cpu --tiny --size hidden_size=1024 --size intermediate_size=3584
    .venv/bin/python -m bench.qwen35_cpu --tiny --widths 0.8b           # every 0.8B width, 4 layers
    .venv/bin/python -m bench.qwen35_cpu --tiny --widths 0.8b --step eager   # the readable step instead

The model is the course's own (core/models/qwen35.py). After an untimed prompt of `--depth` tokens
(read through the chunked form) and a warm-up, `--tokens` single-token steps are timed: by default
the lean step a decoder runs (core/models/qwen35_lean.py over the static cache of
core/models/qwen35_static.py: the same maths in fewer ops, as the GPU checkpoint bench runs it), or with
`--step eager` the readable step the pages trace (`Qwen35.next_logits`: Gated DeltaNet layers through
core/ops/gated_delta_rule.step, a KV cache that grows).

The roofline is this CPU's measured copy bandwidth (bench/gpu_validate/probes.copy_bandwidth: read + write
bytes per second of a buffer far larger than the caches) ÷ the bytes one step must read
(core/roofline.decode_bytes_per_token: every weight but the input table, the KV cache at that depth, the
boards read and written back). A decode step is a chain of matrix × vector products, so it can go no
faster than that: the percentage says how close the course's code comes. Beside it, two shares that say
what the rest of a step costs: "of GEMV" — the step's bytes at torch's own matrix × vector read speed
(`F.linear` on one token through a matrix far larger than the caches: what any PyTorch decoder gets
here) over the step's time, which passes 100 % where the step's products beat F.linear (on a CPU in bf16
they are oneDNN's packed ones, core/models/qwen35_lean_weights.Matrix); "of own" — the step's own matrix
products alone, the same calls the step makes, over the whole step. Each
timed step is paired with one timing of each, a few milliseconds later, and the shares are medians over
the pairs, so a machine shared with other work skews them less than it skews tokens/s. Last, the
operations one step calls (torch.profiler's top-level aten ops, core/gpu/timing/kernels.py) and the floor
they set at the planner's 3 µs a kernel.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from bench.gpu_validate.probes import copy_bandwidth
from core.gpu.timing.kernels import count_step, kernel_floor_s
from core.models.hf_qwen35 import read_config
from core.models.hf_tokenizer import CheckpointError
from core.models.qwen35 import load_qwen35
from core.models.qwen35_lean_weights import matrices, prepare, times
from core.models.qwen35_static import new_static_cache, run_static
from core.roofline import bandwidth_bound_tokens_per_s, decode_bytes_per_token

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}  # short names; torch's own (float32, bfloat16) too
DTYPE_NAMES = DTYPES | {str(t).removeprefix("torch."): t for t in DTYPES.values()}
COPY_BYTES = 512 * 1024**2  # far beyond any CPU's last-level cache
GEMV_SHAPE = (16384, 4096)  # (out, in): 256 MiB in fp32, 128 MiB in bf16, read from memory, not a cache
STEPS = (
    "lean",
    "eager",
)  # the decoder's step (core/models/qwen35_lean.py) or the pages' (Qwen35.next_logits)
WIDTHS = {  # --widths: a released model's text sizes for the tiny folder (its layer count and vocabulary stay tiny)
    "0.8b": dict(
        hidden_size=1024, intermediate_size=3584, num_attention_heads=8, num_key_value_heads=2, head_dim=256,
        linear_num_key_heads=16, linear_num_value_heads=16, linear_key_head_dim=128, linear_value_head_dim=128,
    ),  # assets/configs/qwen3_5_0_8b.json
}  # fmt: skip


def cpu_bf16_units() -> list[str]:
    """This CPU's bf16 matrix instructions, from /proc/cpuinfo (empty: bf16 is converted to fp32 in software)."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split("flags", 2)[1].split("\n", 1)[0].split()
    except (OSError, IndexError):
        return []
    return [f for f in ("avx512_bf16", "amx_bf16", "avx_vnni") if f in flags]


def gemv_probe(dtype: torch.dtype) -> tuple[Callable[[], object], int]:
    """One token's `F.linear` through a matrix far larger than the caches (the model's layout, (out, in)),
    and the weight bytes it reads: what any PyTorch decoder's matrix × vector gets on this CPU."""
    weight = torch.randn(GEMV_SHAPE).to(dtype)
    x = torch.randn(1, GEMV_SHAPE[1]).to(dtype)
    return (lambda: torch.nn.functional.linear(x, weight)), weight.numel() * weight.element_size()


def own_products(model) -> Callable[[], object]:
    """The step's own matrix products alone: each of the model's matrices times a vector, as one lean step
    multiplies them (core.models.qwen35_lean.matrices), with nothing between them."""
    mats = matrices(prepare(model))
    xs = [torch.randn(1, w.dense.shape[0]).to(w.dense.dtype) for w in mats]
    return lambda: [times(x, w) for x, w in zip(xs, mats, strict=True)]


def seconds(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _decoder(model, step: str, room: int):
    """(read a prompt → last logits, one token → logits) over a fresh cache, for `step`."""
    if step == "eager":
        cache = model.new_cache()
        return (lambda prompt: model.prefill(prompt, cache)[-1]), (lambda t: model.next_logits(t, cache))
    static = new_static_cache(model, room)
    return (
        lambda prompt: run_static(model, torch.tensor([prompt]), static)[0, -1],
        lambda t: run_static(model, torch.tensor([[t]]), static)[0, 0],
    )


def measure(
    folder: Path, dtype: torch.dtype, depth: int, tokens: int, repeats: int, step: str = "lean"
) -> dict:
    """Load `folder` in `dtype`, read `depth` prompt tokens, then time `tokens` decode steps `repeats` times;
    then count the operations of one more step.

    Every timed step is followed by one timed read of the GEMV probe and one pass of the model's own matrix
    products: on a shared machine a busy moment slows both sides of a pair alike, so the shares of GEMV are
    medians over those pairs, each a ratio of two timings taken a few milliseconds apart."""
    loaded = load_qwen35(folder, dtype)
    model = loaded.model
    prompt = [(7 * i + 3) % loaded.tokenizer.vocab_size for i in range(max(depth, 1))]
    room = len(prompt) + 3 + tokens + 1  # the prompt, the warm-up, the timed steps, the counted one
    context = len(prompt) + 3 + tokens // 2  # the middle of the timed steps
    element = torch.tensor([], dtype=dtype).element_size()
    bytes_per_token = decode_bytes_per_token(loaded.spec, context, element, element, 4)
    probe, probe_bytes = gemv_probe(dtype)
    own = own_products(model)
    probe(), own()  # warm
    runs, gemv_speeds, of_gemv, of_own = [], [], [], []
    for _ in range(repeats):
        prefill, next_logits = _decoder(model, step, room)
        logits = prefill(prompt)
        for _ in range(3):  # warm-up: the first steps allocate
            logits = next_logits(int(logits.argmax()))
        total = 0.0
        for _ in range(tokens):
            started = time.perf_counter()
            logits = next_logits(int(logits.argmax()))
            step_s = time.perf_counter() - started
            total += step_s
            gemv_speed = probe_bytes / seconds(probe)
            gemv_speeds.append(gemv_speed)
            of_gemv.append(100 * bytes_per_token / (gemv_speed * step_s))  # the step's bytes at GEMV speed
            of_own.append(100 * seconds(own) / step_s)
        runs.append(tokens / total)
    ops, _how = count_step(lambda: next_logits(int(logits.argmax())), torch.device("cpu"))
    return {
        "dtype": str(dtype).removeprefix("torch."),
        "step": step,
        "tokens_per_s": max(runs),  # best run, as the copy bandwidth is its best run
        "median_tokens_per_s": statistics.median(runs),
        "runs": runs,
        "bytes_per_token": bytes_per_token,
        "gemv_bandwidth": statistics.median(
            gemv_speeds
        ),  # torch's matrix × vector here: the practical ceiling
        "percent_of_gemv": statistics.median(of_gemv),  # median over (step, probe) pairs
        "percent_of_own_products": statistics.median(of_own),  # its matrix products alone ÷ the whole step
        "params": model.num_params(),
        "ops_per_step": ops,  # top-level aten ops of one step (core/gpu/timing/kernels.py)
        "ops_per_layer": ops / model.config.num_layers,
        "kernel_floor_s": kernel_floor_s(ops),  # the ops one after another at the planner's 3 µs each
        "packed_products": any(w.packed is not None for w in matrices(prepare(model))),  # oneDNN's (Matrix)
    }


def dtype_list(text: str) -> list[torch.dtype]:
    """`--dtypes`: comma-separated names, short (fp32, bf16) or torch's (float32, bfloat16)."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in DTYPE_NAMES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown dtype {', '.join(unknown) or repr(text)}; use {', '.join(DTYPE_NAMES)}"
        )
    return [DTYPE_NAMES[name] for name in names]


def size_field(text: str) -> tuple[str, int]:
    """`--size FIELD=N`: a text-config size and a positive whole number."""
    name, sep, value = text.partition("=")
    if not (sep and name.strip() and value.strip().isdigit() and int(value) > 0):
        raise argparse.ArgumentTypeError(f"expected FIELD=N with N a positive whole number, got {text!r}")
    return name.strip(), int(value)


def at_least(minimum: int):
    """An argparse type: a whole number ≥ `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "folder", nargs="?", help="a Qwen3.5 checkpoint folder (config.json, safetensors, tokenizer.json)"
    )
    parser.add_argument("--tiny", action="store_true", help="build the tiny random test folder in a temp dir")
    parser.add_argument("--size", action="append", default=[], metavar="FIELD=N", type=size_field,
                        help="with --tiny: a text-config size, e.g. hidden_size=1024 (repeatable)")  # fmt: skip
    parser.add_argument("--widths", choices=sorted(WIDTHS),
                        help="with --tiny: a released model's widths (--size after it changes one)")  # fmt: skip
    parser.add_argument("--step", choices=STEPS, default="lean",
                        help="lean: the decoder's step over a static cache (default); eager: the pages' step")  # fmt: skip
    parser.add_argument("--dtypes", default="fp32,bf16", type=dtype_list,
                        help="comma-separated: fp32, bf16 (or float32, bfloat16)")  # fmt: skip
    parser.add_argument("--depth", type=at_least(0), default=64, help="prompt tokens read before timing")
    parser.add_argument("--tokens", type=at_least(1), default=32, help="timed decode steps per run")
    parser.add_argument("--repeats", type=at_least(1), default=3)
    parser.add_argument("--threads", type=at_least(1), help="torch CPU threads (default: torch's own choice)")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args(argv)
    if bool(args.folder) == args.tiny:
        parser.error("give a folder or --tiny")
    if (args.size or args.widths) and not args.tiny:
        parser.error("--size and --widths go with --tiny")
    if args.folder:
        try:
            read_config(args.folder)  # a folder that is not a Qwen3.5 checkpoint: one line, before timing
        except CheckpointError as error:
            parser.error(str(error))
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        sizes = [*WIDTHS.get(args.widths, {}).items(), *args.size]
        folder = Path(args.folder) if args.folder else _tiny(Path(tmp) / "qwen35", sizes, parser)
        bandwidth = copy_bandwidth(torch.device("cpu"), COPY_BYTES)
        print(
            f"folder {folder}  threads {torch.get_num_threads()}  copy bandwidth {bandwidth / 1e9:.1f} GB/s"
            f"  step {args.step}"
        )
        try:
            rows = [
                measure(folder, dtype, args.depth, args.tokens, args.repeats, args.step)
                for dtype in args.dtypes
            ]
        except CheckpointError as error:
            parser.error(str(error))
    print(
        f"{'dtype':<10}{'tokens/s':>9}{'(median)':>10}{'MB read/token':>15}{'roofline tok/s':>16}"
        f"{'of roofline':>13}{'GEMV GB/s':>11}{'of GEMV':>9}{'of own':>8}{'ops/step':>10}{'op floor ms':>13}"
    )
    for row in rows:
        row["roofline_tokens_per_s"] = bandwidth_bound_tokens_per_s(row["bytes_per_token"], bandwidth)
        row["percent_of_roofline"] = 100 * row["tokens_per_s"] / row["roofline_tokens_per_s"]
        print(f"{row['dtype']:<10}{row['tokens_per_s']:>9.1f}{row['median_tokens_per_s']:>10.1f}"
              f"{row['bytes_per_token'] / 1e6:>15.2f}{row['roofline_tokens_per_s']:>16.1f}"
              f"{row['percent_of_roofline']:>12.0f}%{row['gemv_bandwidth'] / 1e9:>11.1f}"
              f"{row['percent_of_gemv']:>8.0f}%{row.get('percent_of_own_products', 0):>7.0f}%"
              f"{row.get('ops_per_step', 0):>10,}"
              f"{1000 * row.get('kernel_floor_s', 0.0):>13.2f}")  # fmt: skip
    print(verdict(rows))
    if args.out:
        report = {
            "folder": str(folder),
            "copy_bandwidth": bandwidth,
            "bf16_units": cpu_bf16_units(),
            "rows": rows,
        }
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


def verdict(rows: list[dict]) -> str:
    """Which dtype decoded faster here, by how much, and the CPU fact that explains it — from the figures."""
    if len(rows) < 2:
        return ""
    fast, slow = sorted(rows, key=lambda r: -r["tokens_per_s"])[:2]
    ratio = fast["tokens_per_s"] / slow["tokens_per_s"]
    units = cpu_bf16_units()
    bf16_hw = (
        f"this CPU has bf16 instructions ({', '.join(units)})"
        if units
        else "this CPU has no bf16 instructions"
    )
    return (
        f"{fast['dtype']} is {ratio:.2f}× faster than {slow['dtype']} here; bf16 reads half the bytes, "
        f"{bf16_hw}; the faster run reaches {fast['percent_of_roofline']:.0f}% of its roofline, "
        f"limited by {_limit(fast)}."
    )


def _limit(row: dict) -> str:
    """What holds a run back, from its own figures: memory, torch's matrix × vector, or the rest of a step."""
    if row["percent_of_roofline"] >= 50:
        return "memory bandwidth"
    gemv = row.get("percent_of_gemv", 0)
    if gemv >= 70:
        beyond = ", its products being oneDNN's packed ones" if row.get("packed_products") else ""
        return (
            f"its matrix × vector products: the step moves its bytes at {gemv:.0f}% of torch's F.linear "
            f"read speed here ({row['gemv_bandwidth'] / 1e9:.1f} GB/s){beyond}"
        )
    return "the work of a step outside its matrix products (small ops, per-op overhead)"


def _tiny(folder: Path, sizes: list[tuple[str, int]], parser: argparse.ArgumentParser) -> Path:
    """The tests' tiny random folder with `sizes` changed; a size it does not have is refused (exit 2)."""
    from bench.hf_tiny_qwen35 import TEXT, make_checkpoint

    unknown = [name for name, _ in sizes if name not in TEXT]
    if unknown:
        parser.error(f"--size {unknown[0]}: the tiny folder has no such size; it has {', '.join(TEXT)}")
    try:
        return make_checkpoint(folder, **dict(sizes))
    except (ValueError, CheckpointError) as error:  # sizes that do not fit together
        parser.error(f"--size: {str(error).splitlines()[0]}")


if __name__ == "__main__":
    raise SystemExit(main())
