"""Where checks 1 and 6 keep a decode run, and what they read from it: its key in validate.json, the
run as typed fields (`DecodeRun`), its best speed, and the MoE's speed-up as a share of its byte ratio."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from bench.gpu_validate.verdicts import ratio


@dataclass(frozen=True)
class DecodeRun:
    """One model at one depth as checks 1 and 6 measured it — or the error that ended it (`error`)."""

    kernels_per_step: int | None = None  # CUDA kernels (on the CPU: profiler ops) in one step
    host_blocking_calls: dict[str, int] = field(default_factory=dict)
    eager_tokens_per_s: float | None = None
    graphed_tokens_per_s: float | None = None
    graph_note: str | None = None
    roofline_tokens_per_s: float | None = None
    bytes_per_step: dict[str, int] = field(default_factory=dict)  # core.gpu.decode.traffic.Traffic.to_dict
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def best(self) -> float | None:
        """The graphed tokens/s, else the eager ones."""
        return self.graphed_tokens_per_s or self.eager_tokens_per_s

    def to_dict(self) -> dict[str, Any]:
        """As validate.json keeps it: the error alone, or every measured field."""
        if self.error is not None:
            return {"error": self.error}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "error"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DecodeRun:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def run_key(kind: str, ffn: str, depth: int, way: str | None = None) -> str:
    """Where check 1 keeps a run: 'state/dense/d0', or 'state+triton/dense/d0' for another way."""
    return f"{kind}{'' if way is None else '+' + way}/{ffn}/d{depth}"


def run_at(data: dict[str, Any], kind: str, ffn: str, depth: int, way: str | None = None) -> DecodeRun | None:
    """The run of `kind` with feed-forward `ffn` at `depth` (run `way`), or None if it was not run."""
    found = data.get(run_key(kind, ffn, depth, way))
    return None if found is None else DecodeRun.from_dict(found)


def failed_key(data: dict[str, Any], kind: str, ffn: str, depths: tuple[int, ...], way: str | None) -> str:
    """Where a run's error goes: under the first depth without figures, so those before it keep theirs."""
    failed = next((d for d in depths if run_key(kind, ffn, d, way) not in data), depths[0])
    return run_key(kind, ffn, failed, way)


def best(run: DecodeRun | None) -> float | None:
    """A run's graphed tokens/s, else its eager ones."""
    return run and run.best


def moe_share(data: dict[str, Any], preset: Any) -> Callable[[DecodeRun | None], float | None]:
    """MoE ÷ dense speed as a share of dense ÷ MoE bytes per step (each way's own bytes), against the
    dense model of the MoE's total width in `data`."""
    dense = run_at(data, "attention", "dense_moe_size", preset.moe_depth)

    def share(moe: DecodeRun | None) -> float | None:
        if not moe or not moe.ok or not dense or not dense.ok:
            return None
        return ratio(
            ratio(best(moe), best(dense)),
            ratio(dense.bytes_per_step["total"], moe.bytes_per_step["total"]),
        )

    return share
