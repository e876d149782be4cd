"""The MQAR sweep, by Zoology's protocol: every mixer × width × learning rate × seed.

    python -m core.train recall                 # the full sweep → assets/recall/ (two worker processes)
    python -m core.train recall --resume        # go on after an interruption (finished runs are kept)
    python -m core.train recall --quick         # a smoke run (a few steps) into a scratch folder
    python -m core.train recall --only kda:16 --jobs 1

A small re-creation of Zoology's MQAR experiment (Arora et al., arXiv 2312.04927, Fig. 2 and
its appendix protocol): each (mixer, width) cell is trained on a mixture of pair counts at
every learning rate and seed, then scored on held-out sequences of each pair count; the cell
reports its best learning rate's mean over seeds and their spread (core/recall/results.py).
A run stops early once its loss has converged, and gives up half-way if it is still on the
starting plateau (it is then flagged, never averaged in silently). Every run seeds itself and
runs single-threaded, so results do not depend on which worker ran it or in which order.

Outputs in `--out` (default `assets/recall/`):
    results.json               every cell's numbers, every run's record and loss curve, the settings
    <mixer>_d<width>.pt        one checkpoint per cell: its best run (config + weights + record)
    runs/<run>.json            per-run records (what --resume keeps); runs/<run>.pt while the sweep runs
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import statistics
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from core.mechanisms import get as get_rule
from core.recall import results as rr
from core.recall.config import MIXERS
from core.recall.models import RecallModel, build_model
from core.recall.task import DEFAULT_VOCAB, POWER_A, evaluate_recall, generate_mixture
from core.train.loop import TrainConfig, seed_everything, train

ASSETS = Path(__file__).resolve().parents[3] / "assets" / "recall"
COMMAND = "python -m core.train recall"
PLATEAU_DRIFT = 0.05  # nats: a loss that fell less than this is not leaving the plateau


@dataclass(frozen=True)
class SweepConfig:
    mixers: tuple[str, ...] = MIXERS
    widths: tuple[int, ...] = (16, 32)  # d_model = head dim = key dim of each board (one head)
    lrs: tuple[float, ...] = (1e-3, 3e-3, 3e-2)  # Zoology sweeps the learning rate per cell
    seeds: tuple[int, ...] = (0, 1)
    pair_counts: tuple[int, ...] = (4, 8, 16, 32)
    seq_len: int = 128
    per_pair_batch: int = 8  # sequences of each pair count in every training batch
    steps: int = 1800  # the most a run trains; the cosine schedule spans this length
    warmup: int = 50
    weight_decay: float = 0.1
    chunk_size: int = 16
    converged_loss: float = 0.005  # stop when the mean loss of the last `window` steps is below this
    plateau_check: float = 0.4  # at this share of `steps`, a run still on the plateau gives up
    window: int = 50
    curve_every: int = 25  # loss curve: the mean of every 25 steps
    eval_examples: int = 256  # held-out sequences per pair count
    eval_seed: int = 10_000_000  # far from the training seeds (seed · 1_000_000 + step)
    check_examples: int = 32  # the small eval stored with each checkpoint (for tests)
    check_seed: int = 20_000_000

    def train_config(self, lr: float, seed: int) -> TrainConfig:
        return TrainConfig(
            steps=self.steps,
            batch_size=self.per_pair_batch * len(self.pair_counts),
            seq_len=self.seq_len,
            lr=lr,
            warmup=self.warmup,
            weight_decay=self.weight_decay,
            seed=seed,
        )


def score(model, cfg: SweepConfig, n_examples: int, seed: int) -> tuple[dict[str, float], dict[str, int]]:
    accuracy, n_queries = {}, {}
    for n in cfg.pair_counts:
        acc, total = evaluate_recall(model, n, cfg.seq_len, n_examples, seed + n)
        accuracy[str(n)], n_queries[str(n)] = acc, total
    return accuracy, n_queries


def _stopper(cfg: SweepConfig):
    """Stop on convergence, or give up at `plateau_check` of the budget when the loss is still on
    the plateau *and* not moving (it fell less than `PLATEAU_DRIFT` since half that point); records why.
    A run that is slowly leaving the plateau trains on to the end of its budget."""
    plateau_at = int(cfg.plateau_check * cfg.steps)
    reason = {"why": "budget"}

    def stop(losses: list[float]) -> bool:
        if len(losses) < cfg.window:
            return False
        recent = statistics.fmean(losses[-cfg.window :])
        if recent < cfg.converged_loss:
            reason["why"] = "converged"
            return True
        if len(losses) == plateau_at and rr.on_plateau(recent, DEFAULT_VOCAB.n_values):
            half = plateau_at // 2
            earlier = statistics.fmean(losses[max(0, half - cfg.window) : max(half, 1)])
            if earlier - recent < PLATEAU_DRIFT:
                reason["why"] = "plateau"
                return True
        return False

    return stop, reason


def train_one(mixer: str, width: int, lr: float, seed: int, cfg: SweepConfig, out: Path) -> dict:
    """Train one run, score it, save its record and (for now) its checkpoint under out/runs/."""
    seed_everything(seed, threads=1)
    model = build_model(mixer, width, seed=seed, chunk_size=cfg.chunk_size)
    name = rr.run_name(mixer, width, lr, seed)

    def next_batch(step: int):
        return generate_mixture(
            cfg.per_pair_batch, cfg.seq_len, cfg.pair_counts, seed=seed * 1_000_000 + step
        )

    stop, reason = _stopper(cfg)
    started = time.perf_counter()
    losses = train(model, next_batch, cfg.train_config(lr, seed), stop_when=stop)
    seconds = time.perf_counter() - started
    accuracy, n_queries = score(model, cfg, cfg.eval_examples, cfg.eval_seed)
    check_accuracy, _ = score(model, cfg, cfg.check_examples, cfg.check_seed)
    final_loss = statistics.fmean(losses[-cfg.window :])
    every = cfg.curve_every
    record = {
        "name": name,
        "mixer": mixer,
        "d_model": width,
        "lr": lr,
        "seed": seed,
        "n_heads": model.cfg.n_heads,
        "params": model.num_params(),
        "state_elements": model.state_elements(),
        "cache_elements_per_token": model.cache_elements_per_token(),
        "memory_bytes_at_seq_len": model.memory_bytes(cfg.seq_len),
        "accuracy": accuracy,
        "n_queries": n_queries,
        "check_accuracy": check_accuracy,
        "final_loss": round(final_loss, 5),
        "plateau": rr.on_plateau(final_loss, DEFAULT_VOCAB.n_values),
        "steps_run": len(losses),
        "stopped": reason["why"],
        "loss_curve": [
            round(statistics.fmean(losses[i : i + every]), 4) for i in range(0, len(losses), every)
        ],
        "train_seconds": round(seconds, 1),
    }
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    model.save(runs / f"{name}.pt", meta={"record": record, "sweep": sweep_dict(cfg)})
    (runs / f"{name}.json").write_text(json.dumps(record, indent=1))
    return record


def sweep_dict(cfg: SweepConfig) -> dict:
    d = asdict(cfg)
    d["vocab"] = {
        "n_keys": DEFAULT_VOCAB.n_keys,
        "n_values": DEFAULT_VOCAB.n_values,
        "size": DEFAULT_VOCAB.size,
    }
    d["power_a"] = POWER_A
    d["plateau_threshold"] = round(rr.PLATEAU_FRACTION * rr.plateau_loss(DEFAULT_VOCAB.n_values), 4)
    d["plateau_rule"] = (
        f"final loss (mean of the last {cfg.window} steps) above {rr.PLATEAU_FRACTION} × ln(n_values) "
        f"= {rr.PLATEAU_FRACTION * rr.plateau_loss(DEFAULT_VOCAB.n_values):.2f} nats"
    )
    return d


def _worker(job: tuple) -> dict:
    mixer, width, lr, seed, cfg, out = job
    return train_one(mixer, width, lr, seed, cfg, Path(out))


def _cost(mixer: str, width: int) -> float:
    """Rough relative seconds per step (measured on one CPU thread), to order jobs and estimate time."""
    work = {"attention": 1.0, "linear": 1.0, "delta": 1.4, "gated_delta": 1.5, "kda": 2.4, "hybrid": 1.6}
    if mixer not in work:
        work[mixer] = 1.0 + get_rule(mixer).macs_per_head(width) / 10_000
    return work[mixer] * (width / 16) ** 0.6


def _grid(cfg: SweepConfig) -> list[tuple[str, int, float, int]]:
    return [(m, w, lr, s) for w in cfg.widths for m in cfg.mixers for lr in cfg.lrs for s in cfg.seeds]


def run_sweep(
    cfg: SweepConfig,
    out: Path,
    jobs: int = 2,
    resume: bool = False,
    only: set[tuple[str, int]] | None = None,
    keep_run_checkpoints: bool = False,
) -> dict:
    """Train the runs asked for in up to `jobs` single-threaded processes, then gather every
    finished run in `out/runs/` into results.json (so re-running one cell keeps the others)."""
    out.mkdir(parents=True, exist_ok=True)
    todo = []
    for mixer, width, lr, seed in _grid(cfg):
        finished = (out / "runs" / f"{rr.run_name(mixer, width, lr, seed)}.json").exists()
        if (only is None or (mixer, width) in only) and not (resume and finished):
            todo.append((mixer, width, lr, seed, cfg, str(out)))
    todo.sort(key=lambda job: -_cost(job[0], job[1]))  # slowest first, so the workers end together
    total_cost = sum(_cost(j[0], j[1]) for j in todo)
    print(
        f"{len(todo)} runs to train ({len(_grid(cfg)) - len(todo)} already finished), {jobs} worker(s)",
        flush=True,
    )
    started, done_cost = time.perf_counter(), 0.0

    def report(i: int, record: dict) -> None:
        nonlocal done_cost
        done_cost += _cost(record["mixer"], record["d_model"])
        elapsed = time.perf_counter() - started
        eta = elapsed / done_cost * (total_cost - done_cost) if done_cost else 0.0
        mean = statistics.fmean(record["accuracy"].values())
        print(
            f"[{i}/{len(todo)}] {record['name']:<26} {record['stopped']:<9} {record['steps_run']:>5} steps "
            f"loss {record['final_loss']:.3f}  mean acc {mean:.3f}  {record['train_seconds']:>6.0f}s  "
            f"elapsed {elapsed / 60:5.1f} min  ETA {eta / 60:5.1f} min",
            flush=True,
        )

    if jobs <= 1 or len(todo) <= 1:
        for i, job in enumerate(todo, 1):
            report(i, _worker(job))
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = [pool.submit(_worker, job) for job in todo]
            for i, future in enumerate(as_completed(futures), 1):
                report(i, future.result())
    results = gather(cfg, out, keep_run_checkpoints)
    results["wall_seconds_last_invocation"] = round(time.perf_counter() - started, 1)
    results["runs_trained_last_invocation"] = len(todo)
    results["jobs"] = jobs
    (out / "results.json").write_text(json.dumps(results, indent=1))
    if rr.update_card(out / "MODEL_CARD.md", results):
        print(f"updated the results table in {out / 'MODEL_CARD.md'}")
    return results


def gather(cfg: SweepConfig, out: Path, keep_run_checkpoints: bool = False) -> dict:
    """results.json from the finished run records: one summary per complete cell, and its best run's
    checkpoint copied to out/<mixer>_d<width>.pt (run checkpoints not chosen are removed)."""
    runs = []
    for mixer, width, lr, seed in _grid(cfg):
        path = out / "runs" / f"{rr.run_name(mixer, width, lr, seed)}.json"
        if path.exists():
            runs.append(json.loads(path.read_text()))
    cells = []
    for width in cfg.widths:
        for mixer in cfg.mixers:
            mine = [r for r in runs if r["mixer"] == mixer and r["d_model"] == width]
            if not mine:
                continue
            cell = rr.summarise_cell(mine, list(cfg.pair_counts))
            cell["complete"] = len(mine) == len(cfg.lrs) * len(cfg.seeds)
            best = rr.best_run(cell, mine)
            source = out / "runs" / f"{best['name']}.pt"
            target = out / cell["checkpoint"]
            if source.exists():
                model = RecallModel.load(source)
                model.save(target, meta={"record": best, "cell": cell, "sweep": sweep_dict(cfg)})
            # a resumed sweep may choose a run whose weights were pruned: then say which run is shipped
            shipped = RecallModel.load(target).meta["record"].get("name") if target.exists() else None
            cell["checkpoint_run"] = shipped
            cell["checkpoint_is_best_run"] = shipped == best["name"]
            cells.append(cell)
    if not keep_run_checkpoints:
        shutil.rmtree(out / "runs" / "ckpt", ignore_errors=True)
        for path in (out / "runs").glob("*.pt"):
            path.unlink()
    return {
        "schema": rr.SCHEMA_VERSION,
        "task": "MQAR (multi-query associative recall), after Zoology arXiv 2312.04927",
        "command": COMMAND,
        "protocol": (
            "every (mixer, width) cell trained at every learning rate and seed; the cell reports the best "
            "learning rate among those whose seeds all left the plateau (by mean accuracy over pair counts), "
            "its mean over seeds and their min/max/std; runs still on the plateau are flagged"
        ),
        "sweep": sweep_dict(cfg),
        "metric": "top-1 accuracy at query positions on held-out sequences (eval_seed + pairs)",
        "cells": cells,
        "runs": runs,
    }


def print_table(results: dict) -> None:
    pairs = [str(n) for n in results["sweep"]["pair_counts"]]
    print(f"{'mixer':<12} {'d':>3} {'lr':>7}  " + "  ".join(f"{p:>11}" for p in pairs) + "  flags")
    for c in results["cells"]:
        accs = "  ".join(f"{c['accuracy'][p]:.3f}±{c['accuracy_std'][p]:.3f}" for p in pairs)
        print(f"{c['mixer']:<12} {c['d_model']:>3} {c['lr']:>7.0e}  {accs}  {', '.join(c['flags'])}")


def _parse_only(items: list[str], cfg: SweepConfig, parser: argparse.ArgumentParser) -> set[tuple[str, int]]:
    try:
        only = {(m, int(w)) for m, w in (item.split(":") for item in items)}
    except ValueError:
        parser.error("--only takes mixer:width items, e.g. linear:16")
    unknown = only - {(m, w) for m in cfg.mixers for w in cfg.widths}
    if unknown:
        parser.error(f"not in the sweep: {sorted(unknown)}")
    return only


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=COMMAND, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ASSETS)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes, one thread each (default 2)")
    parser.add_argument(
        "--only", nargs="*", default=None, help="cells as mixer:width, e.g. linear:16 delta:32"
    )
    parser.add_argument("--steps", type=int, default=None, help="most steps per run (default 1800)")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 20 steps, one lr, tiny eval, scratch folder"
    )
    parser.add_argument("--resume", action="store_true", help="keep finished runs found in OUT/runs")
    parser.add_argument("--keep-run-checkpoints", action="store_true", help="keep every run's weights")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be at least 1")

    cfg = SweepConfig()
    out = args.out
    if args.quick:
        cfg = replace(cfg, steps=20, warmup=5, lrs=(1e-2,), eval_examples=8, check_examples=4)
        out = args.out if args.out != ASSETS else Path("/tmp/recall_quick")
    if args.steps is not None:
        cfg = replace(cfg, steps=args.steps)
    only = _parse_only(args.only, cfg, parser) if args.only else None
    results = run_sweep(cfg, out, args.jobs, args.resume, only, args.keep_run_checkpoints)
    print_table(results)
    print(f"wrote {out / 'results.json'}")


if __name__ == "__main__":
    main()
