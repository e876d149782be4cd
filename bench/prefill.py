"""Prefill on this CPU: causal attention (torch SDPA) against the chunked Gated DeltaNet, 1K to 32K tokens.

    python -m bench.prefill                                   # 1K … 32K tokens, 2 heads of 128, 1 thread
    python -m bench.prefill --quick                           # 1K, 2K and 4K only
    python -m bench.prefill --json docs/bench-runs/$(date -u +%F)-cpu-prefill.json
    python -m bench.prefill --lengths 1024,8192 --heads 4 --head-dim 64 --threads 2

One layer's mixing part reads a whole prompt (core/prefill: the projections cost both the same and are left
out). Prints, per prompt length, the median ms of each form, attention ÷ chunked (above 1: the chunked rule
is faster), the wall clock's medians, and the planner's bound for the same shapes: its FLOP count
(core/plan/flops.py) ÷ this CPU's measured fp32 matmul speed. On one thread the times are CPU time — the time
the work took, not the time other programs held the core — so a shared machine still gives steady figures. A 32K-token attention layer takes tens of seconds on one core, so each cell
stops repeating after --cell-seconds. Prints numbers only; the CPU may be shared, so expect noise.
"""

from __future__ import annotations

from pathlib import Path

from core.gpu.output.cli_io import (
    Parser,
    ResultFile,
    check_out_path,
    fail,
    increasing_list,
    positive_float,
    positive_int,
)
from core.prefill.measure import measure
from core.prefill.record import PrefillRun

PROG = "python -m bench.prefill"
FULL_LENGTHS = (1024, 2048, 4096, 8192, 16384, 32768)
QUICK_LENGTHS = (1024, 2048, 4096)


def lengths(text: str) -> tuple[int, ...]:
    """'1024,8192' → (1024, 8192): increasing whole numbers ≥ 1 (argparse type)."""
    return increasing_list(text, "token counts", 1, named="prompt lengths")


def table(run: PrefillRun) -> str:
    """The run as the CLI prints it: settings, then one line per prompt length — the medians by the clock the
    run reads (CPU time on one thread, core/prefill/record.py), the wall clock's beside them, the bound."""
    clock = "CPU time (one thread: the time the work took, not the time others held the core)"
    lines = [
        f"{run.machine}; torch {run.torch}, {run.threads} thread(s), {run.dtype}; one layer: {run.heads} heads "
        f"of {run.head_dim}, chunks of {run.chunk_size}; median of up to {run.repeats} runs "
        f"(fewer past {run.cell_seconds:g} s a cell); matmul {run.matmul_flops_per_s / 1e9:,.1f} GFLOP/s",
        f"times: {clock if run.clock == 'cpu' else 'the wall clock'}; the planner's bound = its FLOPs ÷ that matmul",
        f"{'tokens':>7}{'attention ms':>14}{'chunked ms':>12}{'ratio':>8}{'wall: attention':>17}{'chunked':>9}"
        f"{'bound: attention':>18}{'chunked':>9}",
    ]
    for row in run.rows:
        a, c = run.bound_ms(run.attention_flops(row.tokens)), run.bound_ms(run.chunked_flops(row.tokens))
        lines.append(
            f"{row.tokens:>7,}{run.ms(row, 'attention'):>14,.1f}{run.ms(row, 'chunked'):>12,.1f}"
            f"{run.ratio(row):>7.2f}x{row.median_ms('attention', 'wall'):>17,.1f}"
            f"{row.median_ms('chunked', 'wall'):>9,.1f}{a:>18,.1f}{c:>9,.1f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=lengths, default=None, help="prompt lengths, e.g. 1024,8192")
    parser.add_argument("--quick", action="store_true", help="1K, 2K and 4K tokens only")
    parser.add_argument("--heads", type=positive_int, default=2, help="heads in the layer (default 2)")
    parser.add_argument("--head-dim", type=positive_int, default=128, help="d_k = d_v per head (default 128)")
    parser.add_argument(
        "--chunk-size", type=positive_int, default=64, help="the chunked form's C (default 64)"
    )
    parser.add_argument(
        "--repeats", type=positive_int, default=3, help="timed runs per cell at most (default 3)"
    )
    parser.add_argument(
        "--cell-seconds",
        type=positive_float,
        default=10.0,
        help="stop repeating a cell after this (default 10)",
    )
    parser.add_argument(
        "--threads", type=positive_int, default=1, help="torch threads (default 1: shared CPU)"
    )
    parser.add_argument(
        "--json", type=Path, default=None, help="also write the run here (core/prefill/record.py)"
    )
    args = parser.parse_args(argv)
    if args.lengths and args.quick:
        fail(PROG, "give --lengths or --quick, not both")
    if args.json is not None and (why := check_out_path(args.json)):
        fail(PROG, why.replace("--out", "--json"))
    run = measure(
        args.lengths or (QUICK_LENGTHS if args.quick else FULL_LENGTHS), args.heads, args.head_dim,
        chunk_size=args.chunk_size, repeats=args.repeats, cell_seconds=args.cell_seconds, n_threads=args.threads,
    )  # fmt: skip
    print(table(run))
    if args.json is not None:
        ResultFile(args.json).write(run.to_json())
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
