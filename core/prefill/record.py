"""One prefill run as typed data and its JSON (`python -m bench.prefill --json`, docs/bench-runs/).

Stored: the settings, the machine, this CPU's measured matrix-multiply speed and every timed run in ms, both
by the wall clock and in the process's CPU time. On one thread the CPU time is the time the work itself took,
without the time other programs held the core — on a shared machine the steadier figure — so such a run
reads its CPU time (`clock`); a run on more threads reads the wall clock (its CPU time adds the threads up).
Derived (written for a reader of the file, recomputed on reading, never trusted from it): each row's
medians and ratio, and the planner's bound — its FLOP count for the same shapes (core/plan/flops.py:
causal attention over half the T² pairs, 4 d_k×d_v passes per head per token for the board) ÷ that speed.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, fields
from typing import Any

from core.plan.flops import board_flops_per_token, causal_attention_flops

SCHEMA = "prefill/1"
FORMS = ("attention", "chunked")
CLOCKS = ("wall", "cpu")


def _times(values: Any, what: str) -> tuple[float, ...]:
    """A non-empty list of finite positive milliseconds, or ValueError naming `what`."""
    if not isinstance(values, list | tuple) or not values:
        raise ValueError(f"{what}: expected a non-empty list of milliseconds")
    out = tuple(float(v) for v in values)
    if not all(math.isfinite(v) and v > 0 for v in out):
        raise ValueError(f"{what}: every time must be a finite number of ms above zero")
    return out


@dataclass(frozen=True)
class Row:
    """One prompt length: every timed run of each form, in ms, by the wall clock and in CPU time."""

    tokens: int
    attention_ms: tuple[float, ...]
    chunked_ms: tuple[float, ...]
    attention_cpu_ms: tuple[float, ...]
    chunked_cpu_ms: tuple[float, ...]

    def median_ms(self, form: str, clock: str) -> float:
        """The median run of `form` ('attention' or 'chunked') by `clock` ('wall' or 'cpu')."""
        if form not in FORMS or clock not in CLOCKS:
            raise ValueError(f"no {form!r} times by the {clock!r} clock")
        return statistics.median(getattr(self, f"{form}_{'cpu_' if clock == 'cpu' else ''}ms"))

    def ratio(self, clock: str) -> float:
        """Attention's time ÷ the chunked rule's: above 1, the chunked rule read the prompt faster."""
        return self.median_ms("attention", clock) / self.median_ms("chunked", clock)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Row:
        tokens = int(d["tokens"])
        if tokens < 1:
            raise ValueError(f"a prompt has at least one token, got {tokens}")
        times = {
            f"{form}_{kind}ms": _times(d[f"{form}_{kind}ms"], f"{tokens} tokens, {form} {kind}ms")
            for form in FORMS
            for kind in ("", "cpu_")
        }
        return cls(tokens, **times)


@dataclass(frozen=True)
class PrefillRun:
    """Settings, machine, the CPU's matmul speed, one `Row` per prompt length (shortest first)."""

    date: str  # YYYY-MM-DD (UTC)
    machine: str  # CPU, cores, OS
    torch: str
    threads: int
    heads: int
    head_dim: int  # d_k = d_v
    chunk_size: int
    dtype: str
    repeats: int  # timed runs asked for per cell (fewer where a cell ran past `cell_seconds`)
    cell_seconds: float
    matmul_flops_per_s: float  # fastest fp32 square matmul here, same threads and clock: the bound's "peak"
    rows: tuple[Row, ...]

    @property
    def clock(self) -> str:
        """The times this run reads: CPU time on one thread, the wall clock on more (see the module doc)."""
        return "cpu" if self.threads == 1 else "wall"

    def ms(self, row: Row, form: str) -> float:
        return row.median_ms(form, self.clock)

    def ratio(self, row: Row) -> float:
        return row.ratio(self.clock)

    def attention_flops(self, tokens: int) -> float:
        """The planner's count for one causal attention layer of these heads over `tokens`."""
        return causal_attention_flops(self.heads, self.head_dim, self.head_dim, tokens)

    def chunked_flops(self, tokens: int) -> float:
        """The planner's count for one Gated DeltaNet layer of these heads over `tokens`."""
        return board_flops_per_token(self.heads, self.head_dim, self.head_dim) * tokens

    def bound_ms(self, flops: float) -> float:
        """The planner's way: FLOPs ÷ peak, the peak this CPU's measured matmul speed (a lower bound)."""
        return 1e3 * flops / self.matmul_flops_per_s

    def row(self, tokens: int) -> Row | None:
        return next((r for r in self.rows if r.tokens == tokens), None)

    def to_dict(self) -> dict[str, Any]:
        out = {"schema": SCHEMA} | asdict(self) | {"clock": self.clock}
        for row_out, row in zip(out["rows"], self.rows, strict=True):
            a, c = self.attention_flops(row.tokens), self.chunked_flops(row.tokens)
            row_out |= {
                "attention_median_ms": self.ms(row, "attention"),
                "chunked_median_ms": self.ms(row, "chunked"),
                "ratio": self.ratio(row),
                "attention_flops": a,
                "chunked_flops": c,
                "attention_bound_ms": self.bound_ms(a),
                "chunked_bound_ms": self.bound_ms(c),
            }
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PrefillRun:
        """A run from its JSON; ValueError for another schema, a missing field or an impossible value."""
        if not isinstance(d, dict) or d.get("schema") != SCHEMA:
            raise ValueError(f"not a prefill run: expected schema {SCHEMA!r}")
        try:
            rows = tuple(Row.from_dict(r) for r in d["rows"])
            kept = {f.name: d[f.name] for f in fields(cls) if f.name != "rows"}
        except (KeyError, TypeError) as error:
            raise ValueError(f"not a prefill run: missing or malformed {error}") from None
        run = cls(**kept, rows=rows)
        tokens = [r.tokens for r in rows]
        if not rows or tokens != sorted(set(tokens)):
            raise ValueError("a prefill run needs rows of increasing prompt lengths")
        if not (math.isfinite(run.matmul_flops_per_s) and run.matmul_flops_per_s > 0):
            raise ValueError("the matmul speed must be a finite number above zero")
        if min(run.threads, run.heads, run.head_dim, run.chunk_size, run.repeats) < 1:
            raise ValueError("threads, heads, head width, chunk size and repeats must be at least 1")
        return run

    @classmethod
    def from_json(cls, text: str) -> PrefillRun:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"not JSON: {error}") from None
        return cls.from_dict(data)
