"""Time one layer's prefill on this CPU at several prompt lengths, both forms (core.prefill.forms), and this
CPU's matrix-multiply speed — the "peak" the planner's bound divides by.

Each form runs once untimed at the first length (kernels, allocator), then at every length up to `repeats`
timed runs — fewer once a cell has taken `cell_seconds`, at least one — so a 32K-token attention run is
timed once rather than five times on a shared machine. Every run's wall and CPU time is kept
(core.prefill.record says which one a run reads).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import torch

from core.prefill import forms
from core.prefill.record import PrefillRun, Row
from core.threads import threads

MATMUL_SIZE = 2048  # the square fp32 matmul timed for the peak: 2·n³ FLOPs (17 G), 3 × 16 MiB

Progress = Callable[[str], None]


def _quiet(message: str) -> None:
    """The default: no progress lines."""


def timed_ms(fn: Callable[[], object], repeats: int, cell_seconds: float) -> list[tuple[float, float]]:
    """(wall ms, process CPU ms) of up to `repeats` runs of `fn`; stops early once they have taken
    `cell_seconds` by the wall clock (one run at least)."""
    if repeats < 1 or not cell_seconds > 0:
        raise ValueError(
            f"repeats must be at least 1 and the cell's time above zero, got {repeats}, {cell_seconds}"
        )
    times: list[tuple[float, float]] = []
    while len(times) < repeats and sum(wall for wall, _ in times) < 1e3 * cell_seconds:
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        times.append((1e3 * (time.perf_counter() - wall), 1e3 * (time.process_time() - cpu)))
    return times


def matmul_flops_per_s(size: int = MATMUL_SIZE, repeats: int = 5, clock: str = "wall") -> float:
    """FLOP/s of an fp32 `size`×`size` matmul on the current threads: 2·size³ ÷ the fastest of `repeats` runs
    by `clock` ('wall', or 'cpu': the process's CPU time, as a one-thread run reads its times). The fastest,
    because it stands where the planner puts a card's peak: what the arithmetic units can do at best."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b  # warm-up
    runs = timed_ms(lambda: a @ b, repeats, 60.0)
    return 2.0 * size**3 / (1e-3 * min(cpu if clock == "cpu" else wall for wall, cpu in runs))


def machine() -> str:
    """'AMD EPYC, 2 cores, Linux': the CPU's model name (from /proc/cpuinfo where there is one), cores, OS."""
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores, {platform.system()}"


def measure(
    lengths: Sequence[int],
    heads: int,
    head_dim: int,
    *,
    chunk_size: int = 64,
    repeats: int = 3,
    cell_seconds: float = 10.0,
    n_threads: int = 1,
    progress: Progress = _quiet,
) -> PrefillRun:
    """Both forms at every length (increasing), on `n_threads` torch threads, fp32 → a PrefillRun."""
    lengths = list(lengths)
    if not lengths or lengths != sorted(set(lengths)) or lengths[0] < 1:
        raise ValueError(f"prompt lengths must be increasing whole numbers ≥ 1, got {lengths}")
    rows = []
    with torch.inference_mode(), threads(n_threads):
        used = torch.get_num_threads()
        first = forms.prompt_inputs(lengths[0], heads, head_dim)
        forms.attention(first), forms.chunked(first, chunk_size)  # warm-up, untimed
        peak = matmul_flops_per_s(clock="cpu" if used == 1 else "wall")  # the clock the run reads (record.py)
        for tokens in lengths:
            x = forms.prompt_inputs(tokens, heads, head_dim)
            attention = timed_ms(lambda x=x: forms.attention(x), repeats, cell_seconds)
            chunked = timed_ms(lambda x=x: forms.chunked(x, chunk_size), repeats, cell_seconds)
            rows.append(Row(tokens, *_clocks(attention, chunked)))
            progress(f"{tokens:,} tokens done")
    return PrefillRun(
        datetime.now(UTC).date().isoformat(), machine(), torch.__version__, used, heads, head_dim, chunk_size,
        "float32", repeats, cell_seconds, peak, tuple(rows),
    )  # fmt: skip


def _clocks(
    attention: list[tuple[float, float]], chunked: list[tuple[float, float]]
) -> tuple[tuple[float, ...], ...]:
    """(attention wall, chunked wall, attention CPU, chunked CPU) ms, in Row's order."""
    return (
        *(tuple(w for w, _ in t) for t in (attention, chunked)),
        *(tuple(c for _, c in t) for t in (attention, chunked)),
    )
