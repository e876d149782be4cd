"""`python -m bench.gpu_validate`: the flags, the checks in the order they run, and the summary."""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from pathlib import Path

import torch

import bench.gpu_validate as package
from bench.gpu_validate import (
    step1_decode,
    step2_bandwidth,
    step3_spill,
    step4_energy,
    step5_batch,
    step6_newer_kernels,
    step7_end_to_end,
)
from bench.gpu_validate.runner import CHECK5_MARGIN_S, DEFAULT_BUDGET_S, STOP_GRACE_S, Validator
from bench.gpu_validate.sizes import DRY, GPU
from core.gpu.output import cli_io
from core.gpu.timing.bench_env import make_env

PROG = "python -m bench.gpu_validate"
RUN_ORDER = (step1_decode, step2_bandwidth, step3_spill, step4_energy, step5_batch, step6_newer_kernels,
             step7_end_to_end)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = cli_io.Parser(prog=PROG, description=package.__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder for validate.json and bench.json")
    parser.add_argument(
        "--cpu-ok", action="store_true", help="without a GPU, do a dry run on the CPU (tiny sizes)"
    )
    parser.add_argument(
        "--budget-seconds",
        type=cli_io.positive_float,
        default=DEFAULT_BUDGET_S,
        help=f"whole-run time budget; check 5 may overrun it by at most {STOP_GRACE_S - CHECK5_MARGIN_S:.0f} s "
        "(the time its benchmark gets to stop cleanly)",
    )
    parser.add_argument(
        "--checks",
        default="1,2,3,4,5,6,7",
        help="which checks to run, e.g. 1,3 (they run as 1, 2, 3, 4, 7, 6, 5)",
    )
    parser.add_argument("--child-reference", default=None, help=argparse.SUPPRESS)  # check 6's own process
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    if not cuda and not args.cpu_ok:
        cli_io.fail(PROG, "this PyTorch sees no CUDA GPU; pass --cpu-ok for a CPU dry run")
    chosen = {c.strip() for c in args.checks.split(",") if c.strip()}
    if not chosen or not chosen <= set("1234567"):
        cli_io.fail(PROG, f"--checks {args.checks!r}: pick from 1,2,3,4,5,6,7")
    why = cli_io.check_out_path(Path(args.out), is_dir=True)
    if why:
        cli_io.fail(PROG, why)
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    if not cuda:
        torch.set_num_threads(1)
        os.environ.setdefault("TRITON_INTERPRET", "1")  # the Triton MoE's parity check, interpreted
    env = make_env("cuda" if cuda else "cpu")
    try:
        with cli_io.StopOnSignal() as stop:
            v = Validator(env, GPU if cuda else DRY, folder, args.budget_seconds, stop)
            six = step6_newer_kernels.run
            if args.child_reference:  # this is check 6's process: run it here, from check 1's runs
                v.load_reference(Path(args.child_reference))
                six = step6_newer_kernels.run_here
            v.save()  # the device and versions are on disk before anything can go wrong
            print(
                f"{PROG}: {v.out['mode']} on {env.device_label} ({env.dtype}); JSON in {folder}/validate.json"
            )
            for step in RUN_ORDER:
                if step.CHECK in chosen:
                    v.run(step.NAME, partial(six if step is step6_newer_kernels else step.run, v))
            v.save()
    finally:
        env.close()  # pairs make_env's nvmlInit
    summary = v.out["summary"]
    print(
        f"\n{summary['PASS']} passed, {summary['FAIL']} failed, {summary['SKIP']} skipped (need a GPU), "
        f"{summary['INFO']} recorded without a range"
    )
    if stop.exit_code:
        return stop.exit_code
    return 1 if summary["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
