"""Attention Residuals: each layer picks its input by softmax attention over depth.

Source: Kimi Team, "Attention Residuals", arXiv 2603.15031 (2026); the layout of
the block form follows the Kimi K3 release code (HF transformers `modular_kimi_k3.py`,
mlx-lm `kimi_k3.py`), and the single mix matches fla's `fla/ops/attnres/naive.py`.

A plain pre-norm residual stream adds every earlier layer's output with weight 1:
`h_l = v_0 + v_1 + … + v_{l-1}` (v_0 = token embedding, v_i = output of layer i).
AttnRes replaces that fixed sum by a softmax over the sources, per token:

    h_l = Σ_i α_{i→l} · v_i ,     α_{i→l} = softmax_i( w_lᵀ RMSNorm(v_i) )

- keys are the RMS-normalised sources, values the *un-normalised* sources;
- the query `w_l` is one learned vector per layer (a "pseudo-query"), so the mix
  depends on the token only through its own layer outputs — no cross-token state,
  nothing added to the KV cache;
- a zero query gives uniform weights: a plain average of the sources.

Block AttnRes keeps memory at O(blocks · d) instead of O(layers · d): layers are
grouped into blocks, inside a block outputs are summed as usual (a running partial
sum), and a layer attends over the completed block sums plus the running partial.
With one layer per block it is exactly full AttnRes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch


@dataclass
class AttnResResult:
    """One depth mix: the mixed hidden state and the weight given to each source."""

    output: torch.Tensor  # (..., D)
    weights: torch.Tensor  # (..., N) softmax over the N sources, sums to 1


def rms_norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Divide by the root-mean-square over the last axis (no learned scale)."""
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)


def attn_res(query: torch.Tensor, sources: torch.Tensor, eps: float = 1e-6) -> AttnResResult:
    """Softmax over depth: mix the N stacked `sources` with one pseudo-query.

    query:   (D,)          the layer's learned pseudo-query w_l
    sources: (N, ..., D)   earlier outputs (or block sums), un-normalised
    """
    compute = torch.promote_types(sources.dtype, torch.float32)  # at least fp32, fp64 stays fp64
    values = sources.to(compute)  # (N, ..., D)
    logits = rms_norm(values, eps) @ query.to(compute)  # (N, ...)
    weights = torch.softmax(logits, dim=0)  # (N, ...)
    output = (weights.unsqueeze(-1) * values).sum(dim=0)  # (..., D)
    return AttnResResult(output=output.to(sources.dtype), weights=weights.movedim(0, -1))


class BlockResidualStream:
    """The residual stream of Block AttnRes, one token batch at a time.

    Holds the completed block sums (the embedding counts as block 0) and the
    running partial sum of the block being filled. A model calls `mix(query)`
    before each sub-layer, `add(output)` after it, and `close_block()` when a new
    block starts. Memory: (completed blocks + 1) vectors per token.
    """

    def __init__(self, embedding: torch.Tensor) -> None:
        self.blocks: list[torch.Tensor] = [embedding]  # each (..., D)
        self.partial: torch.Tensor | None = None  # (..., D) or None at a block start

    def sources(self) -> torch.Tensor:
        """(N, ..., D): completed blocks, then the partial sum if the block has one."""
        parts = self.blocks if self.partial is None else [*self.blocks, self.partial]
        return torch.stack(parts)

    @property
    def num_sources(self) -> int:
        return len(self.blocks) + (self.partial is not None)

    def mix(self, query: torch.Tensor, eps: float = 1e-6) -> AttnResResult:
        return attn_res(query, self.sources(), eps)

    def add(self, output: torch.Tensor) -> None:
        """Add a sub-layer output to the running partial sum of the current block."""
        self.partial = output if self.partial is None else self.partial + output

    def close_block(self) -> None:
        """Seal the partial sum as a completed block (no-op if the block is empty)."""
        if self.partial is not None:
            self.blocks.append(self.partial)
            self.partial = None


Layer = Callable[[torch.Tensor], torch.Tensor]


def full_attn_res(
    embedding: torch.Tensor, layers: Sequence[Layer], queries: torch.Tensor, eps: float = 1e-6
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Run `layers` with full AttnRes; every layer sees every earlier output.

    embedding: (..., D); queries: (L + 1, D) — one per layer plus one for the output mix.
    Returns the final mix (..., D) and the L + 1 weight tensors, the l-th of shape (..., l + 1).
    """
    assert queries.shape[0] == len(layers) + 1, "need one pseudo-query per layer plus one for the output"
    outputs = [embedding]  # v_0, v_1, …
    all_weights = []
    for layer, query in zip(layers, queries[:-1], strict=False):
        mixed = attn_res(query, torch.stack(outputs), eps)
        all_weights.append(mixed.weights)
        outputs.append(layer(mixed.output))
    final = attn_res(queries[-1], torch.stack(outputs), eps)
    all_weights.append(final.weights)
    return final.output, all_weights


def block_attn_res(
    embedding: torch.Tensor,
    layers: Sequence[Layer],
    queries: torch.Tensor,
    block_size: int,
    eps: float = 1e-6,
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Run `layers` with Block AttnRes: blocks of `block_size` layers summed inside.

    Same shapes as `full_attn_res`; the l-th weight tensor has one entry per
    completed block (embedding included) plus one for the running partial sum.
    """
    assert block_size >= 1
    assert queries.shape[0] == len(layers) + 1, "need one pseudo-query per layer plus one for the output"
    stream = BlockResidualStream(embedding)
    all_weights = []
    for index, (layer, query) in enumerate(zip(layers, queries[:-1], strict=False)):
        if index > 0 and index % block_size == 0:
            stream.close_block()
        mixed = stream.mix(query, eps)
        all_weights.append(mixed.weights)
        stream.add(layer(mixed.output))
    final = stream.mix(queries[-1], eps)
    all_weights.append(final.weights)
    return final.output, all_weights
