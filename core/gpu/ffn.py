"""The feed-forward halves of the decode models: dense, or a mixture of experts of equal size.

- `DenseFFN`: x → W2 gelu(W1 x); every weight is read for every token.
- `MoEFFN`: `n_shared` always-on experts plus `top_k` of the routed ones, chosen per token by
  a router (Kimi K3 wakes 2 shared + 16 of 896 experts). The chosen experts are gathered by
  index on the device, so routing never waits for the host; the gather copies the chosen
  weights once more (written, then read again), which a fused MoE kernel avoids — that copy
  is counted in `traffic()` as scratch, so the roofline knows about it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from core.gpu.traffic import Traffic


def weight(shape: tuple[int, ...], device: torch.device, dtype: torch.dtype) -> nn.Parameter:
    """A random N(0, 0.02²) weight that never needs a gradient."""
    w = torch.empty(shape, device=device, dtype=dtype).normal_(0.0, 0.02)
    return nn.Parameter(w, requires_grad=False)


def _bytes(*tensors: torch.Tensor) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


class DenseFFN(nn.Module):
    """x → W2 gelu(W1 x); every weight is read for every token."""

    def __init__(self, d: int, hidden: int, device: torch.device, dtype: torch.dtype) -> None:
        super().__init__()
        self.w1 = weight((d, hidden), device, dtype)
        self.w2 = weight((hidden, d), device, dtype)

    def active_params(self) -> int:
        return self.w1.numel() + self.w2.numel()

    def traffic(self) -> Traffic:
        return Traffic(weights=_bytes(self.w1, self.w2))

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (1, D) → (1, D)
        return F.gelu(h @ self.w1) @ self.w2


class MoEFFN(nn.Module):
    """`n_shared` always-on experts + `top_k` of the routed ones, chosen per token by a router."""

    def __init__(
        self,
        d: int,
        n_experts: int,
        n_shared: int,
        top_k: int,
        expert_hidden: int,
        device: torch.device,
        dtype: torch.dtype,
    ) -> None:
        super().__init__()
        n_routed = n_experts - n_shared
        if n_routed < top_k or top_k < 1:
            raise ValueError("need at least top_k routed experts")
        self.top_k = top_k
        self.router = weight((d, n_routed), device, dtype)
        self.shared_w1 = weight((d, n_shared * expert_hidden), device, dtype)
        self.shared_w2 = weight((n_shared * expert_hidden, d), device, dtype)
        self.w1 = weight((n_routed, d, expert_hidden), device, dtype)  # (E, D, Fe)
        self.w2 = weight((n_routed, expert_hidden, d), device, dtype)  # (E, Fe, D)

    def active_params(self) -> int:
        per_expert = self.w1[0].numel() + self.w2[0].numel()
        return self.router.numel() + self.shared_w1.numel() + self.shared_w2.numel() + self.top_k * per_expert

    def traffic(self) -> Traffic:
        """Router, shared experts and the top_k routed ones read; the gathered copy written and read."""
        routed = self.top_k * _bytes(self.w1[0], self.w2[0])
        return Traffic(
            weights=_bytes(self.router, self.shared_w1, self.shared_w2) + routed,
            scratch=2 * routed,
        )

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (1, D) → (1, D)
        out = F.gelu(h @ self.shared_w1) @ self.shared_w2
        logits = (h @ self.router)[0]  # (E,)
        top_v, top_i = torch.topk(logits, self.top_k)  # (k,) — stays on the device
        gate = torch.softmax(top_v.float(), -1).to(h.dtype)  # (k,)
        w1 = self.w1.index_select(0, top_i)  # (k, D, Fe)
        w2 = self.w2.index_select(0, top_i)  # (k, Fe, D)
        # batched matrix × vector on the gathered, contiguous experts: no transposed copies
        # (einsum did one; measured on an H200: 1.55 → 1.31 ms per step, docs/gpu-runs/2026-11-30-*)
        hidden = F.gelu(torch.bmm(h.expand(self.top_k, 1, -1), w1)) * gate[:, None, None]  # (k, 1, Fe)
        return out + torch.bmm(hidden, w2).sum(0)  # (1, D)
