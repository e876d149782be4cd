"""Keys and values: how names become vectors, and which value a readback is nearest to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

KEY_KINDS: tuple[str, ...] = ("random", "orthogonal")
VALUE_SEED_OFFSET = 10_007  # values draw from a different stream of random numbers than keys


class BoardError(ValueError):
    """Bad input to the board playground (unknown key or rule, empty stream, d < 1 …)."""


@dataclass(frozen=True)
class KeySpace:
    """How names become vectors (keys; values use kind "orthogonal" in d_v dimensions).

    kind "random":     each name gets a seeded random unit vector (Gaussian, normalised);
    kind "orthogonal": the i-th new name gets the i-th basis vector e_i — one board row per
                       key. Only d of those exist, so names past the d-th get random unit
                       vectors (there is no orthogonal direction left for them).
    groups:            optional name → (first channel, end channel): the key lives only in
                       those channels (Forgetting keeps a "long memory" group apart).
    """

    d: int
    kind: str = "random"
    seed: int = 0

    def __post_init__(self) -> None:
        check_size(self.d, "key")
        if self.kind not in KEY_KINDS:
            raise BoardError(f"unknown key kind {self.kind!r}; choose one of {', '.join(KEY_KINDS)}")

    def vectors(self, names: Sequence[str], groups: dict[str, tuple[int, int]] | None = None) -> np.ndarray:
        """Unit key vectors for distinct `names`, in order: (len(names), d) float32.

        The i-th name of a channel group always gets the same vector for a given seed, however
        many names follow (rows of one seeded Gaussian draw, normalised).
        """
        groups = groups or {}
        spans = [groups.get(name, (0, self.d)) for name in names]
        out = np.zeros((len(names), self.d), dtype=np.float32)
        for lo, hi in dict.fromkeys(spans):
            if not 0 <= lo < hi <= self.d:
                raise BoardError(f"channels {lo}..{hi} do not fit in a key of size d={self.d}")
            rows = [r for r, span in enumerate(spans) if span == (lo, hi)]
            width = hi - lo
            draw = np.random.default_rng([self.seed, lo, hi]).standard_normal((len(rows), width))
            draw /= np.linalg.norm(draw, axis=1, keepdims=True)
            for index, row in enumerate(rows):
                if self.kind == "orthogonal" and index < width:
                    out[row, lo + index] = 1.0
                else:
                    out[row, lo:hi] = draw[index]
        return out


def check_size(n: object, what: str) -> None:
    """A board needs at least one key (value) dimension: `what` is "key" or "value"."""
    if not isinstance(n, int | np.integer) or n < 1:
        name = "d" if what == "key" else "d_v"
        raise BoardError(f"the board needs at least one {what} dimension (got {name}={n!r})")


def value_vectors(n: int, d_v: int, seed: int = 0) -> np.ndarray:
    """Vectors for n named values in d_v dimensions: one-hot while columns last, then random unit."""
    return KeySpace(d_v, "orthogonal", seed + VALUE_SEED_OFFSET).vectors([str(i) for i in range(n)])


def nearest(readback: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of the value nearest (Euclidean) to each readback row; -1 where two tie.

    readback (..., V), values (N, V) → (...,) int.
    """
    dist = ((readback[..., None, :] - values) ** 2).sum(-1)  # (..., N)
    order = np.sort(dist, axis=-1)
    best = dist.argmin(-1)
    if dist.shape[-1] > 1:
        tied = order[..., 1] - order[..., 0] <= 1e-6
        best = np.where(tied, -1, best)
    return best
