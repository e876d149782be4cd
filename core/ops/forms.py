"""The two forms of every rule side by side: token by token (`recurrent`) and chunked (`chunk`).

Chunks, the tests and `python -m bench.chunked` use these, on the one input generator of
`core/ops/inputs.py`: `chunk_check` runs both forms on the same inputs and reports the
largest differences (the ops contract: 1e-5 in fp32, 1e-10 in fp64); `time_forms` times them.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from core.mechanisms import get
from core.ops.inputs import random_inputs, rule_kwargs
from core.threads import threads

TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}  # chunked vs recurrent, ops contract


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one CPU thread: small matrices gain nothing from more, and on a busy machine
    extra threads only wait for each other (measured here: 100 board steps take ~50 ms on one
    thread, over 1 s on two). Changes nothing where the count is already one — always in the app,
    which sets it once at start-up (`core/threads.py`: a per-request change would race)."""
    with threads(1):
        yield


def tolerance(dtype: torch.dtype) -> float:
    """The largest difference allowed between the two forms in `dtype`."""
    if dtype not in TOLERANCE:
        raise ValueError(f"no tolerance for {dtype}; use torch.float32 or torch.float64")
    return TOLERANCE[dtype]


def run_form(
    rule: str, x: dict[str, torch.Tensor], chunk_size: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """`rule` on a `random_inputs` dict: `recurrent` (chunk_size None) or `chunk`. → (o, final state)."""
    ops = get(rule).ops
    kwargs = rule_kwargs(rule, x)
    if chunk_size is None:
        return ops.recurrent(x["q"], x["k"], x["v"], **kwargs)
    return ops.chunk(x["q"], x["k"], x["v"], chunk_size=chunk_size, **kwargs)


def max_difference(a: tuple[torch.Tensor, ...], b: tuple[torch.Tensor, ...]) -> float:
    """The largest |difference| between two forms' results (outputs and states together)."""
    return max(float((x - y).abs().max()) for x, y in zip(a, b, strict=True))


@dataclass
class ChunkCheck:
    rule: str
    T: int
    d: int
    chunk_size: int
    dtype: str
    max_output_difference: float
    max_state_difference: float

    @property
    def tolerance(self) -> float:
        return tolerance(getattr(torch, self.dtype))

    @property
    def agrees(self) -> bool:
        """Chunked equals step-by-step to within the contract's tolerance."""
        return max(self.max_output_difference, self.max_state_difference) <= self.tolerance


def _inputs(T: int, d: int, dtype: torch.dtype, seed: int) -> dict[str, torch.Tensor]:
    """One sequence, two heads, key and value size d."""
    return random_inputs(T, dtype=dtype, seed=seed, b=1, h=2, k_dim=d, v_dim=d)


def chunk_check(
    rule: str, T: int, d: int, chunk_size: int, *, dtype: torch.dtype = torch.float32, seed: int = 0
) -> ChunkCheck:
    """Run the chunked and the step-by-step forms of `rule` on the same inputs; compare."""
    get(rule)
    if T < 1 or d < 1 or chunk_size < 1:
        raise ValueError("T, d and the chunk size must be at least 1")
    x = _inputs(T, d, dtype, seed)
    with one_thread():
        o_rec, s_rec = run_form(rule, x)
        o_chk, s_chk = run_form(rule, x, chunk_size)
    return ChunkCheck(
        rule,
        T,
        d,
        chunk_size,
        str(dtype).replace("torch.", ""),
        float((o_rec - o_chk).abs().max()),
        float((s_rec - s_chk).abs().max()),
    )


def waits_in_line(T: int, chunk_size: int) -> tuple[int, int]:
    """Sequential hand-overs of the board: step by step (T) vs chunked (⌈T/C⌉)."""
    if T < 1 or chunk_size < 1:
        raise ValueError("T and the chunk size must be at least 1")
    return T, math.ceil(T / chunk_size)


def form_label(chunk_size: int | None) -> str:
    """The form's name: "step by step" for the recurrence, "C = 16" for chunks of 16."""
    return "step by step" if chunk_size is None else f"C = {chunk_size}"


def waits_per_form(T: int, chunk_sizes: Sequence[int]) -> dict[str, int]:
    """Hand-overs for T tokens, step by step first, then each chunk size: {form label: count}."""
    return {form_label(None): T} | {form_label(c): waits_in_line(T, c)[1] for c in chunk_sizes}


def median_ms(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Run `fn` once untimed (warm-up), then `repeats` times: (median milliseconds, last result)."""
    result = fn()
    times = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), result


@dataclass
class Timing:
    label: str  # "step by step" or "C = 16"
    chunk_size: int | None  # None for the step-by-step recurrence
    ms: float  # median wall time of one forward pass
    hand_overs: int  # sequential board hand-overs


def time_forms(
    rule: str, T: int, d: int, chunk_sizes: Sequence[int], *, repeats: int = 3, seed: int = 0
) -> Iterator[Timing]:
    """Time the step-by-step recurrence and the chunked form for each chunk size on this machine,
    on one CPU thread (see `one_thread`), fp32.

    A generator, so a page can move a progress bar between measurements. Each form runs
    once untimed (warm-up), then `repeats` times; the median is reported.
    """
    get(rule)
    x = _inputs(T, d, torch.float32, seed)
    with torch.inference_mode(), one_thread():
        for c in [None, *(int(c) for c in chunk_sizes)]:
            ms, _ = median_ms(lambda c=c: run_form(rule, x, c), repeats)
            yield Timing(form_label(c), c, ms, T if c is None else math.ceil(T / c))


def speedup(timings: Sequence[Timing]) -> tuple[Timing, Timing, float]:
    """(step-by-step timing, fastest chunked timing, how many times faster the chunked one is)."""
    base = next(t for t in timings if t.chunk_size is None)
    best = min((t for t in timings if t.chunk_size is not None), key=lambda t: t.ms)
    return base, best, base.ms / best.ms
