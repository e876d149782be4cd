"""The records a model emits per generated token — the only thing pages draw.

`model.step(token, cache)` returns a `Trace` (every live model does: see the model protocol,
core/models/protocol.py); `core/figures` turns traces into pictures.
Arrays are numpy float32 copies, so a trace can be cached, pickled and kept in
session state without holding on to torch tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class LayerTrace:
    """What one layer did for one token.

    kind:    "attention" (softmax, growing cache), "mla" (latent cache),
             "linear", "delta", "gated_delta", "kda" (fixed-size board), "dense" …
    memory:  "cache" (grows a row per token) or "state" (fixed size).
    """

    index: int
    kind: str
    memory: str
    memory_bytes: int
    keys: np.ndarray | None = None  # (H, T, Dh) cached keys, cache layers only
    values: np.ndarray | None = None  # (H, T, Dh) cached values
    latent: np.ndarray | None = None  # (T, d_c) cached latent, MLA layers only
    state: np.ndarray | None = None  # (H, K, V) fixed board, state layers only
    attention: np.ndarray | None = None  # (H, T) this token's attention weights
    attn_res_weights: np.ndarray | None = None  # (n_sources,) AttnRes mix before this layer
    experts: list[int] | None = None  # routed experts chosen for this token
    expert_weights: list[float] | None = None
    parts: dict[str, np.ndarray] = field(default_factory=dict)  # decay / erase / write …


@dataclass
class Trace:
    """One generation step: the token produced and what it cost."""

    token: int  # the id produced by this step
    position: int  # index of the token fed in at this step (0-based)
    logits: np.ndarray  # (vocab,) scores for the next token
    layers: list[LayerTrace]
    positions_computed: int  # positions run through the model this step (1 with a cache)
    cache_bytes: int  # bytes of growing cache held after the step
    state_bytes: int  # bytes of fixed-size state held after the step
    wall_ms: float  # measured wall time of the step

    @property
    def memory_bytes(self) -> int:
        return self.cache_bytes + self.state_bytes


def as_array(x) -> np.ndarray:
    """A float32 numpy copy of a torch tensor (detached): safe to keep in a trace or a cache."""
    return x.detach().float().numpy().copy()
