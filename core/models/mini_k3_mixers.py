"""mini-K3's two token mixers: Kimi Delta Attention (a fixed board per head) and NoPE
multi-head latent attention (a growing cache of small latents).

Sources as in core/models/mini_k3.py (Kimi K3 release code: HF transformers
`modular_kimi_k3.py`, mlx-lm `kimi_k3.py`; Kimi Linear for KDA; DeepSeek-V2 for MLA).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from core.models.layers import RMSNorm
from core.models.mini_k3_config import MiniK3Config
from core.ops import kda

# ---------------------------------------------------------------------------------------------
# Kimi Delta Attention layer: a fixed board per head
# ---------------------------------------------------------------------------------------------


@dataclass
class KDAInputs:
    """Everything the KDA op needs for some tokens, already activated."""

    q: torch.Tensor  # (B, T, H, K) L2-normalised
    k: torch.Tensor  # (B, T, H, K) L2-normalised
    v: torch.Tensor  # (B, T, H, V)
    beta: torch.Tensor  # (B, T, H)
    g: torch.Tensor  # (B, T, H, K) log-decay in (lb, 0)


class KDALayer(nn.Module):
    """Token mixer with a fixed d_k × d_v board per head (Kimi Linear / K3 KDA)."""

    def __init__(self, cfg: MiniK3Config) -> None:
        super().__init__()
        H, Dh, D = cfg.kda_heads, cfg.kda_head_dim, cfg.d_model
        self.heads, self.head_dim, self.lower_bound = H, Dh, cfg.gate_lower_bound
        self.chunk_size = cfg.chunk_size
        self.q_proj = nn.Linear(D, H * Dh, bias=False)
        self.k_proj = nn.Linear(D, H * Dh, bias=False)
        self.v_proj = nn.Linear(D, H * Dh, bias=False)
        self.f_a = nn.Linear(D, Dh, bias=False)  # low-rank decay projection, as in K3
        self.f_b = nn.Linear(Dh, H * Dh, bias=False)
        self.b_proj = nn.Linear(D, H, bias=False)
        self.g_proj = nn.Linear(D, H * Dh, bias=False)  # full-rank output gate
        self.o_norm = RMSNorm(Dh, cfg.norm_eps)
        self.o_proj = nn.Linear(H * Dh, D, bias=False)
        # A = exp(A_log) ~ U(1, 16) per head (fla's init). dt_bias is set so that the initial
        # per-step keep rate e^g of the channels is spread between 0.5 and 0.99 (our choice).
        A = torch.empty(H).uniform_(1, 16)
        self.A_log = nn.Parameter(A.log())
        keep = torch.linspace(0.99, 0.5, H * Dh).reshape(H, Dh)  # (H, K)
        frac = keep.log() / cfg.gate_lower_bound  # sigmoid(A · dt_bias) = g / lb
        self.dt_bias = nn.Parameter((torch.logit(frac) / A[:, None]).reshape(-1))

    def inputs(self, x: torch.Tensor) -> KDAInputs:
        """x: (B, T, D) → q, k, v, β, g for the op."""
        B, T, _ = x.shape
        H, Dh = self.heads, self.head_dim
        q = F.normalize(F.silu(self.q_proj(x)).view(B, T, H, Dh), dim=-1)  # (B, T, H, K)
        k = F.normalize(F.silu(self.k_proj(x)).view(B, T, H, Dh), dim=-1)  # (B, T, H, K)
        v = F.silu(self.v_proj(x)).view(B, T, H, Dh)  # (B, T, H, V)
        beta = torch.sigmoid(self.b_proj(x))  # (B, T, H)
        pre = (self.f_b(self.f_a(x)) + self.dt_bias).view(B, T, H, Dh)  # (B, T, H, K)
        g = self.lower_bound * torch.sigmoid(self.A_log.exp()[:, None] * pre)  # (B, T, H, K), in (lb, 0)
        return KDAInputs(q, k, v, beta, g)

    def finish(self, x: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        """Per-head norm, sigmoid output gate, output projection. o: (B, T, H, V) → (B, T, D)."""
        B, T = x.shape[:2]
        gate = torch.sigmoid(self.g_proj(x)).view(B, T, self.heads, self.head_dim)  # (B, T, H, V)
        return self.o_proj((self.o_norm(o) * gate).reshape(B, T, -1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Whole sequence at once with the chunked (WY/UT) form. x: (B, T, D)."""
        a = self.inputs(x)
        o, _ = kda.chunk(a.q, a.k, a.v, beta=a.beta, g=a.g, chunk_size=self.chunk_size)  # (B, T, H, V)
        return self.finish(x, o)

    def step(
        self, x: torch.Tensor, S: torch.Tensor, keep_parts: bool = True
    ) -> tuple[torch.Tensor, kda.StepResult, KDAInputs]:
        """One token. x: (B, 1, D), S: (B, H, K, V) → output (B, 1, D), the op's step record, inputs."""
        a = self.inputs(x)
        res = kda.step(
            S, a.q[:, 0], a.k[:, 0], a.v[:, 0], beta_t=a.beta[:, 0], g_t=a.g[:, 0], keep_parts=keep_parts
        )
        return self.finish(x, res.output[:, None]), res, a

    def new_state(self, batch: int, dtype=torch.float32) -> torch.Tensor:
        return torch.zeros(batch, self.heads, self.head_dim, self.head_dim, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# Multi-head latent attention layer: a growing cache of small latents
# ---------------------------------------------------------------------------------------------


@dataclass
class LatentCache:
    """What an MLA layer keeps per token: the latent c_t and the shared key part."""

    latent: torch.Tensor  # (B, T, d_c)
    shared_key: torch.Tensor  # (B, T, d_R)

    @property
    def length(self) -> int:
        return self.latent.shape[1]

    def nbytes(self) -> int:
        return (
            self.latent.numel() * self.latent.element_size()
            + self.shared_key.numel() * self.shared_key.element_size()
        )


class MLALayer(nn.Module):
    """NoPE multi-head latent attention with a sigmoid output gate (K3's "gated MLA")."""

    def __init__(self, cfg: MiniK3Config) -> None:
        super().__init__()
        H, Dh, Dc, Dr, D = cfg.mla_heads, cfg.mla_head_dim, cfg.kv_latent_dim, cfg.shared_key_dim, cfg.d_model
        self.heads, self.head_dim, self.latent_dim, self.shared_dim = H, Dh, Dc, Dr
        self.scale = (Dh + Dr) ** -0.5
        self.q_proj = nn.Linear(D, H * (Dh + Dr), bias=False)
        self.kv_down = nn.Linear(D, Dc + Dr, bias=False)  # x → [c_t ; k_shared]: what gets cached
        self.kv_norm = RMSNorm(Dc, cfg.norm_eps)
        self.kv_up = nn.Linear(Dc, H * 2 * Dh, bias=False)  # c_t → per-head key part and value
        self.g_proj = nn.Linear(D, H * Dh, bias=False)
        self.o_proj = nn.Linear(H * Dh, D, bias=False)

    def compress(self, x: torch.Tensor) -> LatentCache:
        """x: (B, T, D) → the per-token entries this layer caches."""
        c, k_shared = self.kv_down(x).split([self.latent_dim, self.shared_dim], dim=-1)
        return LatentCache(latent=self.kv_norm(c), shared_key=k_shared)  # (B, T, d_c), (B, T, d_R)

    def attend(self, x: torch.Tensor, cache: LatentCache, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """Queries from x (B, Tq, D) against all cached tokens; returns (B, Tq, D) and weights (B, H, Tq, Tk)."""
        B, Tq, _ = x.shape
        H, Dh, Dr, Tk = self.heads, self.head_dim, self.shared_dim, cache.length
        q = self.q_proj(x).view(B, Tq, H, Dh + Dr).transpose(1, 2)  # (B, H, Tq, Dh + Dr)
        kv = self.kv_up(cache.latent).view(B, Tk, H, 2 * Dh).transpose(1, 2)  # (B, H, Tk, 2·Dh)
        k_latent, v = kv.split([Dh, Dh], dim=-1)  # (B, H, Tk, Dh) each
        k_shared = cache.shared_key[:, None].expand(B, H, Tk, Dr)  # (B, H, Tk, d_R), same for every head
        k = torch.cat([k_latent, k_shared], dim=-1)  # (B, H, Tk, Dh + Dr)
        scores = (q @ k.transpose(-1, -2)) * self.scale  # (B, H, Tq, Tk)
        if causal:
            mask = torch.ones(Tq, Tk, dtype=torch.bool, device=x.device).tril(Tk - Tq)
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)  # (B, H, Tq, Tk)
        o = (weights @ v).transpose(1, 2)  # (B, Tq, H, Dh)
        gate = torch.sigmoid(self.g_proj(x)).view(B, Tq, H, Dh)
        return self.o_proj((o * gate).reshape(B, Tq, -1)), weights

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.attend(x, self.compress(x), causal=True)[0]

    def step(self, x: torch.Tensor, cache: LatentCache) -> tuple[torch.Tensor, LatentCache, torch.Tensor]:
        """One token x: (B, 1, D): append its latent, attend over the whole cache."""
        new = self.compress(x)
        cache = LatentCache(
            latent=torch.cat([cache.latent, new.latent], dim=1),  # (B, T + 1, d_c)
            shared_key=torch.cat([cache.shared_key, new.shared_key], dim=1),  # (B, T + 1, d_R)
        )
        out, weights = self.attend(x, cache, causal=False)
        return out, cache, weights

    def new_cache(self, batch: int, dtype=torch.float32) -> LatentCache:
        return LatentCache(
            latent=torch.zeros(batch, 0, self.latent_dim, dtype=dtype),
            shared_key=torch.zeros(batch, 0, self.shared_dim, dtype=dtype),
        )
