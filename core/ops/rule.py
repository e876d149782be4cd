"""The three public forms of every memory rule, written once with flash-linear-attention's signatures.

A rule module supplies what is its own: `_step`, the update of one token (the naive recurrence), and
`_chunk`, the chunkwise algorithm on a sequence already cut into chunks (`core.ops.common.Chunked`).
`forms(INPUTS, _step, _chunk)` returns `step`, `recurrent` and `chunk`, the same keyword arguments for
every rule as fla's `naive.py` / `chunk.py` pairs have, with the checks, casts, padding and the
token loop done here, in one place. Equal to each other for every rule (tests/core/ops/).
"""

from __future__ import annotations

from collections.abc import Callable

from torch import Tensor

from core.ops.common import (
    Chunked,
    RuleInputs,
    StepFn,
    StepResult,
    checked_step,
    chunk_prologue,
    from_chunks,
    recurrent_loop,
)

ChunkFn = Callable[[Chunked], tuple[Tensor, Tensor]]  # chunks → (o (B, H, N, C, V), final board (B, H, K, V))


def forms(inputs: RuleInputs, raw_step: StepFn, raw_chunk: ChunkFn) -> tuple[Callable, Callable, Callable]:
    """`step`, `recurrent` and `chunk` for the rule `inputs` names."""

    def step(
        S: Tensor,
        q_t: Tensor,
        k_t: Tensor,
        v_t: Tensor,
        *,
        beta_t: Tensor | None = None,
        g_t: Tensor | None = None,
        scale: float | None = None,
        keep_parts: bool = True,
    ) -> StepResult:
        """One token: the board's update, then the read with `q_t` (the rule's own words: its module).

        S: (B, H, K, V); q_t, k_t: (B, H, K); v_t: (B, H, V); beta_t: (B, H) where the rule erases;
        g_t: (B, H) for a gate per head, (B, H, K) per key channel. Parts: decayed, erase, write.
        Without `keep_parts` (decoding) the board `S` itself is updated and returned as `state` — no
        second board (`core.ops.in_place`) — unless autograd needs its old values.
        """
        return checked_step(inputs, raw_step, S, q_t, k_t, v_t, beta_t, g_t, scale, keep_parts)

    def recurrent(
        q: Tensor,
        k: Tensor,
        v: Tensor,
        *,
        beta: Tensor | None = None,
        g: Tensor | None = None,
        scale: float | None = None,
        initial_state: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """Token by token: a loop over `step`. q, k: (B, T, H, K); v: (B, T, H, V); beta: (B, T, H);
        g: (B, T, H) or (B, T, H, K). Returns `o: (B, T, H, V)` and the final board `(B, H, K, V)`."""
        return recurrent_loop(inputs, raw_step, q, k, v, beta, g, scale, initial_state)

    def chunk(
        q: Tensor,
        k: Tensor,
        v: Tensor,
        *,
        beta: Tensor | None = None,
        g: Tensor | None = None,
        scale: float | None = None,
        initial_state: Tensor | None = None,
        chunk_size: int = 64,
    ) -> tuple[Tensor, Tensor]:
        """Chunkwise: any T (padded inside), a power-of-two `chunk_size`; the same results as `recurrent`."""
        x = chunk_prologue(inputs, q, k, v, beta, g, scale, initial_state, chunk_size)
        o, S = raw_chunk(x)  # (B, H, N, C, V), (B, H, K, V)
        return from_chunks(o, x.T), S

    for form in (step, recurrent, chunk):
        form.__doc__ = f"{inputs.name}: {form.__doc__}"
    return step, recurrent, chunk
