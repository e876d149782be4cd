"""Train the Qwen3.5 miniature of the A real hybrid lesson on the course corpus.

    python -m core.train qwen35_mini               # writes assets/qwen35_mini/ (weights, config, card)
    python -m core.train qwen35_mini --steps 3 --out /tmp/q   # a quick smoke run

The model is core/models/qwen35.py itself at a tiny size (core/models/qwen35_mini.py): three Gated
DeltaNet layers and one gated attention layer, reading bytes. Seeded and single-threaded
(core.train.loop.seed_everything), so the same command gives the same weights on any CPU. The fade
parameters start as Gated DeltaNet's reference code starts them (A uniform in [1, 16], dt log-uniform
in [0.001, 0.1]), so every head begins with its own fade rate.
"""

from __future__ import annotations

import math
import time

import torch
import torch.nn as nn

from core.models.qwen35 import Qwen35
from core.models.qwen35_mini import CHECKPOINT, build, load_miniature
from core.tokenizer import decode
from core.train.loop import TrainConfig, byte_recipe_start, evaluate, print_progress, random_windows, train

TRAIN = TrainConfig(steps=600, batch_size=16, seq_len=128, lr=3e-3, warmup=30, seed=0)
SAMPLE_PROMPT = "The cat"
SAMPLE_BYTES = 60


class Logits(nn.Module):
    """The model as `core.train.loop.train` calls it: ids (B, T) → logits (B, T, 256), with gradients."""

    def __init__(self, model: Qwen35) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model.logits(ids)


def initialise(model: Qwen35) -> None:
    """Small normal weights (std 0.02) for the projections and the tied embedding; the fade's A and
    dt_bias as Gated DeltaNet's reference code draws them, from torch's seeded generator."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("A_log"):
                p.copy_(torch.empty_like(p).uniform_(1.0, 16.0).log())
            elif name.endswith("dt_bias"):
                dt = torch.empty_like(p).uniform_(math.log(1e-3), math.log(1e-1)).exp()
                p.copy_(dt + torch.log(-torch.expm1(-dt)))  # softplus(dt_bias) = dt
            elif p.dim() == 2:
                p.normal_(0.0, 0.02)


def greedy_sample(model: Qwen35, prompt: str, n: int) -> str:
    """What the shipped weights write after `prompt`, always their likeliest next byte."""
    traces = model.run(list(prompt.encode("utf-8")), new_tokens=n - 1)
    written = [tr.token for tr in traces[len(prompt.encode("utf-8")) - 1 :]]
    return prompt + decode(written)


def main(argv: list[str] | None = None) -> None:
    start = byte_recipe_start("Train the Qwen3.5 miniature on assets/corpus.txt.", TRAIN, CHECKPOINT, argv)
    model = build()
    initialise(model)
    print(f"Qwen3.5 miniature: {model.num_params():,} params; layers {' '.join(model.kinds)}", flush=True)

    started = time.perf_counter()
    losses = train(
        Logits(model),
        lambda step: random_windows(start.train_ids, start.cfg.batch_size, start.cfg.seq_len, start.gen),
        start.cfg,
        on_log=print_progress,
        log_every=25,
    )
    meta = {
        **start.training_record(losses, (time.perf_counter() - started) / 60, loss_digits=4),
        "total_params": model.num_params(),
    }
    model.save(start.args.out, {"course_training": meta})
    shipped = load_miniature(start.args.out)  # measure the weights exactly as shipped
    meta["heldout_loss"] = round(evaluate(Logits(shipped.model), start.heldout_ids, start.cfg.seq_len), 4)
    meta["sample"] = greedy_sample(shipped.model, SAMPLE_PROMPT, SAMPLE_BYTES)
    model.save(start.args.out, {"course_training": meta})
    size = (start.args.out / "model.safetensors").stat().st_size
    print(f"held-out loss {meta['heldout_loss']:.4f} nats/byte; wrote {start.args.out} ({size / 1e6:.2f} MB)")
    (start.args.out / "MODEL_CARD.md").write_text(
        model_card(load_miniature(start.args.out).model), encoding="utf-8"
    )


def model_card(model: Qwen35) -> str:
    """The MODEL_CARD.md text, filled from the shipped model's config and its training record."""
    c, meta = model.config, model.meta["training"]
    kinds = " ".join("D" if k == "linear_attention" else "A" for k in c.layer_types)
    n_boards = c.layer_types.count("linear_attention")
    board = c.board_bytes(4)
    window = c.conv_channels() * (c.linear_conv_kernel_dim - 1) * 4
    kv = c.kv_bytes_per_token(4)
    n_attention = c.layer_types.count("full_attention")
    return f"""# Qwen3.5 miniature — model card

A byte-level miniature built exactly like Qwen3.5 and trained here, for the lesson A real hybrid. Its
layers are the course's Qwen3.5 code (`core/models/qwen35.py`, `core/models/qwen35_layers.py`) — the same
classes that run a released Qwen3.5 — at a tiny size. It writes English-looking bytes from the course
corpus, nothing more. When the released Qwen3.5 0.8B is on the machine, the lesson offers it beside this one.

| | miniature | Qwen3.5 0.8B (released) |
|---|---|---|
| layers | {c.num_layers}: `{kinds}` (D = Gated DeltaNet, A = gated attention) | (D D D A) repeated: `full_attention_interval` 4 |
| width | hidden {c.hidden_size}, MLP {c.intermediate_size} (SwiGLU) | its `config.json` (the lesson reads it) |
| Gated DeltaNet | {c.linear_num_key_heads} q/k heads, {c.linear_num_value_heads} value heads, board {c.linear_key_head_dim} × {c.linear_value_head_dim}; convolution kernel {c.linear_conv_kernel_dim} | 16 value heads of 128 × 128; kernel 4 |
| gated attention | {c.num_attention_heads} heads, {c.num_key_value_heads} KV heads of {c.head_dim}, rotary on {c.rotary_dim} channels | its `config.json` |
| vocabulary | 256 bytes (UTF-8) | 248,320 tokens |
| parameters | {meta["total_params"]:,} (embedding tied to the output head) | about 0.8B |

Memory while decoding (fp32): each Gated DeltaNet layer keeps {c.linear_num_value_heads} boards of
{c.linear_key_head_dim} × {c.linear_value_head_dim} numbers ({board:,} bytes) and its convolution window, the last
{c.linear_conv_kernel_dim - 1} inputs of {c.conv_channels()} channels ({window:,} bytes): {n_boards} layers →
{n_boards * (board + window):,} bytes, whatever the length. The attention layer adds {kv} bytes per token
({n_attention} layer{"s" if n_attention != 1 else ""}).

## Training

- Corpus: `assets/corpus.txt` ({meta["corpus_bytes"]:,} bytes, sha256 `{meta["corpus_sha256"][:16]}…`), split by
  `core.train.corpus.split_train_heldout` into {meta["train_bytes"]:,} training bytes and {meta["heldout_bytes"]:,} held-out bytes.
- {meta["train_steps"]} AdamW steps, batch {meta["batch_size"]} × {meta["seq_len"]} bytes, peak lr {meta["lr"]}, warm-up
  then cosine (`core.train`), seed {meta["seed"]}, one CPU thread; {meta["train_minutes"]} minutes here.
- Initialisation: weights normal (std 0.02); each head's fade parameters as the Gated DeltaNet reference
  code draws them (A uniform in [1, 16], dt log-uniform in [0.001, 0.1]).
- Final training loss {meta["final_train_loss"]:.3f} nats/byte (mean of the last 20 steps).
- **Held-out loss {meta["heldout_loss"]:.3f} nats/byte** ({meta["heldout_loss"] / math.log(2):.2f} bits/byte) on the
  shipped weights (a uniform guess over 256 bytes: 5.545 nats). The corpus is small and largely
  templated, so this measures fit to the course corpus, not to English.
- Greedy sample after `{SAMPLE_PROMPT}`: `{meta["sample"]!r}`

Stored as `config.json` (transformers' `Qwen3_5ForCausalLM` text config, plus this training record
under `course_training`) and `model.safetensors` in fp32. There is no `tokenizer.json`: one token is one byte.

## Against Qwen3.5

- The same layer code, norms (zero-centred RMSNorm, gated RMSNorm on each board head's output), short
  convolution, output gate, partial rotary position and grouped KV heads; only the sizes differ.
- Byte vocabulary instead of Qwen's tokenizer; no vision tower, no multi-token prediction head.

## Regenerate

    python -m core.train.corpus              # only if assets/corpus.txt is missing
    python -m core.train qwen35_mini   # {meta["train_minutes"]} min here (one thread); same seed → same weights
"""
