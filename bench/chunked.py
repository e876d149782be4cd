"""Recurrent (token by token) vs chunked (WY / UT transform) time for each fixed-size-memory rule.

Run from the repo root:  python -m bench.chunked [--quick] [--threads N] [--repeats R] [--chunk-size C]

Every rule of the registry (core/mechanisms.py), on the shared inputs of core/ops/inputs.py:
B = 1, H = 4, K = V = 64, fp32, keys L2-normalised, T in 512 … 8192. Prints the median of a few
repeats per form and the ratio recurrent / chunked (higher = chunked is faster); also the largest
difference between the two outputs, so a fast-but-wrong chunked form shows up in the table.
Prints numbers only — never passes or fails. The CPU may be shared, so expect noise.
"""

from __future__ import annotations

import argparse

import torch

from core.mechanisms import RULES
from core.ops.forms import max_difference, median_ms, run_form
from core.ops.inputs import random_inputs

B, H, K, V = 1, 4, 64, 64
FULL_LENGTHS = (512, 1024, 2048, 4096, 8192)
QUICK_LENGTHS = (512, 2048, 4096)


def make_inputs(T: int, seed: int = 0) -> dict[str, torch.Tensor]:
    return random_inputs(T, dtype=torch.float32, seed=seed, b=B, h=H, k_dim=K, v_dim=V)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer lengths (512, 2048, 4096) and repeats")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch.set_num_threads (default 1: the CPU is shared)"
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed repeats per form (default 5, quick 3)"
    )
    parser.add_argument("--chunk-size", type=int, default=64)
    parser.add_argument(
        "--lengths", type=int, nargs="+", default=None, help="sequence lengths T (overrides --quick's)"
    )
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    lengths = args.lengths or (QUICK_LENGTHS if args.quick else FULL_LENGTHS)
    repeats = args.repeats or (3 if args.quick else 5)
    print(
        f"B={B} H={H} K={K} V={V} fp32, chunk_size={args.chunk_size}, threads={torch.get_num_threads()}, "
        f"median of {repeats} (torch {torch.__version__})"
    )
    header = f"{'rule':<17}{'T':>6}{'recurrent ms':>14}{'chunked ms':>12}{'ratio':>8}{'max |diff|':>12}"
    print(header)
    print("-" * len(header))
    with torch.inference_mode():
        for key, mech in RULES.items():
            for T in lengths:
                x = make_inputs(T)
                ms_rec, recurrent = median_ms(lambda x=x, key=key: run_form(key, x), repeats)
                ms_chk, chunked = median_ms(lambda x=x, key=key: run_form(key, x, args.chunk_size), repeats)
                print(
                    f"{mech.short:<17}{T:>6}{ms_rec:>14.1f}{ms_chk:>12.1f}"
                    f"{ms_rec / ms_chk:>7.1f}x{max_difference(recurrent, chunked):>12.1e}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
