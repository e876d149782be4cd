"""The recall models' token mixers: softmax attention with its cache, the fixed-board rules.

Fixed-state mixers follow fla's layers (`fla/layers/delta_net.py`, `gated_deltanet.py`,
`kda.py`): q and k are L2-normalised per head, `beta = sigmoid(W_b x)`, gates in log
space `g = −exp(A_log) · softplus(W_a x + dt_bias)`, and the head outputs pass an RMS
norm before the output projection. As in fla, q, k and v each pass a short causal
depthwise convolution (kernel 3) after their projection, so a token's key can be built
from its predecessor — which is how a value learns which key it belongs to (H3, Based
and fla all use one). Every model, softmax attention included, has the same convolutions.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from core.mechanisms import get as get_rule
from core.models.layers import RMSNorm
from core.recall.config import RecallModelConfig


class ShortConv(nn.Module):
    """Depthwise causal convolution over time: position t mixes tokens t−2, t−1, t."""

    def __init__(self, dim: int, size: int) -> None:
        super().__init__()
        self.size = size
        self.conv = nn.Conv1d(dim, dim, size, groups=dim, padding=size - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, D)
        T = x.shape[1]
        return self.conv(x.transpose(1, 2))[..., :T].transpose(1, 2)  # (B, T, D)

    def step(self, x: torch.Tensor, window: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One position x (B, 1, D) after `window` (B, size − 1, D) → output (B, 1, D), next window."""
        full = torch.cat([window, x], dim=1)  # (B, size, D)
        y = F.conv1d(full.transpose(1, 2), self.conv.weight, self.conv.bias, groups=x.shape[-1])  # (B, D, 1)
        return y.transpose(1, 2), full[:, 1:]


class SoftmaxAttention(nn.Module):
    """Causal multi-head softmax attention; its memory is the K/V cache, a row per token."""

    kind = "attention"

    def __init__(self, cfg: RecallModelConfig) -> None:
        super().__init__()
        self.H, self.Dh = cfg.n_heads, cfg.head_dim
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.conv = ShortConv(3 * cfg.d_model, cfg.conv_size)
        self.out = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor, keep_memory: bool = False):
        B, T, D = x.shape
        q, k, v = self.conv(self.qkv(x)).view(B, T, 3, self.H, self.Dh).unbind(2)  # each (B, T, H, Dh)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, T, Dh)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, Dh)
        y = self.out(o.transpose(1, 2).reshape(B, T, D))
        memory = (k.detach(), v.detach()) if keep_memory else None
        return y, memory

    def step(self, x: torch.Tensor, window: torch.Tensor, memory, keep_parts: bool = True):
        """One token x (B, 1, D): append its key and value, attend over all of them."""
        B, _, D = x.shape
        qkv, window = self.conv.step(self.qkv(x), window)
        q, k, v = (t.transpose(1, 2) for t in qkv.view(B, 1, 3, self.H, self.Dh).unbind(2))  # (B, H, 1, Dh)
        keys, values = (torch.cat([old, new], dim=2) for old, new in zip(memory, (k, v), strict=True))
        weights = ((q @ keys.transpose(-1, -2)) * self.Dh**-0.5).softmax(dim=-1)  # (B, H, 1, T)
        y = self.out((weights @ values).transpose(1, 2).reshape(B, 1, D))
        return y, window, (keys, values), {"attention": weights[:, :, 0]}

    def new_memory(self, batch: int, dtype: torch.dtype):
        empty = torch.zeros(batch, self.H, 0, self.Dh, dtype=dtype)  # (B, H, 0, Dh)
        return empty, empty.clone()

    def cache_elements_per_token(self) -> int:
        return 2 * self.H * self.Dh

    def state_elements(self) -> int:
        return 0


class FixedStateMixer(nn.Module):
    """Linear attention, DeltaNet, Gated DeltaNet or KDA: a K×V board per head, through core/ops."""

    def __init__(self, cfg: RecallModelConfig, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.rule = get_rule(kind)
        self.H, self.K = cfg.n_heads, cfg.head_dim
        self.chunk_size = cfg.chunk_size
        D = cfg.d_model
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.conv = ShortConv(3 * D, cfg.conv_size)
        self.out = nn.Linear(D, D, bias=False)
        self.out_norm = RMSNorm(self.K)
        if self.rule.takes_beta:
            self.beta_proj = nn.Linear(D, self.H)
        if self.rule.gated:
            n_gates = self.H if self.rule.gate == "head" else self.H * self.K
            self.gate_proj = nn.Linear(D, n_gates, bias=False)
            # fla / Mamba-2 draw A ~ U(1, 16) per head; with one head that draw alone would set the
            # memory span (A = 11 forgets most channels within a few tokens), so the heads get
            # A spread evenly over [1, 16] instead, starting at 1 (H = 1 → A = 1). dt stays
            # log-uniform in [1e-3, 1e-1] per gate, stored through the inverse softplus.
            self.A_log = nn.Parameter(torch.log(torch.linspace(1.0, 16.0, self.H)))
            dt = torch.exp(torch.empty(n_gates).uniform_(math.log(1e-3), math.log(1e-1)))
            self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))
        self.op = self.rule.ops

    def gates(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """beta = sigmoid(W_b x) (B, T, H); g = −exp(A_log)·softplus(W_a x + dt_bias), log space."""
        B, T, _ = x.shape
        extra: dict[str, torch.Tensor] = {}
        if self.rule.takes_beta:
            extra["beta"] = torch.sigmoid(self.beta_proj(x))  # (B, T, H)
        if self.rule.gated:
            raw = F.softplus(self.gate_proj(x) + self.dt_bias)
            if self.rule.gate == "head":
                extra["g"] = -self.A_log.exp() * raw  # (B, T, H)
            else:
                extra["g"] = -self.A_log.exp()[:, None] * raw.view(B, T, self.H, self.K)  # (B, T, H, K)
        return extra

    def forward(self, x: torch.Tensor, keep_memory: bool = False):
        B, T, D = x.shape
        q, k, v = self.conv(self.qkv(x)).view(B, T, 3, self.H, self.K).unbind(2)  # each (B, T, H, K)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        o, S = self.op.chunk(
            q, k, v, **self.gates(x), chunk_size=self.chunk_size
        )  # (B, T, H, K), (B, H, K, K)
        y = self.out(self.out_norm(o).reshape(B, T, D))
        return y, (S.detach() if keep_memory else None)

    def step(self, x: torch.Tensor, window: torch.Tensor, S: torch.Tensor, keep_parts: bool = True):
        """One token x (B, 1, D): the rule's `step` on the board S (B, H, K, V)."""
        B, _, D = x.shape
        qkv, window = self.conv.step(self.qkv(x), window)
        q, k, v = qkv.view(B, 3, self.H, self.K).unbind(1)  # each (B, H, K)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        gates = {f"{name}_t": value[:, 0] for name, value in self.gates(x).items()}  # beta_t, g_t
        res = self.op.step(S, q, k, v, **gates, keep_parts=keep_parts)
        y = self.out(self.out_norm(res.output).reshape(B, 1, D))
        return y, window, res.state, res.parts

    def new_memory(self, batch: int, dtype: torch.dtype) -> torch.Tensor:
        return torch.zeros(batch, self.H, self.K, self.K, dtype=dtype)  # (B, H, K, V)

    def cache_elements_per_token(self) -> int:
        return 0

    def state_elements(self) -> int:
        return self.H * self.K * self.K
