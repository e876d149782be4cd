"""The two ways one layer reads a prompt of T tokens at once, on the same inputs.

- `attention`: causal softmax attention, torch's `scaled_dot_product_attention` (its fused CPU kernel);
  its work grows with T² (every token looks at every earlier one).
- `chunked`: the Gated DeltaNet's chunked WY / UT form (core/ops/gated_delta_rule.chunk, the form Chunks
  derives); its work grows with T (inside a chunk, matrix products; between chunks, one board handed on).

Only the mixing part: the projections before and after cost the same for both and are left out.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from core.ops import gated_delta_rule
from core.ops.inputs import random_inputs

Inputs = dict[str, Tensor]


def prompt_inputs(
    tokens: int, heads: int, head_dim: int, *, dtype: torch.dtype = torch.float32, seed: int = 0
) -> Inputs:
    """One sequence of `tokens` for `heads` heads of width `head_dim`: q, k (unit), v (B, T, H, D), β and a
    per-head log gate (B, T, H) — core/ops/inputs.py's generator, with no starting board (a fresh prompt)."""
    if min(tokens, heads, head_dim) < 1:
        raise ValueError(
            f"tokens, heads and head width must be at least 1, got {tokens}, {heads}, {head_dim}"
        )
    x = random_inputs(tokens, dtype=dtype, seed=seed, b=1, h=heads, k_dim=head_dim, v_dim=head_dim)
    return {name: x[name] for name in ("q", "k", "v", "beta", "g")}


def attention(x: Inputs) -> Tensor:
    """Causal softmax attention over the whole prompt → o: (B, T, H, D). SDPA wants (B, H, T, D)."""
    q, k, v = (x[name].transpose(1, 2) for name in ("q", "k", "v"))  # (B, H, T, D) each, views
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)  # (B, T, H, D)


def chunked(x: Inputs, chunk_size: int = 64) -> Tensor:
    """The Gated DeltaNet's chunked form over the whole prompt → o: (B, T, H, D) (the final board is
    what decoding would carry on from; prefill's output is the same either way)."""
    o, _board = gated_delta_rule.chunk(
        x["q"], x["k"], x["v"], beta=x["beta"], g=x["g"], chunk_size=chunk_size
    )
    return o
