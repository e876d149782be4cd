"""Milliseconds per generated token with and without a KV cache, by context length.

    python bench/generation.py [--repeats 7] [--threads 1]

Method (llama-bench style): for each context d, fill the cache to d − 1 positions
(untimed), then time one single-token step; without a cache, time one forward pass
over all d positions — what GPT-2's original sampling loop did for every token.
Median of `repeats` timed steps after warm-up. The shipped checkpoint's window is
256 bytes, so contexts up to 1024 use a same-shape *untrained* model with a
1024-position table: speed depends on shapes, not on what the weights learned.
Prints numbers; never passes or fails.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.models.gpt2 import GPT2, GPT2Config  # noqa: E402

CONTEXTS = (64, 128, 256, 512, 1024)


@torch.no_grad()
def step_ms(model: GPT2, context: int, use_cache: bool, repeats: int, warmup: int = 2) -> float:
    """Median wall time (ms) of the step that reads `context` positions."""
    gen = torch.Generator().manual_seed(context)
    times = []
    for i in range(warmup + repeats):
        ids = torch.randint(0, 256, (1, context), generator=gen)  # (1, d)
        if use_cache:
            cache = model.new_cache()
            model(ids[:, :-1], cache)  # untimed prefill of d − 1 positions
            started = time.perf_counter()
            model(ids[:, -1:], cache)  # one new position against d − 1 cached ones
        else:
            started = time.perf_counter()
            model(ids)  # all d positions again
        if i >= warmup:
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    shipped = GPT2Config()
    config = GPT2Config(block_size=max(CONTEXTS))
    model = GPT2(config).eval()
    print(
        f"tiny GPT-2 shape: {config.n_layer} layers x {config.n_head} heads x d_model {config.d_model}, "
        f"{model.num_params():,} parameters, fp32, {args.threads} CPU thread(s)\n"
        f"note: the shipped checkpoint's window is {shipped.block_size} bytes; this bench uses a same-shape "
        f"UNTRAINED model with a {config.block_size}-position table (speed depends on shape, not weights)\n"
        f"median of {args.repeats} timed single-token steps after 2 warm-ups\n"
    )
    print(f"{'context':>8} {'no cache ms/token':>18} {'KV cache ms/token':>18} {'ratio':>8}")
    for context in CONTEXTS:
        plain = step_ms(model, context, use_cache=False, repeats=args.repeats)
        cached = step_ms(model, context, use_cache=True, repeats=args.repeats)
        print(f"{context:>8} {plain:>18.2f} {cached:>18.2f} {plain / cached:>7.1f}x")


if __name__ == "__main__":
    main()
