"""A worked example of the chunked delta rule, and what the chunked and recurrent forms cost.

`chunk_example` computes every matrix of one chunk (the UT transform's T, W, U and the board handed
between chunks) with `core/ops`, small enough to print; `chunk_costs` counts multiply-adds and
sequential steps of both forms (DeltaNet paper App. B, arXiv 2406.06484; fla
`fla/ops/delta_rule/README.md`). The Chunks page's Engineer depth shows both.
"""

from __future__ import annotations

import math

import torch

from core.ops import delta_rule
from core.ops.common import solve_unit_lower


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
