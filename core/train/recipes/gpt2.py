"""Recipe for the tiny GPT-2 of the GPT-2 and KV cache pages: `python -m core.train gpt2`.

Trains `core.models.gpt2.GPT2` (4 layers, 4 heads, d_model 128, 256-byte window)
on `assets/corpus.txt` with the shared seeded loop of `core.train`, then writes
`assets/gpt2/model.pt` (config + weights) and `assets/gpt2/MODEL_CARD.md`.
Training windows span the whole context window so every learned position is trained.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import asdict
from pathlib import Path

import torch

from core.generation import Sampling, generate
from core.models.gpt2 import CHECKPOINT, GPT2, GPT2Config
from core.tokenizer import decode, encode
from core.train.corpus import CORPUS_PATH, load_corpus, sha256, split_train_heldout
from core.train.loop import TrainConfig, evaluate, print_progress, random_windows, seed_everything, train

HELDOUT_FRACTION = 0.05
EVAL_WINDOWS = 64
SAMPLE_PROMPT = "The cache "


def heldout_loss(model: GPT2, heldout: torch.Tensor) -> float:
    """Mean next-byte loss on held-out text, in nats per byte (full-window, non-overlapping)."""
    return evaluate(model, heldout, model.config.block_size, max_windows=EVAL_WINDOWS)


def corpus_tensors() -> tuple[torch.Tensor, torch.Tensor, bytes]:
    data = load_corpus()
    train_bytes, held_bytes = split_train_heldout(data, HELDOUT_FRACTION)
    as_ids = lambda b: torch.tensor(list(b), dtype=torch.long)  # noqa: E731
    return as_ids(train_bytes), as_ids(held_bytes), data


def model_card(model: GPT2, cfg: TrainConfig, loss: float, seconds: float, data: bytes, sample: str) -> str:
    c = model.config
    bits = loss / math.log(2)
    return f"""# Tiny GPT-2 (the GPT-2 and KV cache pages)

A GPT-2-shaped model at toy size over raw UTF-8 bytes (`core/models/gpt2.py`).

| | |
|---|---|
| layers × heads × width | {c.n_layer} × {c.n_head} × {c.d_model} (head size {c.head_dim}) |
| context window | {c.block_size} bytes |
| vocabulary | {c.vocab_size} (one token per byte, `core/tokenizer.py`) |
| parameters | {model.num_params():,} (output head tied to the token embedding) |
| KV cache per token | {2 * c.n_layer * c.d_model * 4:,} bytes (fp32: K and V, {c.n_layer} layers × {c.d_model}) |
| corpus | `assets/corpus.txt`, {len(data):,} bytes, sha256 `{sha256(data)[:16]}…`, written by `python -m core.train.corpus` (no download) |
| split | last {HELDOUT_FRACTION:.0%} of the corpus (from a document boundary) held out |
| training | {cfg.steps} steps × batch {cfg.batch_size} × {cfg.seq_len} bytes, AdamW lr {cfg.lr} (warm-up {cfg.warmup}, cosine to {cfg.min_lr_ratio:.0%}), seed {cfg.seed}, 1 CPU thread |
| training time | {seconds:.0f} s wall clock (1 thread, on a 2-core machine shared with other jobs) |
| held-out loss | **{loss:.4f} nats per byte = {bits:.4f} bits per byte** (first {EVAL_WINDOWS} non-overlapping {c.block_size}-byte windows) |

Regenerate exactly (same corpus, same seed, same single thread → same weights):

```
python -m core.train.corpus
python -m core.train gpt2
```

Greedy sample from the prompt `{SAMPLE_PROMPT!r}`:

```
{sample}
```

It is a tiny byte model: it spells words from its corpus, strings them into
sentence-like shapes and often repeats itself. That is all the lessons need —
the same machinery (attention, the KV cache) as a large model, small enough to
step by hand.
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train the tiny GPT-2 of the GPT-2 and KV cache pages.")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=CHECKPOINT)
    args = parser.parse_args(argv)

    config = GPT2Config()
    cfg = TrainConfig(
        steps=args.steps,
        batch_size=args.batch_size,
        seq_len=config.block_size,
        lr=args.lr,
        warmup=60,
        seed=args.seed,
    )
    gen = seed_everything(cfg.seed, threads=1)
    train_ids, held_ids, data = corpus_tensors()
    print(f"corpus {CORPUS_PATH} ({len(data):,} bytes): train {len(train_ids):,}, held-out {len(held_ids):,}")
    model = GPT2(config)
    print(f"model {asdict(config)}: {model.num_params():,} parameters")

    started = time.perf_counter()
    train(
        model,
        lambda step: random_windows(train_ids, cfg.batch_size, cfg.seq_len, gen),
        cfg,
        on_log=print_progress,
        log_every=50,
    )
    seconds = time.perf_counter() - started
    loss = heldout_loss(model, held_ids)
    print(f"held-out loss {loss:.4f} nats/byte = {loss / math.log(2):.4f} bits/byte ({seconds:.0f} s)")

    sample = decode(encode(SAMPLE_PROMPT) + generate(model, encode(SAMPLE_PROMPT), 200, sampling=Sampling()))
    print(sample)
    model.save(args.out, meta={"heldout_loss": loss, "train_config": asdict(cfg)})
    card = model_card(model, cfg, loss, seconds, data, sample)
    (args.out.parent / "MODEL_CARD.md").write_text(card, encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes) and MODEL_CARD.md")


if __name__ == "__main__":
    main()
