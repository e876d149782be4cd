"""Linear attention's arithmetic: (QKᵀ)V = Q(KᵀV) on small numbers, multiply-adds, bytes held."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.board.keys import BoardError

BYTES_PER_NUMBER = 4  # fp32


@dataclass
class Regrouping:
    """(QKᵀ)V and Q(KᵀV) on the same small matrices, with their multiply-add counts."""

    Q: np.ndarray  # (T, d_k)
    K: np.ndarray  # (T, d_k)
    V: np.ndarray  # (T, d_v)
    scores: np.ndarray  # (T, T) = Q Kᵀ
    left: np.ndarray  # (T, d_v) = (Q Kᵀ) V
    board: np.ndarray  # (d_k, d_v) = Kᵀ V
    right: np.ndarray  # (T, d_v) = Q (Kᵀ V)
    left_ops: int  # multiply-adds for (QKᵀ)V: T·T·d_k + T·T·d_v
    right_ops: int  # multiply-adds for Q(KᵀV): T·d_k·d_v + T·d_k·d_v

    @property
    def max_difference(self) -> float:
        return float(np.abs(self.left - self.right).max())


def regroup(T: int = 4, d_k: int = 3, d_v: int = 3, seed: int = 0) -> Regrouping:
    """Small random Q, K, V (one decimal place, easy to read) multiplied both ways."""
    if min(T, d_k, d_v) < 1:
        raise BoardError("T, d_k and d_v must all be at least 1")
    rng = np.random.default_rng(seed)
    Q, K = (np.round(rng.uniform(-1, 1, (T, d_k)), 1) for _ in range(2))
    V = np.round(rng.uniform(-1, 1, (T, d_v)), 1)
    Q, K, V = Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64)
    scores = Q @ K.T
    board = K.T @ V
    left_ops, right_ops = regroup_ops(T, d_k, d_v)
    return Regrouping(
        Q=Q,
        K=K,
        V=V,
        scores=scores,
        left=scores @ V,
        board=board,
        right=Q @ board,
        left_ops=left_ops,
        right_ops=right_ops,
    )


def regroup_ops(T: int, d_k: int, d_v: int) -> tuple[int, int]:
    """Multiply-adds of (QKᵀ)V and of Q(KᵀV) for T tokens."""
    return T * T * (d_k + d_v), 2 * T * d_k * d_v


def memory_bytes(T: int, d_k: int, d_v: int, bytes_per_number: int = BYTES_PER_NUMBER) -> tuple[int, int]:
    """(cache bytes, board bytes) for one head after T tokens: a cache keeps T keys and values,
    the board keeps one d_k×d_v matrix whatever T is."""
    return T * (d_k + d_v) * bytes_per_number, d_k * d_v * bytes_per_number


def memory_curve(
    T_max: int, d_k: int, d_v: int, points: int = 60
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token counts from 1 to T_max (log-spaced, distinct) with the cache and board bytes at each."""
    Ts = np.unique(np.geomspace(1, T_max, points).astype(int))
    cache, board = (np.array(x) for x in zip(*(memory_bytes(int(T), d_k, d_v) for T in Ts), strict=True))
    return Ts, cache, board


def break_even_tokens(d_k: int, d_v: int) -> int:
    """Tokens after which a cache holds as much as the board: ⌈d_k·d_v / (d_k + d_v)⌉."""
    return math.ceil(d_k * d_v / (d_k + d_v))
