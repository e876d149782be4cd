"""A KV cache allocated once for `room` positions and written in place — what a CUDA graph needs.

The eager models (core/models/qwen35_layers.py) grow their caches with `torch.cat`, a new tensor
every token: fine on a CPU, but a captured CUDA graph replays fixed addresses. Here the keys and
values live in buffers made once (as llama.cpp, vLLM and transformers' `StaticCache` keep theirs);
a step writes its row at position `start` and attends over rows `0 … start + T − 1`. Positions are
plain Python ints, as in core/gpu/decode/models.py: the house's graph helper (core/gpu/timing/graphs.py)
captures a whole repetition of steps whose positions it knows in advance, so each captured step
reads exactly the rows it would read eagerly — the cost grows with depth, as it should.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class StaticKV:
    """One attention layer's preallocated cache; rows past the written ones hold nothing meaningful."""

    keys: torch.Tensor  # (B, Hkv, room, Dh), rotary applied
    values: torch.Tensor  # (B, Hkv, room, Dh)

    @classmethod
    def empty(
        cls, batch: int, kv_heads: int, room: int, head_dim: int, dtype: torch.dtype, device: torch.device
    ) -> StaticKV:
        shape = (batch, kv_heads, room, head_dim)
        return cls(
            torch.zeros(shape, dtype=dtype, device=device), torch.zeros(shape, dtype=dtype, device=device)
        )

    @property
    def room(self) -> int:
        return self.keys.shape[2]


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kv: StaticKV, start: int) -> torch.Tensor:
    """Write k, v (B, Hkv, T, Dh) at rows start … start + T − 1, then causal attention of q (B, H, T, Dh)
    over every row written so far → (B, H, T, Dh). Grouped heads: each KV head serves H / Hkv queries."""
    T = q.shape[2]
    end = start + T
    if end > kv.room:
        raise ValueError(f"the cache holds {kv.room} positions; this step needs {end}")
    kv.keys[:, :, start:end].copy_(k)  # in place: the buffer's address never changes
    kv.values[:, :, start:end].copy_(v)
    keys, values = kv.keys[:, :, :end], kv.values[:, :, :end]  # (B, Hkv, end, Dh) views, no copy
    mask = None
    if T > 1:  # query i (at position start + i) sees keys 0 … start + i
        rows = torch.arange(T, device=q.device)[:, None] + start
        mask = torch.arange(end, device=q.device)[None, :] <= rows  # (T, end), True = attend
    if T == 1 and q.device.type == "cpu":
        return one_query_fp32(q, keys, values)
    return F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, enable_gqa=True)


def one_query_fp32(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """softmax(q Kᵀ / √Dh) V for one query per head, in fp32, the KV heads' queries grouped: q (B, H, 1, Dh),
    keys and values (B, Hkv, n, Dh) → (B, H, 1, Dh) in q's dtype.

    What a decode step on a CPU runs instead of scaled_dot_product_attention: that kernel tiles for many
    queries, and in bf16 on a CPU it is ~10× slower than in fp32. Measured on this project's 2-core AVX-512
    CPU (avx512_bf16), one thread, H = 8, Hkv = 2, Dh = 256 (Qwen3.5-0.8B's attention): bf16 at 1,024 rows
    4.7–5.5 ms there against 0.5 ms here (the rows cast to fp32 first), at 8,192 rows 39–46 against 4.8–6.7
    ms; fp32 at 8,192 rows 9.5–14 against 5.0–5.2 ms. In fp32 it is also closer to the exact result than
    bf16's kernel."""
    B, H, _, Dh = q.shape
    Hkv = keys.shape[1]
    grouped = q.reshape(B, Hkv, H // Hkv, Dh).float() * Dh**-0.5  # (B, Hkv, G, Dh), q untouched
    scores = torch.matmul(grouped, keys.float().transpose(-1, -2))  # (B, Hkv, G, n)
    weights = torch.softmax(scores, dim=-1)  # (B, Hkv, G, n)
    return torch.matmul(weights, values.float()).to(q.dtype).view(B, H, 1, Dh)
