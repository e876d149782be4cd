"""Dense vs Mixture-of-Experts on this CPU: same total parameters, different bytes read per token.

    python -m bench.moe                 # defaults: d_model 512, 4 layers, 31 routed top-2 + 1 shared
    python -m bench.moe --quick

Both models are stacks of feed-forward layers with the same number of weights. The
dense one reads every weight for every token; the MoE one (core.models.moe.MoE,
K3-style: sigmoid router, shared expert, top-k) reads only the router, the shared
expert and k routed experts. Batch-1 decoding is bound by memory traffic, so the
speed ratio should follow the bytes ratio, minus routing overhead. Prints numbers;
never passes or fails.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn as nn

from core.models.moe import GLUExpert, MoE, MoEConfig


class DenseStack(nn.Module):
    def __init__(self, d_model: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(GLUExpert(d_model, hidden) for _ in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = x + layer(x)
        return x

    def active_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


class MoEStack(nn.Module):
    def __init__(self, cfg: MoEConfig, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(MoE(cfg) for _ in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = x + layer(x)[0]
        return x

    def active_params(self) -> int:
        return sum(layer.active_params() for layer in self.layers)


@torch.no_grad()
def tokens_per_second(model: nn.Module, d_model: int, tokens: int, repeats: int) -> tuple[float, float]:
    """Mean ± std of single-token steps per second (batch 1), after a warm-up."""
    x = torch.randn(1, d_model)
    for _ in range(5):
        model(x)
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(tokens):
            x = torch.tanh(model(x))  # feed back, so each step depends on the last
        rates.append(tokens / (time.perf_counter() - started))
    return statistics.mean(rates), statistics.stdev(rates) if len(rates) > 1 else 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--experts", type=int, default=31, help="routed experts per layer")
    parser.add_argument("--shared", type=int, default=1)
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--expert-hidden", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="fewer tokens and repeats")
    args = parser.parse_args(argv)
    if args.quick:
        args.tokens, args.repeats = 50, 3
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)

    cfg = MoEConfig(
        d_model=args.d_model,
        num_experts=args.experts,
        top_k=args.top_k,
        num_shared=args.shared,
        expert_hidden=args.expert_hidden,
    )
    moe = MoEStack(cfg, args.layers).eval()
    dense_hidden = (args.experts + args.shared) * args.expert_hidden  # same expert weights, one wide MLP
    dense = DenseStack(args.d_model, dense_hidden, args.layers).eval()
    bytes_per = 4  # fp32

    rows = []
    for name, model in (("dense", dense), ("moe", moe)):
        total = sum(p.numel() for p in model.parameters())
        active = model.active_params()
        rate, std = tokens_per_second(model, args.d_model, args.tokens, args.repeats)
        rows.append((name, total, active, active * bytes_per, rate, std))

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); d_model {args.d_model}, "
        f"{args.layers} layers; MoE: {args.experts} routed top-{args.top_k} + {args.shared} shared, "
        f"expert hidden {args.expert_hidden}; dense hidden {dense_hidden}"
    )
    print(
        f"{'model':<6} {'total params':>13} {'active params':>14} {'bytes read/token':>17} {'tokens/s':>16}"
    )
    for name, total, active, read, rate, std in rows:
        print(f"{name:<6} {total:>13,} {active:>14,} {read / 1e6:>14.2f} MB {rate:>9.1f} ± {std:<5.1f}")
    (_, _, _, d_read, d_rate, _), (_, _, _, m_read, m_rate, _) = rows
    print(
        f"ratio moe/dense: bytes read per token {m_read / d_read:.3f}  ({d_read / m_read:.1f}× fewer), "
        f"tokens/s {m_rate / d_rate:.2f}×"
    )


if __name__ == "__main__":
    main()
