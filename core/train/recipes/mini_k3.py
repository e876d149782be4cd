"""Train the miniature Kimi K3 of the Kimi K3 and Experts lessons on the course corpus.

    python -m core.train mini_k3                 # writes assets/mini_k3/model.pt + MODEL_CARD.md
    python -m core.train mini_k3 --steps 20      # a quick smoke run (to a scratch --out)

Seeded and single-threaded (core.train.loop.seed_everything), so the same command
gives the same weights on any CPU. The MoE layers are balanced with DeepSeek-V3's
auxiliary-loss-free bias ("noaux_tc", K3's config names it too): after every step each
expert's selection bias moves up if it was under-used and down if it was busy. Unlike
DeepSeek-V3, which keeps a small sequence-wise balance loss beside the bias (its report
§2.1.2, α = 0.0001), mini-K3 adds no balance loss at all.
"""

from __future__ import annotations

import time

from core.models.mini_k3 import CHECKPOINT, MiniK3, MiniK3Config
from core.models.moe import MoE, update_balance_bias
from core.specs import SPECS
from core.train.loop import TrainConfig, byte_recipe_start, evaluate, print_progress, random_windows, train
from core.units import format_params

TRAIN = TrainConfig(steps=450, batch_size=8, seq_len=128, lr=3e-3, warmup=30, seed=0)
BIAS_RATE = 1e-3  # DeepSeek-V3's bias update speed


def moe_layers(model: MiniK3) -> list[MoE]:
    return [layer.ffn for layer in model.layers if isinstance(layer.ffn, MoE)]


def balance(model: MiniK3) -> None:
    """One aux-loss-free balancing step from the load counted since the last call."""
    for moe in moe_layers(model):
        if moe.load.sum() > 0:
            update_balance_bias(moe, moe.load, BIAS_RATE)
        moe.reset_load()


def main(argv: list[str] | None = None) -> None:
    start = byte_recipe_start("Train mini-K3 on assets/corpus.txt.", TRAIN, CHECKPOINT, argv)
    model = MiniK3(MiniK3Config())
    print(
        f"mini-K3: {model.num_params():,} params, {model.active_params():,} active; "
        f"layers {' '.join('A' if k == 'mla' else 'K' for k in model.kinds)}",
        flush=True,
    )

    def next_batch(step: int):
        balance(model)  # uses the load counted during the previous step
        return random_windows(start.train_ids, start.cfg.batch_size, start.cfg.seq_len, start.gen)

    started = time.perf_counter()
    losses = train(model, next_batch, start.cfg, on_log=print_progress, log_every=25)
    minutes = (time.perf_counter() - started) / 60
    for moe in moe_layers(model):
        moe.reset_load()

    meta = {
        **start.training_record(losses, minutes),
        "total_params": model.num_params(),
        "active_params": model.active_params(),
        "layer_kinds": model.kinds,
    }
    model.save(start.args.out, meta)
    shipped = MiniK3.load(start.args.out)  # measure the weights exactly as shipped (bf16 round trip)
    meta["heldout_loss"] = evaluate(shipped, start.heldout_ids, start.cfg.seq_len)
    model.save(start.args.out, meta)
    print(
        f"held-out loss {meta['heldout_loss']:.4f} nats/byte; wrote {start.args.out} "
        f"({start.args.out.stat().st_size / 1e6:.2f} MB)",
        flush=True,
    )
    (start.args.out.parent / "MODEL_CARD.md").write_text(model_card(shipped, meta))


def model_card(model: MiniK3, meta: dict) -> str:
    """The MODEL_CARD.md text, filled from the trained model and its training record."""
    cfg = model.cfg
    kinds = model.kinds
    schedule = " ".join("A" if k == "mla" else "K" for k in kinds)
    mla = [i + 1 for i, k in enumerate(kinds) if k == "mla"]
    kda_state = cfg.kda_heads * cfg.kda_head_dim * cfg.kda_head_dim * 4
    mla_token = (cfg.kv_latent_dim + cfg.shared_key_dim) * 4
    n_kda, n_mla = kinds.count("kda"), kinds.count("mla")
    return f"""# mini-K3 — model card

A byte-level miniature of Kimi K3, trained for the lessons Kimi K3 and Experts.
It is real — every picture in those lessons is computed by these weights — but tiny:
it writes plausible-looking English-ish bytes, nothing more.

| | mini-K3 | Kimi K3 (core/specs) |
|---|---|---|
| layers | {cfg.num_layers}: `{schedule}` (K = KDA, A = latent attention) | 93: (K K K A) × 23 + A |
| layer rule | full attention at every {cfg.full_attn_every}th layer and the last: {mla} | every 4th and the last: 4, 8, …, 92, 93 |
| width | d_model {cfg.d_model} | 7,168 |
| KDA | {cfg.kda_heads} heads × {cfg.kda_head_dim}×{cfg.kda_head_dim} board, gate lower bound {cfg.gate_lower_bound} | 96 heads × 128×128, lower bound −5 |
| attention | NoPE latent attention, {cfg.mla_heads} heads; caches d_c = {cfg.kv_latent_dim} + d_R = {cfg.shared_key_dim} per token | NoPE gated MLA, 96 heads; caches 512 + 64 |
| Attention Residuals | Block AttnRes, {cfg.attn_res_block_size} layers per block | blocks of 12 layers |
| feed-forward | layer 1 dense ({cfg.dense_hidden} hidden); then {cfg.num_experts} routed experts, top-{cfg.top_k}, + {cfg.num_shared_experts} shared, expert hidden {cfg.expert_hidden}, SiTU-GLU | layer 1 dense; then 896 routed, top-16, + 2 shared |
| vocabulary | 256 bytes | 163,840 tokens |
| parameters | {meta["total_params"]:,} total, {meta["active_params"]:,} active per token ({meta["active_params"] / meta["total_params"]:.0%}) | 2.8T total, 104B active (as published; counted from its config: {format_params(SPECS["kimi_k3"].active_params())}, see the map) |

Memory while decoding (fp32 in this model): each KDA layer keeps {cfg.kda_heads} fixed boards, one per head,
{kda_state:,} bytes in all ({n_kda} layers → {n_kda * kda_state:,} bytes, whatever the length); each
attention layer adds {mla_token} bytes per token ({n_mla} layers → {n_mla * mla_token} bytes per token).

## Training

- Corpus: `assets/corpus.txt` ({meta["corpus_bytes"]:,} bytes, sha256 `{meta["corpus_sha256"][:16]}…`), built by
  `python -m core.train.corpus`; split by `core.train.corpus.split_train_heldout` into {meta["train_bytes"]:,} training bytes
  and {meta["heldout_bytes"]:,} held-out bytes (the last 5%, cut at a document boundary).
- {meta["train_steps"]} AdamW steps, batch {meta["batch_size"]} × {meta["seq_len"]} bytes, peak lr {meta["lr"]},
  warm-up then cosine (`core.train`), seed {meta["seed"]}, one CPU thread; {meta["train_minutes"]} minutes here.
- MoE balance: no auxiliary loss; each step every expert's selection bias moves by ±{BIAS_RATE} towards
  even load (DeepSeek-V3 / K3 "noaux_tc"). The bias changes which experts are picked, never their weights.
- Final training loss {meta["final_train_loss"]:.3f} nats/byte (mean of the last 20 steps).
- **Held-out loss {meta["heldout_loss"]:.3f} nats/byte** ({meta["heldout_loss"] / 0.6931:.2f} bits/byte), measured on the
  shipped bf16 weights (a uniform guess over 256 bytes would be 5.545 nats). The corpus is small and
  largely templated, so this number measures fit to the course corpus, not to English in general.

Weights are stored in bf16 (as K3 stores its dense weights) and loaded as fp32.

## Simplifications against Kimi K3

- Byte vocabulary instead of a 163,840-token tokenizer; no multi-token prediction, no vision tower.
- No short convolution before q/k/v in the KDA layers (K3 uses kernel 4); q, k, v get a SiLU, then q, k are
  L2-normalised. Position information therefore comes only from the causal order and the KDA decay (K3's MLA
  is NoPE too).
- The low-rank decay projection (f_a, f_b) is kept; the output gate is full rank, as in K3.
- Latent attention: no low-rank query compression (K3: q_lora 1536); the cached latent is up-projected to
  per-head keys and values explicitly when attending instead of absorbing the up-projection into the
  query and output (same numbers, more arithmetic). Cached per token: the latent c_t and a small key
  part shared by all heads, exactly as MLA does.
- AttnRes keys use an RMSNorm without a learned scale (K3's learned scale is folded into its pseudo-query).
- Routed experts run at full width (K3 runs them in a 3,584-wide latent with a down/up projection);
  shared experts are separate modules rather than one fused MLP (same parameter count).
- Initial per-channel keep rates of the KDA gate are spread between 0.5 and 0.99 per step (our choice).

## Regenerate

    python -m core.train.corpus          # only if assets/corpus.txt is missing
    python -m core.train mini_k3   # {meta["train_minutes"]} min here (one thread on a busy 2-core box); same seed → same weights
"""
