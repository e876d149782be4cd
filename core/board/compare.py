"""Why two memories differ: where several boards part most, and why softmax attention misses keys.

Pages open at the step where the rules they compare differ most (computed, not a typed index),
and explain the baseline's misses from its own attention weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from core.board.keys import BoardError
from core.board.rules import BASELINE
from core.board.run import BoardRun
from core.i18n import _


def board_gaps(runs: Mapping[str, BoardRun], t: int) -> dict[tuple[str, str], float]:
    """Distance (Frobenius) between every two boards after t tokens: (rule a, rule b) → distance."""
    boards = {rule: run.board(t) for rule, run in runs.items()}  # each (d, V)
    return {(a, b): float(np.linalg.norm(boards[a] - boards[b])) for a, b in combinations(boards, 2)}


def most_different_step(runs: Mapping[str, BoardRun], first: int = 1) -> int:
    """The step t ≥ `first` at which the boards differ most: the largest smallest gap between any
    two of them (so every board differs from every other); the earliest such step on a tie."""
    if len(runs) < 2:
        raise BoardError("compare at least two boards")
    total = min(run.T for run in runs.values())
    if not 1 <= first <= total:
        raise BoardError(f"step {first} is outside the stream (1..{total})")
    spread = [min(board_gaps(runs, t).values()) for t in range(first, total + 1)]
    return first + int(np.argmax(np.round(spread, 6)))


@dataclass(frozen=True)
class SoftmaxMisses:
    """Why softmax attention, which keeps every pair, still misses some keys of a stream."""

    own_weight: dict[str, float]  # key → the share of attention weight on its own pair (1 = all)
    missed: list[str]  # keys whose readback is nearest another value
    twin: dict[str, tuple[str, float]]  # missed key → (the other key most like it, their overlap kᵀk')

    @property
    def own_weight_range(self) -> tuple[float, float]:
        values = list(self.own_weight.values())
        return min(values), max(values)


def softmax_misses(run: BoardRun) -> SoftmaxMisses:
    """From a softmax run's cache: each key's weight on itself, the missed keys and their nearest twins.

    Reading key j weighs every cached pair by softmax(sharpness · kᵀk_i); a unit key matches itself
    with 1, but a near twin with almost as much, so the twin's value gets a large share.
    """
    if run.rule != BASELINE:
        raise BoardError(f"softmax_misses reads a softmax run, not {run.rule!r}")
    rec = run.recall()
    names = rec.names
    K = np.stack([run.key(n) for n in names])  # (n, d) one row per distinct key
    overlap = K @ K.T  # (n, n)
    logits = run.sharpness * (K @ run.token_keys.T)  # (n, T)
    w = np.exp(logits - logits.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    last = {name: t for t, (name, _) in enumerate(run.pairs)}  # the token that holds each key's latest pair
    own = {name: float(w[j, last[name]]) for j, name in enumerate(names)}
    missed = [name for name, ok in zip(names, rec.correct, strict=True) if not ok]
    twin = {}
    for name in missed:
        j = names.index(name)
        others = np.where(np.arange(len(names)) == j, -np.inf, overlap[j])
        i = int(np.argmax(others))
        twin[name] = (names[i], float(overlap[j, i]))
    return SoftmaxMisses(own, missed, twin)


def join_names(names: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c' — for sentences built from data (in Japanese 'a、b、c')."""
    names = list(names)
    if len(names) < 2:
        return "".join(names)
    return _("{names} and {last}").format(names=_(", ").join(names[:-1]), last=names[-1])
