"""Dense vs Mixture-of-Experts on this CPU, experts shaped like released ones: MoE ÷ dense speed against their byte ratio.

    python -m bench.moe                          # both shapes, fine then large (about a minute on two cores)
    python -m bench.moe --shape fine --tokens 16

Each shape's experts are a released MoE's, read from its config (core.gpu.suites.moe_sizing): `fine`,
Qwen3.5-MoE's (2,048 × 512, 6 MiB in bf16) and `large`, DeepSeek-V3's (7,168 × 2,048, 84 MiB in bf16),
SwiGLU with three matrices. The counts are cut so a CPU runs them in seconds (`moe_sizing.CPU_COUNTS`);
each expert keeps its released shape (in fp32 here: twice its bf16 bytes). The models are stacks of
feed-forward layers only (core.gpu.decode.ffn), so the byte ratio is the experts' own: the dense stack
holds every expert's width side by side — the same weights — and reads all of them for every token; the
MoE reads its router, its shared expert and its top-k routed experts, three ways:

- grouped GEMM: all the token's routed experts in one call each way, read where they lie
  (`torch._grouped_mm`, the decode models' `grouped` way; PyTorch runs it on a CPU too);
- gathered + bmm: the routed experts copied out by id, then one batched matmul each way (`torch.bmm`,
  the decode models' `gather` way, the one every GPU runs);
- per-expert loop: one expert after another, each by its id read on the host — the reference.

Before timing, each batched way must give what the loop gives. The models take turns, one repetition
each (a shared machine's load drifts). Speed ratio ÷ byte ratio says how much
of the MoE's byte advantage becomes speed (1.0: all of it); the bytes are the weights a token reads
(the gathered way's copy is its own overhead, so it shows as a lower share). Prints numbers; never
passes or fails. Bad arguments: one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from core.gpu.decode.ffn import DenseFFN, MoEFFN
from core.gpu.output import cli_io
from core.gpu.suites.moe_sizing import SHAPES, MoeSizing, cpu_sizing

PROG = "python -m bench.moe"
READ_TIME_UNUSED = 1.0  # the sizing's copy speed, for an expert's read time this bench does not show


WAYS = {"grouped": "MoE, grouped GEMM", "gather": "MoE, gathered + bmm", "loop": "MoE, per-expert loop"}


class Stack(nn.Module):
    """Feed-forward layers one after another, each added to the running token: (1, D) → (1, D)."""

    def __init__(self, layers: list[nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.way = "gather"  # MoE layers: a way of MoEFFN (core.gpu.decode.ffn.MOE_WAYS), or "loop"

    def use(self, way: str) -> None:
        """Read the MoE layers' experts `way` from now on ('loop': one by one)."""
        for layer in self.layers:
            if way != "loop":
                layer.use(way)
        self.way = way

    def ways(self) -> list[str]:
        """The batched ways this machine runs, then the loop."""
        runnable = self.layers[0].runnable_ways()
        return [w for w in ("grouped", "gather") if w in runnable] + ["loop"]

    @torch.inference_mode()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
            x = x + (layer.loop(h) if self.way == "loop" else layer(h))
        return x

    def weight_bytes_read(self) -> int:
        """Weights one token reads: every dense weight, or the router, shared and top-k experts."""
        return sum(layer.traffic().weights for layer in self.layers)


def build(sizing: MoeSizing, moe: bool, dtype: torch.dtype = torch.float32) -> Stack:
    """The MoE stack of `sizing`, or its dense twin (all experts' widths side by side), on the CPU."""
    cpu = torch.device("cpu")
    if moe:
        layers = [MoEFFN(sizing.d_model, sizing.n_experts, sizing.n_shared, sizing.top_k, sizing.expert_hidden,
                         cpu, dtype, way="gather", gated=sizing.gated) for _ in range(sizing.n_layers)]  # fmt: skip
    else:
        hidden = sizing.n_experts * sizing.expert_hidden
        layers = [
            DenseFFN(sizing.d_model, hidden, cpu, dtype, gated=sizing.gated) for _ in range(sizing.n_layers)
        ]
    return Stack(layers).eval()


class Timer:
    """Single-token steps per second (batch 1) of one model, each step's input the last one's output (so
    steps cannot overlap), after a warm-up of two."""

    def __init__(self, model: Stack, d_model: int, way: str | None = None) -> None:
        self.model, self.way = model, way
        self.x = torch.randn(1, d_model, generator=torch.Generator().manual_seed(0))
        self.rates: list[float] = []
        self.repeat(2, keep=False)

    def repeat(self, tokens: int, keep: bool = True) -> None:
        if self.way is not None:
            self.model.use(self.way)
        started = time.perf_counter()
        for _ in range(tokens):
            self.x = torch.tanh(self.model(self.x))
        if keep:
            self.rates.append(tokens / (time.perf_counter() - started))


def differs_from_loop(model: Stack, way: str, d_model: int, tokens: int = 4) -> float:
    """The largest difference between `way` and the per-expert loop over a few tokens, relative to the
    output's size (0 when they agree exactly)."""
    gen = torch.Generator().manual_seed(1)
    worst = 0.0
    for _ in range(tokens):
        x = torch.randn(1, d_model, generator=gen)
        model.use(way)
        batched = model(x)
        model.use("loop")
        looped = model(x)
        worst = max(worst, float((batched - looped).abs().max() / looped.abs().max()))
    return worst


@dataclass(frozen=True)
class Row:
    name: str
    bytes_per_token: int  # weights read
    rates: list[float]  # tokens/s, one per repetition
    vs_dense: list[float] | None = None  # ÷ dense tokens/s, repetition by repetition (the MoE's rows)

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)


def run_shape(sizing: MoeSizing, tokens: int, repeats: int, say: Callable[[str], None] = print) -> list[Row]:
    """Dense, then the MoE each way it runs here, for one sizing; prints its lines and returns its rows.
    The models take turns, one repetition each, so a load that drifts on a shared machine falls on all of
    them alike: each MoE way's speed ratio is the median of its ratios to the dense repetition just before."""
    shape = sizing.shape
    say(f"\n{shape}: {sizing.model}'s experts, {sizing.d_model} × {sizing.expert_hidden}, "
        f"{sizing.expert_bytes / 2**20:.0f} MiB each in fp32 ({sizing.expert_bytes / 2**21:.0f} MiB in bf16); "
        f"{sizing.n_layers} layer(s) of {sizing.n_experts - sizing.n_shared} routed (released: "
        f"{sizing.released_experts}), {sizing.top_k} per token + {sizing.n_shared} shared")  # fmt: skip
    moe = build(sizing, moe=True)
    for way in moe.ways()[:-1]:
        error = differs_from_loop(moe, way, sizing.d_model)
        say(f"  {WAYS[way]} vs the per-expert loop: largest difference {error:.1e} of the output's size")
        if error > 1e-4:
            raise AssertionError(f"{shape}: {WAYS[way]} differs from the per-expert loop by {error:.1e}")
    dense = build(sizing, moe=False)
    timers = {"dense": Timer(dense, sizing.d_model)} | {w: Timer(moe, sizing.d_model, w) for w in moe.ways()}
    for _ in range(repeats):
        for timer in timers.values():
            timer.repeat(tokens)
    d = timers.pop("dense").rates
    rows = [Row("dense", dense.weight_bytes_read(), d)]
    rows += [Row(WAYS[w], moe.weight_bytes_read(), t.rates, [m / x for m, x in zip(t.rates, d, strict=True)])
             for w, t in timers.items()]  # fmt: skip
    for r in rows:
        spread = f"{min(r.rates):.2f}–{max(r.rates):.2f}"
        line = f"  {r.name:<22} {r.bytes_per_token / 2**20:9.1f} MiB/token {r.rate:8.2f} tokens/s ({spread})"
        if r.vs_dense is not None:
            speed, nbytes = statistics.median(r.vs_dense), rows[0].bytes_per_token / r.bytes_per_token
            line += f"   ÷ dense {speed:5.2f}× in speed, {nbytes:5.2f}× in bytes: {speed / nbytes:4.0%} of the byte ratio"
        say(line)
    return rows


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The flags, checked before anything is built (one line on stderr and exit status 2 if bad)."""
    parser = cli_io.Parser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--shape", choices=[*SHAPES, "both"], default="both", help="the experts' shape (default both)"
    )
    parser.add_argument("--tokens", type=cli_io.positive_int, default=8, help="timed tokens per repetition")
    parser.add_argument("--repeats", type=cli_io.positive_int, default=3, help="timed repetitions")
    parser.add_argument("--threads", type=cli_io.positive_int, default=1, help="torch CPU threads")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), fp32 on the CPU; "
          f"{args.tokens} tokens × {args.repeats} repetitions")  # fmt: skip
    for shape in SHAPES if args.shape == "both" else (args.shape,):
        run_shape(cpu_sizing(shape, READ_TIME_UNUSED, 4), args.tokens, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
