"""Numbers for the collapsed "Go deeper" sections of Chunks to Experts, computed here so pages hold no maths.

- Chunks: a small worked example of the chunked delta rule (the UT transform's T, W, U and the board
  handed between chunks), computed with `core/ops`, and the cost of chunked vs recurrent forms
  (DeltaNet paper App. B, arXiv 2406.06484; fla `fla/ops/delta_rule/README.md`).
- Forgetting: what KDA's lower-bounded gate allows per step, and why the chunked form cannot split
  e^{Γ_r − Γ_j} into e^{Γ_r}·e^{−Γ_j} (fla `fla/ops/kda/chunk.py` docstring; docs/sources.md §1.6).
- Kimi K3: what Attention Residuals add in parameters, memory and work per token (docs/sources.md §1.8).
- Experts: how many distinct experts, and so how many expert bytes, one decoding step of a batch reads.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from core.ops import delta_rule
from core.ops.common import solve_unit_lower
from core.plan.experts import distinct_experts
from core.specs import ModelSpec, attn_res_block_starts


def chunk_example(tokens: int = 4, chunk: int = 2, dim: int = 3, seed: int = 0) -> dict:
    """One head of the delta rule on `tokens` tokens in chunks of `chunk`: every matrix of chunk 1.

    Returns numpy arrays K, V, beta (chunk 1), L = strictLower(diag(β) K Kᵀ), T = (I + L)^{-1} diag(β),
    W = T K, U = T V, the board after each chunk, and the largest gap between the chunked and the
    token-by-token outputs (rounding only).
    """
    g = torch.Generator().manual_seed(seed)
    q = torch.nn.functional.normalize(
        torch.randn(1, tokens, 1, dim, generator=g, dtype=torch.float64), dim=-1
    )
    k = torch.nn.functional.normalize(
        torch.randn(1, tokens, 1, dim, generator=g, dtype=torch.float64), dim=-1
    )
    v = torch.randn(1, tokens, 1, dim, generator=g, dtype=torch.float64)
    beta = torch.sigmoid(torch.randn(1, tokens, 1, generator=g, dtype=torch.float64))
    K, V, b = k[0, :chunk, 0], v[0, :chunk, 0], beta[0, :chunk, 0]  # (C, d), (C, d), (C,)
    L = (b[:, None] * (K @ K.T)).tril(-1)  # (C, C)
    T = solve_unit_lower(L, torch.diag(b))  # (C, C)
    W, U = T @ K, T @ V
    boards = [delta_rule.chunk(q[:, :n], k[:, :n], v[:, :n], beta=beta[:, :n], chunk_size=chunk)[1][0, 0]
              for n in range(chunk, tokens + 1, chunk)]  # fmt: skip
    o_chunk, _ = delta_rule.chunk(q, k, v, beta=beta, chunk_size=chunk)
    o_rec, _ = delta_rule.recurrent(q, k, v, beta=beta)
    as_np = {"K": K, "V": V, "beta": b, "L": L, "T": T, "W": W, "U": U}
    out = {name: x.numpy() for name, x in as_np.items()}
    out["boards"] = [s.numpy() for s in boards]
    out["max_gap"] = float((o_chunk - o_rec).abs().max())
    return out


def chunk_costs(tokens: int, chunk: int, dim: int) -> dict[str, float]:
    """Multiply-adds per head, to leading order, of the chunked and the token-by-token forms.

    Inside chunks (scores, UT solve, W and U): about T·C·d; hand-overs (W S, Q S, Kᵀ Ṽ per chunk):
    about T·d²; steps that must wait for the previous one: T/C chunks (vs T tokens recurrently).
    """
    return {
        "inside_chunks": float(tokens * chunk * dim),
        "handovers": float(tokens * dim * dim),
        "sequential_chunked": float(math.ceil(tokens / chunk)),
        "sequential_recurrent": float(tokens),
        "recurrent_total": float(3 * tokens * dim * dim),
    }


def gate_bounds(lower_bound: float = -5.0, chunk: int = 64) -> dict[str, float]:
    """K3's gate g = lb·sigmoid(·) ∈ (lb, 0): the strongest fade per step, and why factoring overflows."""
    f32_max_log = math.log(float(np.finfo(np.float32).max))
    return {
        "min_keep_per_step": math.exp(lower_bound),
        "chunk_log_fade": lower_bound * chunk,
        "steps_to_overflow_f32": math.ceil(f32_max_log / -lower_bound),
        "f32_max_log": f32_max_log,
    }


def attn_res_costs(spec: ModelSpec) -> dict[str, float]:
    """What Attention Residuals add to a model with `attn_res_block_size` (K3: 12 decoder layers a block)."""
    if spec.attn_res_block_size is None:
        raise ValueError(f"{spec.name} has no Attention Residuals")
    blocks = len(attn_res_block_starts(spec.num_layers, spec.attn_res_block_size))
    sources = 1 + blocks  # embedding + completed blocks + the running partial block, at most
    mixes = 2 * spec.num_layers + 1  # before attention and before the MLP in every layer, once at the end
    flops = mixes * sources * spec.hidden * 2 * 2  # score (dot) and weighted sum, 2 FLOPs a multiply-add
    params = mixes * 2 * spec.hidden  # a pseudo-query and an RMSNorm weight per mix
    return {
        "max_sources": float(sources),
        "mixes_per_token": float(mixes),
        "flops_per_token": float(flops),
        "share_of_weight_flops": flops / (2.0 * spec.active_params(count_embedding_table=False)),
        "params": float(params),
        "in_flight_bytes_per_token": float(sources * spec.hidden * 2),
    }


def expert_reads(
    spec: ModelSpec, bits_per_expert_weight: float, batches: list[int]
) -> list[dict[str, float]]:
    """Per decoding step of a batch: distinct experts per MoE layer and routed-expert bytes, in all and per token."""
    if spec.moe is None:
        raise ValueError(f"{spec.name} has no experts")
    layers = spec.num_layers - spec.first_k_dense
    per_expert = spec.moe.expert_params(spec.hidden) * bits_per_expert_weight / 8
    rows = []
    for b in batches:
        touched = distinct_experts(spec.moe.experts, spec.moe.top_k, b)
        step = layers * touched * per_expert
        rows.append({"batch": b, "experts": touched, "step_bytes": step, "per_token_bytes": step / b})
    return rows
