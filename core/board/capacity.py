"""Capacity curves: how many distinct pairs a d-row board gives back, averaged over seeds."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from core.board.keys import BoardError, KeySpace, nearest, value_vectors
from core.board.rules import BASELINE, Fade, check_beta, check_rule, mechanism
from core.board.run import write_stream
from core.board.streams import word_stream
from core.ops.forms import one_thread


def pair_counts(d: int, points: int) -> list[int]:
    """About `points` pair counts n from 1 to 4·d, evenly spread (distinct integers, ascending)."""
    return sorted({int(x) for x in np.linspace(1, 4 * d, points)})


def last_full_recall(ns: Sequence[int], accuracy: Sequence[float], level: float = 0.999) -> int:
    """The largest n whose recall is (all but) complete; 0 if none is."""
    full = [n for n, a in zip(ns, accuracy, strict=True) if a >= level]
    return max(full) if full else 0


def recall_curve(
    rule: str,
    d: int,
    ns: Sequence[int],
    seeds: Sequence[int] = (0, 1, 2, 3),
    *,
    keys: str = "random",
    beta: float = 1.0,
    fade: Fade | None = None,
) -> np.ndarray:
    """Mean recall (fraction of keys whose readback is nearest its value) after writing n
    distinct pairs on a d × d board, for each n in `ns`; averaged over `seeds`. Values use
    the named-value code (one-hot for the first d, random unit after).

    The board rules run core/ops `recurrent` with all seeds as one batch.
    """
    KeySpace(d, keys)  # validates d and kind
    check_rule(rule)
    if not seeds:
        raise BoardError("give at least one seed")
    if rule != BASELINE:
        check_beta(beta)
    fade = fade or Fade()
    out = np.zeros(len(ns), np.float64)
    for i, n in enumerate(ns):
        if n < 1:
            raise BoardError(f"write at least one pair (n ≥ 1), got n={n}")
        names = [f"k{j}" for j in range(n)]
        K = np.stack([KeySpace(d, keys, s).vectors(names) for s in seeds])  # (S, n, d)
        V = np.stack([value_vectors(n, d, s) for s in seeds])  # (S, n, d)
        if rule == BASELINE:
            logits = math.sqrt(d) * K @ K.transpose(0, 2, 1)  # (S, n_query, n_cached)
            w = np.exp(logits - logits.max(-1, keepdims=True))
            readback = (w / w.sum(-1, keepdims=True)) @ V  # (S, n, d)
        else:
            state = _final_state(rule, K, V, beta, fade.log_gates(rule, d, n))  # (S, d, d)
            readback = K @ state  # (S, n, d): row j = Sᵀ k_j
        hits = [nearest(readback[s], V[s]) == np.arange(n) for s in range(len(seeds))]
        out[i] = float(np.mean(hits))
    return out


def _final_state(rule: str, K: np.ndarray, V: np.ndarray, beta: float, g: np.ndarray | None) -> np.ndarray:
    """Board after writing all pairs, via core/ops recurrent: K (B, T, d), V (B, T, V) → (B, d, V)."""
    mech = mechanism(rule)
    B, T, d = K.shape
    k = torch.from_numpy(np.ascontiguousarray(K, np.float32)).unsqueeze(2)  # (B, T, 1, d)
    v = torch.from_numpy(np.ascontiguousarray(V, np.float32)).unsqueeze(2)  # (B, T, 1, V)
    kwargs: dict = {}
    if mech.takes_beta:
        kwargs["beta"] = torch.full((B, T, 1), float(beta))  # (B, T, H)
    if g is not None:
        g_t = torch.from_numpy(g).reshape(1, T, 1, *g.shape[1:])  # (1, T, H) or (1, T, H, K)
        kwargs["g"] = g_t.expand(B, *g_t.shape[1:]).contiguous()  # (B, T, H) or (B, T, H, K)
    with one_thread():
        _, S = mech.ops.recurrent(k, k, v, scale=1.0, **kwargs)
    return S[:, 0].numpy()  # (B, d, V)


# the random draws every board page averages over; draw 1 (seed 0) is the one the pages picture
DRAWS: tuple[int, ...] = (0, 1, 2, 3, 4, 5)


@dataclass(frozen=True)
class RecallOverDraws:
    """Recall of one setting in each random draw: what a page shows (draw 1) and the average."""

    per_draw: tuple[float, ...]  # fraction of keys recalled, one per seed in `seeds`
    seeds: tuple[int, ...]

    @property
    def first(self) -> float:
        """The draw the pages picture (seed `seeds[0]`)."""
        return self.per_draw[0]

    @property
    def mean(self) -> float:
        return float(np.mean(self.per_draw))


def recall_over_draws(
    rule: str, d: int, n: int, *, keys: str = "random", seeds: Sequence[int] = DRAWS, beta: float = 1.0
) -> RecallOverDraws:
    """Recall of the n word pairs (apple → red, …) on a d-row board, once per seed.

    The same draws as `recall_curve` (the i-th key name gets the same vector for a seed), so the
    mean equals that curve's point at n, and the first draw is the one `write_stream` pictures.
    """
    if not seeds:
        raise BoardError("give at least one seed")
    per_draw = tuple(
        write_stream(word_stream(n), rule, d=d, keys=keys, seed=s, beta=beta).recall().accuracy for s in seeds
    )
    return RecallOverDraws(per_draw, tuple(seeds))


@dataclass(frozen=True)
class FirstLoss:
    """Where a recall curve first drops below complete, and its value there."""

    last_full: int  # largest n with complete recall (0: none)
    first_short: int | None  # the next n on the curve (None: complete to the end)
    at_first_short: float | None  # recall there


def first_loss(ns: Sequence[int], accuracy: Sequence[float], level: float = 0.999) -> FirstLoss:
    """The first n at which the curve is no longer complete — what a sentence about "losing earlier" needs."""
    for n, a in zip(ns, accuracy, strict=True):
        if a < level:
            full = [m for m, b in zip(ns, accuracy, strict=True) if m < n and b >= level]
            return FirstLoss(max(full) if full else 0, int(n), float(a))
    return FirstLoss(int(ns[-1]) if len(ns) else 0, None, None)
