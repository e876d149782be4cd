"""The MQAR sweep: train every mixer at two widths, measure recall per pair count.

    python -m core.train recall                 # the full sweep → assets/recall/ (two worker processes)
    python -m core.train recall --quick         # a smoke run (a few steps) into a scratch folder
    python -m core.train recall --only linear:16 --jobs 1

A small re-creation of Zoology's MQAR experiment (arXiv 2312.04927, Fig. 2): one model
per (mixer, width) is trained on a mixture of pair counts, then scored on held-out
sequences of each pair count. Every run is seeded and single-threaded, and each run
seeds itself, so the results do not depend on which worker ran it or in which order.
All mixers get the same steps, batch, learning rate and schedule.

Outputs in `--out` (default `assets/recall/`):
    results.json               accuracy per (mixer, width, pairs), with settings, seeds, timings
    <mixer>_d<width>.pt        one checkpoint per trained model (config + weights + its scores)
    runs/<mixer>_d<width>.json per-run records (lets an interrupted sweep resume with --resume)
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from core.mechanisms import get as get_rule
from core.models.recall_models import MIXERS, build_model
from core.recall import DEFAULT_VOCAB, POWER_A, evaluate_recall, generate_mixture
from core.train import TrainConfig, seed_everything, train

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "recall"
COMMAND = "python -m core.train recall"


@dataclass(frozen=True)
class SweepConfig:
    mixers: tuple[str, ...] = MIXERS
    widths: tuple[int, ...] = (16, 32)  # d_model = head dim = key dim of each board (one head)
    pair_counts: tuple[int, ...] = (4, 8, 16, 32)
    seq_len: int = 128
    per_pair_batch: int = 8  # sequences of each pair count in every training batch
    steps: int = 1000
    lr: float = 1e-2
    warmup: int = 50
    weight_decay: float = 0.1
    chunk_size: int = 16
    seed: int = 0  # model initialisation and training-data seeds
    eval_examples: int = 256  # held-out sequences per pair count
    eval_seed: int = 10_000_000  # far from the training seeds (step · 1009 + i)
    check_examples: int = 32  # the small eval stored with each checkpoint (for tests)
    check_seed: int = 20_000_000

    def train_config(self) -> TrainConfig:
        return TrainConfig(
            steps=self.steps,
            batch_size=self.per_pair_batch * len(self.pair_counts),
            seq_len=self.seq_len,
            lr=self.lr,
            warmup=self.warmup,
            weight_decay=self.weight_decay,
            seed=self.seed,
        )


@dataclass
class RunRecord:
    mixer: str
    d_model: int
    n_heads: int
    params: int
    state_elements: int
    cache_elements_per_token: int
    memory_bytes_at_seq_len: int
    accuracy: dict[str, float] = field(default_factory=dict)  # pairs → held-out accuracy
    n_queries: dict[str, int] = field(default_factory=dict)
    check_accuracy: dict[str, float] = field(default_factory=dict)  # pairs → small eval (tests)
    final_loss: float = 0.0
    loss_curve: list[float] = field(default_factory=list)  # mean loss per 50 steps
    train_seconds: float = 0.0
    checkpoint: str = ""


def run_name(mixer: str, width: int) -> str:
    return f"{mixer}_d{width}"


def score(model, cfg: SweepConfig, n_examples: int, seed: int) -> tuple[dict[str, float], dict[str, int]]:
    accuracy, n_queries = {}, {}
    for n in cfg.pair_counts:
        acc, total = evaluate_recall(model, n, cfg.seq_len, n_examples, seed + n)
        accuracy[str(n)], n_queries[str(n)] = acc, total
    return accuracy, n_queries


def train_one(mixer: str, width: int, cfg: SweepConfig, out: Path, verbose: bool = True) -> RunRecord:
    """Train one model on the pair-count mixture, score it, save its checkpoint and record."""
    seed_everything(cfg.seed, threads=1)
    model = build_model(mixer, width, seed=cfg.seed, chunk_size=cfg.chunk_size)
    name = run_name(mixer, width)

    def next_batch(step: int):
        return generate_mixture(
            cfg.per_pair_batch, cfg.seq_len, cfg.pair_counts, seed=cfg.seed * 1_000_000 + step
        )

    def log(step: int, loss: float, seconds: float) -> None:
        if verbose:
            print(f"[{name}] step {step:5d}  loss {loss:.4f}  {seconds:7.1f}s", flush=True)

    started = time.perf_counter()
    losses = train(model, next_batch, cfg.train_config(), on_log=log, log_every=100)
    seconds = time.perf_counter() - started
    accuracy, n_queries = score(model, cfg, cfg.eval_examples, cfg.eval_seed)
    check_accuracy, _ = score(model, cfg, cfg.check_examples, cfg.check_seed)
    record = RunRecord(
        mixer=mixer,
        d_model=width,
        n_heads=model.cfg.n_heads,
        params=model.num_params(),
        state_elements=model.state_elements(),
        cache_elements_per_token=model.cache_elements_per_token(),
        memory_bytes_at_seq_len=model.memory_bytes(cfg.seq_len),
        accuracy=accuracy,
        n_queries=n_queries,
        check_accuracy=check_accuracy,
        final_loss=sum(losses[-20:]) / len(losses[-20:]),
        loss_curve=[sum(losses[i : i + 50]) / len(losses[i : i + 50]) for i in range(0, len(losses), 50)],
        train_seconds=round(seconds, 1),
        checkpoint=f"{name}.pt",
    )
    model.save(out / record.checkpoint, meta={"record": asdict(record), "sweep": _sweep_dict(cfg)})
    (out / "runs").mkdir(parents=True, exist_ok=True)
    (out / "runs" / f"{name}.json").write_text(json.dumps(asdict(record), indent=1))
    if verbose:
        print(f"[{name}] done in {seconds:.0f}s  accuracy {accuracy}", flush=True)
    return record


def _sweep_dict(cfg: SweepConfig) -> dict:
    d = asdict(cfg)
    d["vocab"] = {
        "n_keys": DEFAULT_VOCAB.n_keys,
        "n_values": DEFAULT_VOCAB.n_values,
        "size": DEFAULT_VOCAB.size,
    }
    d["power_a"] = POWER_A
    return d


def _worker(args: tuple[str, int, SweepConfig, str]) -> dict:
    mixer, width, cfg, out = args
    return asdict(train_one(mixer, width, cfg, Path(out)))


def _slowness_rank(mixer: str) -> float:
    """Attention first, then the fixed-board rules by their work per token (most first; the hybrid
    runs a KDA layer, so it sits just after KDA)."""
    if mixer == "attention":
        return -math.inf
    rule = get_rule("kda" if mixer == "hybrid" else mixer)
    return -rule.macs_per_head(64) + (0.5 if mixer == "hybrid" else 0)


def run_sweep(
    cfg: SweepConfig,
    out: Path,
    jobs: int = 2,
    resume: bool = False,
    only: set[tuple[str, int]] | None = None,
) -> dict:
    """Train the (mixer, width) runs asked for, in up to `jobs` single-threaded processes.

    results.json then gathers every run of the sweep found in `out/runs/`, so re-running
    one setting (`only`) updates it without losing the others.
    """
    out.mkdir(parents=True, exist_ok=True)
    grid = [(mixer, width) for width in cfg.widths for mixer in cfg.mixers]
    todo = []
    for mixer, width in grid:
        name = run_name(mixer, width)
        finished = (out / "runs" / f"{name}.json").exists() and (out / f"{name}.pt").exists()
        if (only is None or (mixer, width) in only) and not (resume and finished):
            todo.append((mixer, width, cfg, str(out)))
    # Attention first (quick, an early check), then slowest first so the two workers end together.
    todo.sort(key=lambda job: (_slowness_rank(job[0]), -job[1]))
    started = time.perf_counter()
    if jobs <= 1 or len(todo) <= 1:
        for job in todo:
            _worker(job)
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            list(pool.map(_worker, todo))
    wall = time.perf_counter() - started
    records = []
    for mixer, width in grid:
        path = out / "runs" / f"{run_name(mixer, width)}.json"
        if path.exists():
            records.append(json.loads(path.read_text()))
    results = {
        "task": "MQAR (multi-query associative recall), after Zoology arXiv 2312.04927",
        "command": COMMAND,
        "sweep": _sweep_dict(cfg),
        "metric": "top-1 accuracy at query positions on held-out sequences (eval_seed + pairs)",
        "wall_seconds_last_invocation": round(wall, 1),
        "runs_trained_last_invocation": [run_name(m, w) for m, w, _, _ in todo],
        "jobs": jobs,
        "runs": records,
    }
    (out / "results.json").write_text(json.dumps(results, indent=1))
    return results


def print_table(results: dict) -> None:
    pairs = [str(n) for n in results["sweep"]["pair_counts"]]
    print(f"{'mixer':<12} {'d':>3} {'state el.':>9} {'cache/tok':>9}  " + "  ".join(f"{p:>6}" for p in pairs))
    for r in results["runs"]:
        accs = "  ".join(f"{r['accuracy'][p]:6.3f}" for p in pairs)
        print(
            f"{r['mixer']:<12} {r['d_model']:>3} {r['state_elements']:>9} {r['cache_elements_per_token']:>9}  {accs}"
        )
    print(f"wall {results['wall_seconds_last_invocation']}s with {results['jobs']} worker(s)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=COMMAND, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ASSETS)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes, one thread each (default 2)")
    parser.add_argument(
        "--only", nargs="*", default=None, help="runs as mixer:width, e.g. linear:16 delta:32"
    )
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="smoke run: 20 steps, tiny eval, scratch folder")
    parser.add_argument("--resume", action="store_true", help="keep finished runs found in OUT/runs")
    args = parser.parse_args(argv)

    cfg = SweepConfig()
    out = args.out
    if args.quick:
        cfg = replace(cfg, steps=20, warmup=5, eval_examples=8, check_examples=4)
        out = args.out if args.out != ASSETS else Path("/tmp/recall_quick")
    if args.steps is not None:
        cfg = replace(cfg, steps=args.steps)
    only = None
    if args.only:
        try:
            only = {(m, int(w)) for m, w in (item.split(":") for item in args.only)}
        except ValueError:
            parser.error("--only takes mixer:width items, e.g. linear:16")
        unknown = only - {(m, w) for m in cfg.mixers for w in cfg.widths}
        if unknown:
            parser.error(f"not in the sweep: {sorted(unknown)}")
    results = run_sweep(cfg, out, jobs=args.jobs, resume=args.resume, only=only)
    print_table(results)
    print(f"wrote {out / 'results.json'}")


if __name__ == "__main__":
    main()
