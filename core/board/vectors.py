"""The five pieces of arithmetic the board lessons use, written out small (the primer's maths).

Plain numpy, one job each, in the orientation of `core.ops.linear_attention` (fla layout): a
board `S` has rows = key dimensions and columns = value dimensions, a write adds the outer
product `k vᵀ`, and a read is `Sᵀ q` (the same numbers as `qᵀ S`). Tests check every function
against numpy/einsum and against `core.ops.linear_attention` on the same inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.board.keys import KeySpace, value_vectors
from core.board.streams import WORD_KEYS, WORD_VALUES

PRIMER_PAIRS = 4  # word pairs the primer writes: apple→red, sky→blue, grass→green, snow→white
PRIMER_D = 4  # key size of the primer's small board (rows)


def arrow(direction_deg: float, length: float) -> np.ndarray:
    """A 2-number vector pointing `direction_deg` degrees anticlockwise from "east": (2,)."""
    angle = math.radians(direction_deg)
    return np.array([length * math.cos(angle), length * math.sin(angle)])


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """Multiply matching numbers and add them up: a₁b₁ + a₂b₂ + …"""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a dot product needs two lists of the same length, got {a.shape} and {b.shape}")
    return float(sum(x * y for x, y in zip(a, b, strict=True)))


def length(a: np.ndarray) -> float:
    """How long the arrow is: the square root of a vector's dot product with itself."""
    return math.sqrt(dot(a, a))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The dot product of the two arrows scaled to length 1: 1 same way, 0 at right angles, −1 opposite."""
    la, lb = length(a), length(b)
    if la == 0 or lb == 0:
        raise ValueError("an arrow of length 0 has no direction")
    return dot(a, b) / (la * lb)


def angle_between(a: np.ndarray, b: np.ndarray) -> float:
    """The angle between two arrows in degrees, 0 … 180."""
    return math.degrees(math.acos(min(1.0, max(-1.0, cosine(a, b)))))


def row_products(matrix: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each row's numbers times x's numbers, before they are added: (rows, n) — row i sums to row i's dot."""
    matrix, x = np.asarray(matrix, np.float64), np.asarray(x, np.float64)
    return matrix * x[None, :]  # (rows, n)


def matrix_vector(matrix: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A matrix times a vector is one dot product per row: (rows, n) · (n,) → (rows,)."""
    return np.array([dot(row, x) for row in np.asarray(matrix)])


def outer(k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The outer product k vᵀ: entry (i, j) = k's i-th number times v's j-th. (K,), (V,) → (K, V).

    The same line as `core.ops.linear_attention._step`: `k.unsqueeze(-1) * v.unsqueeze(-2)`."""
    k, v = np.asarray(k, np.float64), np.asarray(v, np.float64)
    return k[:, None] * v[None, :]  # (K, V)


def write(board: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Linear attention's write: S + k vᵀ, a new board (K, V)."""
    return np.asarray(board, np.float64) + outer(k, v)


def read(board: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Linear attention's read: Sᵀ q — one dot product of q with each board column. (K, V), (K,) → (V,)."""
    return matrix_vector(np.asarray(board).T, q)


def matrix_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A matrix product is matrix–vector products side by side: row i of A B is A's row i read
    through B. (n, K) · (K, V) → (n, V)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"A B needs A's rows as long as B's columns: got {a.shape} and {b.shape}")
    return np.stack([read(b, row) for row in a])  # (n, V): row i = Bᵀ aᵢ, written as a row


@dataclass(frozen=True)
class PrimerPairs:
    """The primer's word pairs with the vectors the board lessons give them.

    keys:   (n, K) unit keys, the same vectors `core.board` gives these names in this order;
    values: (n, V) one value column each (one-hot)."""

    key_names: tuple[str, ...]
    value_names: tuple[str, ...]
    keys: np.ndarray
    values: np.ndarray

    def key(self, name: str) -> np.ndarray:
        return self.keys[self.key_names.index(name)]

    def value(self, name: str) -> np.ndarray:
        return self.values[self.value_names.index(name)]

    def board(self, n: int) -> np.ndarray:
        """The board after writing the first n pairs, as one matrix product Kᵀ V: (K, V)."""
        return matrix_product(self.keys[:n].T, self.values[:n])


def primer_pairs(n: int = PRIMER_PAIRS, d: int = PRIMER_D, seed: int = 0) -> PrimerPairs:
    """The first n word pairs (apple→red, …) with random unit keys in d numbers and one column per value."""
    names = WORD_KEYS[:n]
    keys = KeySpace(d, "random", seed).vectors(names).astype(np.float64)  # (n, d)
    values = value_vectors(n, n, seed).astype(np.float64)  # (n, n) one-hot
    return PrimerPairs(tuple(names), tuple(WORD_VALUES[:n]), keys, values)
