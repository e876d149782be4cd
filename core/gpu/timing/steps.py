"""What a timed run of decode steps yields and how a caller steers it, shared by the eager timer
(decode_timer.py), the CUDA-graph timer (graphs.py) and every suite: the Stop signal, the per-repetition
speeds, the token fed at step i, and the progress and stop callbacks a benchmark is handed."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import torch

Progress = Callable[[float, str], None]
ShouldStop = Callable[[], bool]
OomHook = Callable[[str, int], None]  # (series name, depth) → may raise torch.cuda.OutOfMemoryError


def no_progress(fraction: float, message: str) -> None:
    """The default progress callback: report nothing."""


def never() -> bool:
    """The default stop flag: never stop."""
    return False


class Stopped(Exception):
    """The reader pressed Stop; partial results are kept."""


@dataclass
class Timing:
    """Per-repetition tokens/s of one way of running the steps ("eager" or "CUDA graph")."""

    samples_tokens_per_s: list[float]
    method: str = "eager"
    capped: bool = False  # the depth's time cap cut the repetitions short
    kernels_per_step: float | None = None  # a CUDA graph's nodes ÷ its steps, where they could be read

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


class _Stoppable(Protocol):
    stopped: bool


@contextmanager
def stoppable(result: _Stoppable, progress: Progress) -> Iterator[None]:
    """Run a benchmark's body: Stop marks `result.stopped` and keeps what was measured; report the end."""
    try:
        yield
    except Stopped:
        result.stopped = True
    progress(1.0, "stopped" if result.stopped else "done")
