"""Recurrent (token by token) vs chunked (WY / UT transform) time for each fixed-size-memory rule.

Run from the repo root:  python -m bench.chunked [--quick] [--threads N] [--repeats R] [--chunk-size C]

B = 1, H = 4, K = V = 64, fp32, keys L2-normalised, T in 512 … 8192. Prints the median of a few
repeats per form and the ratio recurrent / chunked (higher = chunked is faster); also the largest
difference between the two outputs, so a fast-but-wrong chunked form shows up in the table.
Prints numbers only — never passes or fails. The CPU may be shared, so expect noise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a plain script too

from core.ops import delta_rule, gated_delta_rule, kda, linear_attention  # noqa: E402

B, H, K, V = 1, 4, 64, 64
FULL_LENGTHS = (512, 1024, 2048, 4096, 8192)
QUICK_LENGTHS = (512, 2048, 4096)


def make_inputs(T: int, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(B, T, H, K, generator=gen)  # (B, T, H, K)
    k = F.normalize(torch.randn(B, T, H, K, generator=gen), dim=-1)  # (B, T, H, K) unit keys
    v = torch.randn(B, T, H, V, generator=gen)  # (B, T, H, V)
    beta = torch.rand(B, T, H, generator=gen)  # (B, T, H)
    g = -0.1 * torch.rand(B, T, H, generator=gen)  # (B, T, H) log-decay per head
    gk = -0.1 * torch.rand(B, T, H, K, generator=gen)  # (B, T, H, K) log-decay per channel
    return {"q": q, "k": k, "v": v, "beta": beta, "g": g, "gk": gk}


def rules(x: dict[str, torch.Tensor], chunk_size: int) -> dict[str, tuple[Callable, Callable]]:
    """name → (recurrent call, chunked call), each returning (o, final_state)."""
    q, k, v, beta, g, gk = x["q"], x["k"], x["v"], x["beta"], x["g"], x["gk"]
    return {
        "linear attention": (
            lambda: linear_attention.recurrent(q, k, v),
            lambda: linear_attention.chunk(q, k, v, chunk_size=chunk_size),
        ),
        "delta rule": (
            lambda: delta_rule.recurrent(q, k, v, beta=beta),
            lambda: delta_rule.chunk(q, k, v, beta=beta, chunk_size=chunk_size),
        ),
        "gated delta": (
            lambda: gated_delta_rule.recurrent(q, k, v, beta=beta, g=g),
            lambda: gated_delta_rule.chunk(q, k, v, beta=beta, g=g, chunk_size=chunk_size),
        ),
        "KDA": (
            lambda: kda.recurrent(q, k, v, beta=beta, g=gk),
            lambda: kda.chunk(q, k, v, beta=beta, g=gk, chunk_size=chunk_size),
        ),
    }


def median_seconds(fn: Callable, repeats: int) -> tuple[float, tuple[torch.Tensor, torch.Tensor]]:
    result = fn()  # warm-up (allocator, first-call overheads)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


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
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    lengths = QUICK_LENGTHS if args.quick else FULL_LENGTHS
    repeats = args.repeats or (3 if args.quick else 5)
    print(
        f"B={B} H={H} K={K} V={V} fp32, chunk_size={args.chunk_size}, threads={torch.get_num_threads()}, "
        f"median of {repeats} (torch {torch.__version__})"
    )
    header = f"{'rule':<17}{'T':>6}{'recurrent ms':>14}{'chunked ms':>12}{'ratio':>8}{'max |diff|':>12}"
    print(header)
    print("-" * len(header))
    with torch.inference_mode():
        for name in ("linear attention", "delta rule", "gated delta", "KDA"):
            for T in lengths:
                recurrent_fn, chunk_fn = rules(make_inputs(T), args.chunk_size)[name]
                t_rec, (o_rec, s_rec) = median_seconds(recurrent_fn, repeats)
                t_chk, (o_chk, s_chk) = median_seconds(chunk_fn, repeats)
                diff = max((o_rec - o_chk).abs().max().item(), (s_rec - s_chk).abs().max().item())
                print(
                    f"{name:<17}{T:>6}{1e3 * t_rec:>14.1f}{1e3 * t_chk:>12.1f}"
                    f"{t_rec / t_chk:>7.1f}x{diff:>12.1e}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
