"""The one training loop every recipe shares, seeded and single-threaded so that the same command gives
the same weights on any CPU (the recipes are in core/train/recipes/, the CLI in core/train/__main__.py)."""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class TrainConfig:
    steps: int = 1000
    batch_size: int = 16
    seq_len: int = 128
    lr: float = 3e-3
    min_lr_ratio: float = 0.1
    warmup: int = 50
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    seed: int = 0


def seed_everything(seed: int, threads: int | None = 1) -> torch.Generator:
    """Fix every source of randomness we use; return a generator for batch sampling."""
    torch.manual_seed(seed)
    if threads is not None:
        torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    return torch.Generator().manual_seed(seed)


@dataclass
class ByteRecipeStart:
    """What a byte-level recipe starts from (`byte_recipe_start`): its arguments, config and generator, the
    corpus split into training and held-out byte ids, and the corpus facts its model card records."""

    args: argparse.Namespace
    cfg: TrainConfig
    gen: torch.Generator
    train_ids: torch.Tensor
    heldout_ids: torch.Tensor
    record: dict

    def training_record(self, losses: list[float], minutes: float, loss_digits: int | None = None) -> dict:
        """What the checkpoint records of its training: the settings, the mean loss of the last 20 steps
        (rounded to `loss_digits` when given), the minutes taken, and the corpus facts."""
        final = sum(losses[-20:]) / len(losses[-20:])
        return {
            "train_steps": self.cfg.steps,
            "batch_size": self.cfg.batch_size,
            "seq_len": self.cfg.seq_len,
            "lr": self.cfg.lr,
            "seed": self.cfg.seed,
            "final_train_loss": final if loss_digits is None else round(final, loss_digits),
            "train_minutes": round(minutes, 1),
            **self.record,
        }


def byte_recipe_start(
    description: str, defaults: TrainConfig, checkpoint, argv: list[str] | None
) -> ByteRecipeStart:
    """What a byte-level recipe does first: read `--steps` and `--out`, seed everything (one thread), and
    split the course corpus into training and held-out byte ids (core.train.corpus.split_train_heldout)."""
    from pathlib import Path

    from core.train.corpus import load_corpus, sha256, split_train_heldout

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=defaults.steps)
    parser.add_argument("--out", type=Path, default=checkpoint)
    args = parser.parse_args(argv)
    cfg = TrainConfig(**{**defaults.__dict__, "steps": args.steps})
    gen = seed_everything(cfg.seed, threads=1)
    corpus = load_corpus()
    train_bytes, heldout_bytes = split_train_heldout(corpus)
    record = {
        "corpus_sha256": sha256(corpus),
        "corpus_bytes": len(corpus),
        "train_bytes": len(train_bytes),
        "heldout_bytes": len(heldout_bytes),
    }
    ids = [torch.tensor(list(part), dtype=torch.long) for part in (train_bytes, heldout_bytes)]
    return ByteRecipeStart(args, cfg, gen, ids[0], ids[1], record)


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up, then cosine decay to min_lr_ratio · lr."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


def random_windows(data: torch.Tensor, batch_size: int, seq_len: int, gen: torch.Generator):
    """Sample (inputs, targets) windows from a 1-D id tensor: (B, T) each."""
    starts = torch.randint(0, len(data) - seq_len - 1, (batch_size,), generator=gen)
    x = torch.stack([data[s : s + seq_len] for s in starts.tolist()])  # (B, T)
    y = torch.stack([data[s + 1 : s + seq_len + 1] for s in starts.tolist()])  # (B, T)
    return x, y


def lm_loss(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    """Mean next-token cross-entropy. logits (B, T, V), targets (B, T)."""
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=ignore_index
    )


@torch.no_grad()
def evaluate(model: torch.nn.Module, data: torch.Tensor, seq_len: int, max_windows: int = 64) -> float:
    """Mean loss over non-overlapping windows of held-out data (nats per token)."""
    model.eval()
    losses = []
    for start in range(0, len(data) - seq_len - 1, seq_len):
        x = data[start : start + seq_len][None]
        y = data[start + 1 : start + seq_len + 1][None]
        losses.append(lm_loss(model(x), y).item())
        if len(losses) >= max_windows:
            break
    model.train()
    return sum(losses) / max(1, len(losses))


def train(
    model: torch.nn.Module,
    next_batch: Callable[[int], tuple[torch.Tensor, torch.Tensor]],
    cfg: TrainConfig,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = lm_loss,
    on_log: Callable[[int, float, float], None] | None = None,
    log_every: int = 50,
    stop_when: Callable[[list[float]], bool] | None = None,
) -> list[float]:
    """AdamW with warm-up + cosine decay and gradient clipping; returns the loss per step.

    `next_batch(step)` returns (inputs, targets); `model(inputs)` returns logits.
    `stop_when(losses)`, checked after every step, ends training early (the schedule keeps
    its length, so a stopped run saw exactly the learning rates of a full one so far).
    """
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr,
        betas=(0.9, 0.95),
    )
    model.train()
    losses: list[float] = []
    started = time.perf_counter()
    for step in range(cfg.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        x, y = next_batch(step)
        loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        losses.append(loss.item())
        if on_log is not None and (step % log_every == 0 or step == cfg.steps - 1):
            on_log(step, losses[-1], time.perf_counter() - started)
        if stop_when is not None and stop_when(losses):
            break
    model.eval()
    return losses


def print_progress(step: int, loss: float, seconds: float) -> None:
    print(f"step {step:5d}  loss {loss:.4f}  {seconds:7.1f}s", flush=True)
