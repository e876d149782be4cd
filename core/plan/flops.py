"""Floating-point work of a model per token: the weights' matmuls and attention over the context.

- Weights: 2 FLOPs (multiply + add) per active parameter per token (the standard 2·N rule,
  Kaplan et al. 2020 §2.1), counting the output head but not the input table (a lookup). In a prefill
  only the last prompt token needs logits, so the head is counted once per prompt, not per token
  (vLLM computes logits for the positions it samples from; transformers' generate passes
  `logits_to_keep=1` to the prefill pass).
- Softmax attention, one layer, one query over T kept tokens: scores q·k (2·H·d_qk·T) and the
  weighted sum of values (2·H·d_v·T). A causal prefill of T tokens does half of T² pairs.
  MLA in prefill, and in decode from a per-head cache, is counted as the decompressed heads
  (d_qk = nope + rope, d_v). Decoding from the latent cache, engines absorb the up-projections into
  the query and the output (DeepSeek-V2 §2.1.2; vLLM and SGLang's MLA decode): every head then
  scores the 576-wide latent + rope key and sums the 512-wide latent (d_qk = rank + rope, d_v = rank).
- A fixed-state layer (Gated DeltaNet, KDA): about 4 d_k×d_v passes per head per token (decay, read
  the old value, write, read out — `core/mechanisms.py`'s `macs_per_head`), 2 FLOPs each.
"""

from __future__ import annotations

from core.plan.config import PlannedModel
from core.plan.memory import LAYOUTS, tokens_kept
from core.specs import LatentAttention


def head_dims(model: PlannedModel, absorbed: bool = False) -> tuple[int, int, int]:
    """(heads, d_qk, d_v) of the full-attention layers; `absorbed`: MLA decoding from its latent."""
    attention = model.spec.attention
    if isinstance(attention, LatentAttention):
        if absorbed:
            rank = attention.kv_lora_rank
            return attention.heads, rank + attention.qk_rope_head_dim, rank
        return attention.heads, attention.qk_nope_head_dim + attention.qk_rope_head_dim, attention.v_head_dim
    return attention.heads, attention.head_dim, attention.head_dim


def board_flops_per_token(heads: int, d_k: int, d_v: int) -> float:
    """One fixed-state layer, one token: about 4 d_k×d_v passes per head (decay, read the old value, write,
    read out), 2 FLOPs each — the same in decode and in prefill (the planner's count of the chunked form)."""
    return 2.0 * 4 * heads * d_k * d_v


def causal_attention_flops(heads: int, d_qk: int, d_v: int, tokens: int, window: int | None = None) -> float:
    """One softmax-attention layer reading a prompt of `tokens` at once: scores and the weighted sum of values,
    2·H·(d_qk + d_v) per (query, key) pair, over half the pairs (causal) — or `window` keys per query at most."""
    if window is not None:
        return 2.0 * heads * (d_qk + d_v) * min(tokens, window) * tokens
    return 2.0 * heads * (d_qk + d_v) * tokens * (tokens + 1) / 2


def _linear_layer_flops_per_token(model: PlannedModel) -> float:
    linear = model.spec.linear
    return (
        0.0 if linear is None else board_flops_per_token(linear.v_heads, linear.head_k_dim, linear.head_v_dim)
    )


def decode_flops_per_token(
    model: PlannedModel, active_params: float, context: int, layout: str = "engine"
) -> float:
    """FLOPs one sequence spends on its next token at `context` (weights + attention + boards); the
    cache layout says whether MLA decodes absorbed from its latent (the serving engines) or per head."""
    spec = model.spec
    heads, d_qk, d_v = head_dims(model, absorbed=LAYOUTS[layout].absorbed_decode)
    n = 2.0 * active_params
    for layer, kind in enumerate(spec.layer_kinds()):
        if spec.linear is not None and kind == spec.linear.kind:
            n += _linear_layer_flops_per_token(model)
        else:
            n += 2.0 * heads * (d_qk + d_v) * tokens_kept(model, layer, context, LAYOUTS["engine"])
    return n


def prefill_flops(model: PlannedModel, active_params: float, tokens: int) -> float:
    """FLOPs to read a prompt of `tokens` in one pass: every active weight but the output head for every
    token, the head for the last token only (the logits of the next one), causal attention over half the
    pairs. `active_params` counts the head (as `ModelSpec.active_params(count_embedding_table=False)` does)."""
    spec = model.spec
    heads, d_qk, d_v = head_dims(model)
    head = spec.vocab * spec.hidden  # the output head (the tied table, where it is tied)
    n = 2.0 * (active_params - head) * tokens + 2.0 * head * min(tokens, 1)
    for layer, kind in enumerate(spec.layer_kinds()):
        if spec.linear is not None and kind == spec.linear.kind:
            n += _linear_layer_flops_per_token(model) * tokens
        elif model.sliding_window is not None and layer in model.sliding_layers:
            n += causal_attention_flops(heads, d_qk, d_v, tokens, model.sliding_window)
        else:
            n += causal_attention_flops(heads, d_qk, d_v, tokens)
    return n
