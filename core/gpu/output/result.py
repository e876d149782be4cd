"""One benchmark run as typed data, and its JSON layout: the one module that writes and reads it.

A `SuiteResult` holds what a run asked for (`RunSettings`), the software and device it ran on, the
copy bandwidth, and each part it measured — the context sweep (again under a VRAM budget, and with
the layers that do not fit on the CPU), the MoE's sizes, dense vs MoE, the batch sweep, a real
checkpoint — typed down to each point (core.gpu.suites.*). `to_json()` writes the layout the CLI has
always written (docs/gpu-runs/*/bench.json); `from_json()` reads it back, committed runs included:
keys a part does not know (derived ones such as `ms_per_token`) are dropped, fields an older run
lacks take their defaults.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from core.gpu.device.nvml import DeviceSnapshot
from core.gpu.output.export import to_json as strict_json
from core.gpu.presets import Preset
from core.gpu.suites.batch_bench import BatchPoint, BatchResult, BatchSeries
from core.gpu.suites.checkpoint_bench import CheckpointResult
from core.gpu.suites.context_bench import ContextResult, DepthPoint, Series
from core.gpu.suites.moe_bench import MoeResult, MoeRow
from core.gpu.suites.moe_sizing import MoeSizing
from core.gpu.timing.bandwidth import Bandwidth

# The three context sweeps a run may hold, under their JSON keys, in the order the CLI prints them.
CONTEXT_PARTS = ("context", "context_budget", "context_cpu_layers")


@dataclass(frozen=True)
class RunSettings:
    """What a run was asked to do: a preset (with its dtype and VRAM budget) or a checkpoint folder."""

    device: str
    preset: Preset | None = None
    dtype: str | None = None
    vram_budget_bytes: int | None = None
    checkpoint: str | None = None  # a checkpoint run's folder
    depths: tuple[int, ...] | None = None  # a checkpoint run's depths, None: its defaults

    def to_dict(self) -> dict[str, Any]:
        if self.checkpoint is not None:
            return {"checkpoint": self.checkpoint, "depths": self.depths, "device": self.device}
        return {
            "preset": None if self.preset is None else asdict(self.preset),
            "device": self.device,
            "dtype": self.dtype,
            "vram_budget_bytes": self.vram_budget_bytes,
        }


@dataclass
class SuiteResult:
    """One run: the settings, versions and device, then every part it measured (None: not run)."""

    settings: RunSettings
    device: DeviceSnapshot
    versions: dict[str, str | None] = field(default_factory=dict)
    complete: bool = False
    stopped: bool = False
    bandwidth: Bandwidth | None = None
    seconds: float | None = None  # wall time so far (a preset run; a checkpoint run records none)
    context: ContextResult | None = None  # the sweep in the whole memory (the page's: under its budget)
    context_budget: ContextResult | None = None  # again under the VRAM budget, full attention only
    moe_sizing: MoeSizing | None = None  # experts sized by the card (`--moe-sized-by-card`)
    moe: MoeResult | None = None
    batch: BatchResult | None = None
    context_cpu_layers: ContextResult | None = None  # under the budget, layers past it on the CPU
    checkpoint: CheckpointResult | None = None

    def contexts(self) -> list[tuple[str, ContextResult]]:
        """The context sweeps this run holds, by their JSON key, in print order."""
        found = ((key, getattr(self, key)) for key in CONTEXT_PARTS)
        return [(key, ctx) for key, ctx in found if ctx is not None]

    def to_dict(self) -> dict[str, Any]:
        """The JSON layout, keys in the order the CLI has always written them; parts not run are absent."""
        out: dict[str, Any] = {
            "settings": self.settings.to_dict(),
            "versions": self.versions,
            "device": self.device.to_dict(),
            "complete": self.complete,
            "stopped": self.stopped,
        }
        parts: dict[str, Any] = {
            "bandwidth": None if self.bandwidth is None else asdict(self.bandwidth),
            "seconds": self.seconds,
            "context": self.context,
            "context_budget": self.context_budget,
            "moe_sizing": None if self.moe_sizing is None else sizing_to_dict(self.moe_sizing),
            "moe": self.moe,
            "batch": self.batch,
            "context_cpu_layers": self.context_cpu_layers,
            "checkpoint": self.checkpoint,
        }
        for key, part in parts.items():
            if part is not None:
                out[key] = part.to_dict() if hasattr(part, "to_dict") else part
        return out

    def to_json(self) -> str:
        """Strict JSON (NaN and infinity as null), as the CLI writes it after every part and depth."""
        return strict_json(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SuiteResult:
        """A run from its JSON (raises KeyError, TypeError or ValueError on one that is not a run)."""

        def part(key: str, read: Any) -> Any:
            return read(data[key]) if data.get(key) else None

        return cls(
            settings=settings_from_dict(data["settings"]),
            device=device_from_dict(data["device"]),
            versions=dict(data.get("versions") or {}),
            complete=bool(data.get("complete")),
            stopped=bool(data.get("stopped")),
            bandwidth=part("bandwidth", bandwidth_from_dict),
            seconds=data.get("seconds"),
            context=part("context", context_from_dict),
            context_budget=part("context_budget", context_from_dict),
            moe_sizing=part("moe_sizing", sizing_from_dict),
            moe=part("moe", moe_from_dict),
            batch=part("batch", batch_from_dict),
            context_cpu_layers=part("context_cpu_layers", context_from_dict),
            checkpoint=part("checkpoint", CheckpointResult.from_dict),
        )

    @classmethod
    def from_json(cls, text: str) -> SuiteResult:
        return cls.from_dict(json.loads(text))


# ------------------------------------------------------------------------------------------------
# Each part from its dict (also what the page's stored last run and the committed runs are read with)
# ------------------------------------------------------------------------------------------------


def _pick(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The keys `cls` has fields for: derived keys (ms_per_token, …) are dropped."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def settings_from_dict(d: dict[str, Any]) -> RunSettings:
    depths = d.get("depths")
    return RunSettings(
        device=str(d["device"]),
        preset=preset_from_dict(d["preset"]) if d.get("preset") else None,
        dtype=d.get("dtype"),
        vram_budget_bytes=d.get("vram_budget_bytes"),
        checkpoint=d.get("checkpoint"),
        depths=None if depths is None else tuple(depths),
    )


def preset_from_dict(d: dict[str, Any]) -> Preset:
    """A Preset from its JSON: lists back to tuples; a field added since the run takes its default."""
    return Preset(**{k: tuple(v) if isinstance(v, list) else v for k, v in _pick(Preset, d).items()})


def device_from_dict(d: dict[str, Any]) -> DeviceSnapshot:
    return DeviceSnapshot(**_pick(DeviceSnapshot, d))


def bandwidth_from_dict(d: dict[str, Any]) -> Bandwidth:
    return Bandwidth(**_pick(Bandwidth, d))


def sizing_to_dict(sizing: MoeSizing) -> dict[str, Any]:
    return asdict(sizing) | {"bytes_ratio": sizing.bytes_ratio}


def sizing_from_dict(d: dict[str, Any]) -> MoeSizing:
    return MoeSizing(**_pick(MoeSizing, d))


def context_from_dict(d: dict[str, Any]) -> ContextResult:
    """A ContextResult from its `to_dict()` JSON (derived keys dropped); also reads committed runs."""
    series = [
        Series(**{**_pick(Series, s), "points": [DepthPoint(**_pick(DepthPoint, p)) for p in s["points"]]})
        for s in d["series"]
    ]
    return ContextResult(**{**_pick(ContextResult, d), "series": series})


def moe_row_from_dict(d: dict[str, Any]) -> MoeRow:
    """A MoeRow from its JSON, where the way its experts were read is still called `moe_impl`."""
    return MoeRow(**_pick(MoeRow, {**d, **MoeRow.way_fields(d)}))


def moe_from_dict(d: dict[str, Any]) -> MoeResult:
    """A MoeResult from its `to_dict()` JSON."""
    again = d.get("dense_again")
    return MoeResult(**{**_pick(MoeResult, d), "rows": [moe_row_from_dict(r) for r in d["rows"]],
                        "dense_again": None if again is None else moe_row_from_dict(again)})  # fmt: skip


def batch_from_dict(d: dict[str, Any]) -> BatchResult:
    """A BatchResult from its `to_dict()` JSON (also the `batch` part of `bench --batch`'s JSON)."""
    series = [
        BatchSeries(
            **{**_pick(BatchSeries, s), "points": [BatchPoint(**_pick(BatchPoint, p)) for p in s["points"]]}
        )
        for s in d["series"]
    ]
    return BatchResult(**{**_pick(BatchResult, d), "series": series})
