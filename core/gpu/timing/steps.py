"""What a timed run of decode steps yields, shared by the eager timer (timing.py) and the CUDA-graph
timer (graphs.py), so that neither has to import the other: the Stop signal, the per-repetition
speeds, and the token fed at step i."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch


class Stopped(Exception):
    """The reader pressed Stop; partial results are kept."""


@dataclass
class Timing:
    """Per-repetition tokens/s of one way of running the steps ("eager" or "CUDA graph")."""

    samples_tokens_per_s: list[float]
    method: str = "eager"
    capped: bool = False  # the depth's time cap cut the repetitions short

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples_tokens_per_s)

    @property
    def std(self) -> float:
        s = self.samples_tokens_per_s
        return statistics.stdev(s) if len(s) > 1 else 0.0


def token_at(tokens: torch.Tensor, i: int) -> torch.Tensor:
    """Token i (cycling) as a 1-element view: no copy, no host sync."""
    j = i % len(tokens)
    return tokens[j : j + 1]
