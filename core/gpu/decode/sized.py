"""What every decode model says about its own weights, written once: bytes per number, parameters held,
and their bytes (the roofline and the batch sweep's fit both start from these)."""

from __future__ import annotations

import torch
from torch import nn


class SizedModule(nn.Module):
    """An nn.Module whose weights are all of `dtype`: its element size, parameter count and weight bytes."""

    dtype: torch.dtype

    @property
    def elem_bytes(self) -> int:
        return torch.finfo(self.dtype).bits // 8

    def total_params(self) -> int:
        """Parameters stored (a tensor shared by two names once)."""
        return sum(p.numel() for p in self.parameters())

    def weight_bytes(self) -> int:
        return self.total_params() * self.elem_bytes
