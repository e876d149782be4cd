"""Mixture of Experts with shared experts and a sigmoid router, as in Kimi K3.

Sources: DeepSeekMoE / DeepSeek-V3 (shared + routed experts, sigmoid scores,
aux-loss-free balancing bias "noaux_tc"); Kimi K3 config and release code
(HF transformers `KimiK3MoE`, mlx-lm `KimiK3SparseMoE`: 896 routed experts, top-16,
2 shared, `moe_renormalize`, `routed_scaling_factor`, SiTU-GLU activation).

    y = Σ_shared E_s(x) + Σ_{e ∈ top-k} w_e(x) · E_e(x)
    s = sigmoid(W_r x)                      one score per routed expert
    top-k picked on s + b                   b: balancing bias, changes *who* is picked
    w = s[top-k] / Σ s[top-k] · scale       weights use the raw scores, never the bias

Every token runs all shared experts and exactly k routed ones, so the weights it
reads per token (the "active" parameters) are a small slice of the total.
Simplification against K3: no latent down-projection for the routed experts
(K3 routes on its 7,168-wide token, projects it down to 3,584, runs the routed experts
there, RMS-normalises their weighted sum and projects it back up).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn


def situ(gate: torch.Tensor, up: torch.Tensor, beta: float = 4.0, linear_beta: float = 25.0) -> torch.Tensor:
    """K3's SiTU-GLU: a SiLU-like gate and a linear branch, both softly bounded by tanh."""
    return beta * torch.tanh(gate / beta) * torch.sigmoid(gate) * (linear_beta * torch.tanh(up / linear_beta))


class GLUExpert(nn.Module):
    """One feed-forward expert: d_model → hidden (gated) → d_model, no biases."""

    def __init__(self, d_model: int, hidden: int) -> None:
        super().__init__()
        self.gate = nn.Linear(d_model, hidden, bias=False)
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(situ(self.gate(x), self.up(x)))


@dataclass
class MoEConfig:
    d_model: int = 96
    num_experts: int = 16  # routed experts
    top_k: int = 2  # routed experts woken per token
    num_shared: int = 1  # experts every token runs
    expert_hidden: int = 48
    routed_scaling_factor: float = 1.0
    renormalize: bool = True


@dataclass
class Routing:
    """Which routed experts each token woke, and with what weight."""

    expert_ids: torch.Tensor  # (N, k) long
    weights: torch.Tensor  # (N, k) mixing weights (renormalised raw scores × scale)
    scores: torch.Tensor  # (N, E) raw sigmoid scores, before the bias


def route(
    logits: torch.Tensor,
    top_k: int,
    bias: torch.Tensor | None = None,
    scaling: float = 1.0,
    renormalize: bool = True,
) -> Routing:
    """Sigmoid scores → top-k choice on score + bias → weights from the raw scores.

    logits: (N, E) router outputs; bias: (E,) balancing bias ("noaux_tc").
    """
    scores = torch.sigmoid(logits.float())  # (N, E)
    choice = scores if bias is None else scores + bias.float()  # (N, E) used for selection only
    expert_ids = choice.topk(top_k, dim=-1).indices  # (N, k)
    picked = scores.gather(-1, expert_ids)  # (N, k) raw scores of the chosen experts
    if renormalize:
        picked = picked / (picked.sum(dim=-1, keepdim=True) + 1e-20)
    return Routing(expert_ids=expert_ids, weights=picked * scaling, scores=scores)


def tokens_per_expert(expert_ids: torch.Tensor, num_experts: int) -> torch.Tensor:
    """(E,) how many token slots each routed expert served."""
    return torch.bincount(expert_ids.reshape(-1), minlength=num_experts)


def expert_params(d_model: int, hidden: int) -> int:
    """Weights in one GLU expert: gate, up and down matrices."""
    return 3 * d_model * hidden


class MoE(nn.Module):
    """Shared experts that always run plus top-k routed experts chosen per token."""

    def __init__(self, cfg: MoEConfig) -> None:
        super().__init__()
        if not 1 <= cfg.top_k <= cfg.num_experts:
            raise ValueError(f"top_k must be in 1..{cfg.num_experts}, got {cfg.top_k}")
        self.cfg = cfg
        self.router = nn.Linear(cfg.d_model, cfg.num_experts, bias=False)
        # The balancing bias is not learned by gradient descent: a trainer nudges it
        # up for under-used experts and down for busy ones (DeepSeek-V3's scheme).
        self.register_buffer("balance_bias", torch.zeros(cfg.num_experts))
        # Counter: token slots each routed expert has served in training since the last reset_load().
        # Only a training forward counts: the served model is shared by every reader of the app, and
        # a reader's forward pass (eval mode) must leave every parameter and buffer as it found them.
        self.register_buffer("load", torch.zeros(cfg.num_experts, dtype=torch.long), persistent=False)
        self.experts = nn.ModuleList(
            GLUExpert(cfg.d_model, cfg.expert_hidden) for _ in range(cfg.num_experts)
        )
        self.shared = nn.ModuleList(GLUExpert(cfg.d_model, cfg.expert_hidden) for _ in range(cfg.num_shared))

    def route(self, x: torch.Tensor) -> Routing:
        """x: (N, D) → routing for each of the N tokens."""
        return route(
            self.router(x),
            self.cfg.top_k,
            bias=self.balance_bias,
            scaling=self.cfg.routed_scaling_factor,
            renormalize=self.cfg.renormalize,
        )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, Routing]:
        """x: (..., D) → (y (..., D), routing over the flattened tokens)."""
        shape = x.shape
        flat = x.reshape(-1, shape[-1])  # (N, D)
        routing = self.route(flat)
        if self.training:  # the balancing counter is a trainer's; see __init__
            self.load += tokens_per_expert(routing.expert_ids, self.cfg.num_experts)
        y = torch.zeros_like(flat)
        for shared in self.shared:
            y = y + shared(flat)
        for e in routing.expert_ids.unique().tolist():  # only experts some token picked ever run
            token_idx, slot = torch.nonzero(routing.expert_ids == e, as_tuple=True)  # tokens that chose e
            w = routing.weights[token_idx, slot].unsqueeze(-1).to(flat.dtype)  # (n_e, 1)
            y = y.index_add(0, token_idx, w * self.experts[e](flat[token_idx]))
        return y.reshape(shape), routing

    def reset_load(self) -> None:
        self.load.zero_()

    def total_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def active_params(self) -> int:
        """Weights one token touches: the router, the shared experts and k routed experts."""
        per_expert = expert_params(self.cfg.d_model, self.cfg.expert_hidden)
        router = self.router.weight.numel()
        return router + (self.cfg.num_shared + self.cfg.top_k) * per_expert


class DenseMLP(nn.Module):
    """A plain GLU feed-forward (K3's first layer is dense, not MoE)."""

    def __init__(self, d_model: int, hidden: int) -> None:
        super().__init__()
        self.mlp = GLUExpert(d_model, hidden)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return self.mlp(x), None

    def total_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def active_params(self) -> int:
        return self.total_params()


def update_balance_bias(moe: MoE, load: torch.Tensor, rate: float = 1e-3) -> None:
    """Aux-loss-free balancing step: raise the bias of under-used experts, lower busy ones.

    load: (E,) tokens per expert in the last batch. Changes selection only, never weights.
    """
    with torch.no_grad():
        mean = load.float().mean()
        moe.balance_bias += rate * torch.sign(mean - load.float())
