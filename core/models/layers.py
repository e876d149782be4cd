"""Building blocks shared by the tiny models (mini-K3, the recall models).

One RMSNorm for every model (Zhang & Sennrich 2019, "Root Mean Square Layer
Normalization"; as in HF transformers' `LlamaRMSNorm`): divide by the root mean
square over the last axis, then scale by a learned per-channel weight. The
normalisation itself is `core.ops.attn_res.rms_norm`, the same one Attention
Residuals use for their keys (there without a learned scale).
"""

from __future__ import annotations

import torch
import torch.nn as nn

from core.ops.attn_res import rms_norm


class RMSNorm(nn.Module):
    """x / rms(x) · weight over the last axis; the parameter is `weight` (checkpoints rely on the name)."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.eps) * self.weight
