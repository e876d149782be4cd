"""Which rule writes the board: the registry's record for a rule key, the fade, the write strength.

The rules come from `core.mechanisms` at call time, so a rule registered later is accepted
everywhere on the board. What a rule takes is read off its record, never its name: β when it
erases before writing (`takes_beta`), a fade when it has a gate — one rate per head
(`gate == "head"`) or one per key channel (`gate == "channel"`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core import mechanisms
from core.board.keys import BoardError
from core.mechanisms import Mechanism

BASELINE = "softmax"  # softmax attention: keeps every pair in a cache, no board


def rule_names() -> tuple[str, ...]:
    """The board rules, in story order (from the registry, read now)."""
    return mechanisms.rule_keys()


def mechanism(rule: str) -> Mechanism:
    """The registry record of a board rule; anything else raises BoardError naming the choices."""
    try:
        return mechanisms.get(rule)
    except mechanisms.UnknownRule:
        raise BoardError(
            f"unknown rule {rule!r}; choose one of {', '.join(rule_names())} (or {BASELINE!r})"
        ) from None


def check_rule(rule: str) -> None:
    """A board rule or the softmax baseline; anything else raises BoardError."""
    if rule != BASELINE:
        mechanism(rule)


def check_beta(beta: float) -> None:
    if not 0.0 < float(beta) <= 1.0:
        raise BoardError(f"the write strength β must lie in (0, 1], got {beta}")


def _check_rate(a: float, what: str) -> None:
    if not 0.0 < float(a) <= 1.0:
        raise BoardError(f"a {what} must lie in (0, 1] (1 keeps everything), got {a}")


@dataclass(frozen=True)
class Fade:
    """How much the board fades before a token writes (α = 1 keeps everything).

    rate:     the one α of a per-head gate (Gated DeltaNet) for the whole board;
    channels: the α per key channel of a per-channel gate (KDA), length d (default: `rate` in
              every channel);
    at:       the tokens whose gate fades (0-based); None = every token. A trained model
              computes its gate from each token, so it can fade hard where the text changes
              topic and hardly at all inside a topic — `at` plays that gate by hand.
    """

    rate: float = 1.0
    channels: tuple[float, ...] | None = None
    at: tuple[int, ...] | None = None

    def alphas(self, d: int) -> np.ndarray:
        """α of every key channel when this fade fires: (d,) float64 (`channels`, else `rate` in each)."""
        return np.asarray(self.channels if self.channels is not None else (self.rate,) * d, np.float64)

    def log_gates(self, rule: str, d: int, T: int) -> np.ndarray | None:
        """g = log α per token: (T,) for a per-head gate, (T, d) per channel, None without a gate."""
        mech = mechanism(rule)
        if mech.gate == "none":
            return None
        if mech.gate == "head":
            _check_rate(self.rate, "fade rate")
            per_token = np.full((T,), math.log(self.rate), np.float32)
        else:
            alphas = self.alphas(d)
            if len(alphas) != d:
                raise BoardError(
                    f"{mech.short} needs one fade rate per key channel: {d} rates, got {len(alphas)}"
                )
            for a in alphas:
                _check_rate(a, "channel fade rate")
            per_token = np.tile(np.log(alphas).astype(np.float32), (T, 1))
        if self.at is not None:
            keep = np.ones(T, dtype=bool)
            for t in self.at:
                if not 0 <= t < T:
                    raise BoardError(f"fade at token {t}: the stream has tokens 0..{T - 1}")
                keep[t] = False
            per_token[keep] = 0.0  # log 1: no fade on the other tokens
        return per_token
