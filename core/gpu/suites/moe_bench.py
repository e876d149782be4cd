"""Dense vs experts: speed and energy per token of a dense model and an MoE of equal size.

Both at the same short context, fully resident, timed by `time_decode`. On an NVIDIA GPU
the board's energy counter (sampled power as fallback, as Zeus and vLLM do;
docs/sources.md §6.4) gives average watts and joules per token with the idle
baseline subtracted; elsewhere those stay None. Each row keeps the operations one step ran
(core.gpu.timing.kernels, counted once after its timed steps), so its kernel floor stands beside its bytes'.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import torch

from core.gpu.decode.models import DecodeModel, build
from core.gpu.device.energy import POWER_AVERAGE_S, EnergyMeter, EnergyReading
from core.gpu.presets import Preset
from core.gpu.timing import graphs, ways
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.decode_timer import SpeedPoint, kernels_at_depth, random_tokens, time_at_depth
from core.gpu.timing.errors import oom_message
from core.gpu.timing.steps import (
    OomHook,
    Progress,
    ShouldStop,
    Stopped,
    never,
    no_progress,
    stoppable,
    token_at,
)
from core.roofline import bandwidth_bound_tokens_per_s


@dataclass
class MoeRow(SpeedPoint):
    model: str  # "dense" / "experts (MoE)"
    total_params: int
    active_params: int
    active_weight_bytes: int
    tokens_per_s: float  # the CUDA-graph figure where there is one, else the eager one
    std_tokens_per_s: float
    predicted_tokens_per_s: float
    timing: str = "eager"
    eager_tokens_per_s: float | None = None
    graphed_tokens_per_s: float | None = None
    bytes_per_token: int | None = None  # every byte one step moves (core.gpu.decode.traffic)
    avg_watts: float | None = None
    joules_per_token: float | None = None  # gross
    net_joules_per_token: float | None = None  # idle baseline subtracted
    energy_method: str | None = None
    energy_seconds: float | None = None
    energy_tokens: int | None = None
    oom_message: str | None = None
    way: str | None = None  # how the chosen experts were read (core.gpu.decode.ffn.MOE_WAYS)
    way_trials: dict[str, float | str] | None = None  # tokens/s of each way tried, or why it failed
    kernels_per_step: float | None = None  # operations per step (core.gpu.timing.kernels); None: not counted
    kernels_counted: str = ""  # how: a CUDA graph's nodes, the profiler's CUDA kernels or its aten ops

    def to_dict(self) -> dict[str, Any]:
        """Its JSON: the way its experts were read under the names the first runs wrote (JSON_NAMES), and
        both floors (derived: dropped when read back)."""
        return {JSON_NAMES.get(k, k): v for k, v in asdict(self).items()} | self.floors_ms()

    @staticmethod
    def way_fields(data: dict[str, Any]) -> dict[str, Any]:
        """`way` and `way_trials` from a row's JSON, which names them `moe_impl` and `impl_trials`."""
        return {name: data[key] for name, key in JSON_NAMES.items() if key in data}


# A row's fields under other names in the JSON: committed runs and saved results keep reading
JSON_NAMES = {"way": "moe_impl", "way_trials": "impl_trials"}


@dataclass
class MoeResult:
    preset: str
    device: str
    depth: int
    experts: str  # e.g. "2 shared + 4 of 126 routed"
    idle_watts: float | None
    rows: list[MoeRow]
    note: str = ""
    stopped: bool = False
    llc_bytes: int | None = None  # CPU runs: the last-level cache whose speed a step that fits in it gets
    llc_bytes_per_s: float | None = None
    # the dense twin timed again right after the MoE (`retime_dense`): the same card, as warm as the
    # MoE ran it, so a drift in clocks or power between the two is seen, not taken for the MoE's
    dense_again: MoeRow | None = None
    shape: str = ""  # the released experts' shape (core.gpu.suites.moe_sizing.SHAPES), "" for the preset's

    @property
    def speed_ratio(self) -> float | None:
        """MoE ÷ dense tokens/s (None until both ran)."""
        dense, moe = self._pair()
        if dense is None or moe is None or not dense.tokens_per_s or not moe.tokens_per_s:
            return None
        if math.isnan(dense.tokens_per_s) or math.isnan(moe.tokens_per_s):
            return None
        return moe.tokens_per_s / dense.tokens_per_s

    @property
    def bytes_ratio(self) -> float | None:
        """Dense ÷ MoE bytes per token: what the MoE would gain if speed followed bytes."""
        dense, moe = self._pair()
        if dense is None or moe is None or not dense.bytes_per_token or not moe.bytes_per_token:
            return None
        return dense.bytes_per_token / moe.bytes_per_token

    @property
    def share_of_bytes_ratio(self) -> float | None:
        """The MoE's speed-up as a share of its byte ratio: 1.0 when speed follows the bytes read."""
        speed, nbytes = self.speed_ratio, self.bytes_ratio
        return None if speed is None or nbytes is None else speed / nbytes

    def _pair(self) -> tuple[MoeRow | None, MoeRow | None]:
        dense = next((r for r in self.rows if r.model == "dense"), None)
        moe = next((r for r in self.rows if r.model != "dense"), None)
        return dense, moe

    def to_dict(self) -> dict[str, Any]:
        """Its JSON, with the speed ratio, the byte ratio and the share (derived: dropped when read back)."""
        out = asdict(self)
        out["rows"] = [r.to_dict() for r in self.rows]
        if self.dense_again is not None:
            out["dense_again"] = self.dense_again.to_dict()
        out |= {"speed_ratio": self.speed_ratio, "bytes_ratio": self.bytes_ratio,
                "share_of_bytes_ratio": self.share_of_bytes_ratio}  # fmt: skip
        return out


DENSE_AGAIN = "dense, again after the MoE"


def make_energy_meter(env: BenchEnv) -> EnergyMeter | None:
    """Energy for the device the models run on: only an NVIDIA GPU with NVML answers."""
    if env.gpu is None or env.device.type != "cuda":
        return None
    counter = env.gpu.energy_mj if env.snapshot.energy_counter else None
    power = env.gpu.power_w if env.gpu.power_w() is not None else None
    meter = EnergyMeter(counter, power, lead_s=POWER_AVERAGE_S)  # power sampled from 1 s before a window
    return meter if meter.can_measure else None


def _sleep_unless_stopped(seconds: float, should_stop: ShouldStop) -> None:
    """Wait `seconds`, checking Stop ten times a second."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        if should_stop():
            raise Stopped
        time.sleep(min(0.1, max(0.0, end - time.perf_counter())))


def run_moe(
    preset: Preset,
    env: BenchEnv,
    bandwidth: Bandwidth,
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
    oom_hook: OomHook | None = None,
    meter: EnergyMeter | None = None,
    retime_dense: bool = False,
) -> MoeResult:
    """Dense vs MoE of equal total parameters at a fixed short context, both fully resident; with
    `retime_dense` the dense twin again after the MoE (`dense_again`)."""
    meter = meter if meter is not None else make_energy_meter(env)
    routed = preset.moe_experts - preset.moe_shared
    result = MoeResult(
        preset.name,
        env.device_label,
        preset.moe_depth,
        f"{preset.moe_shared} shared + {preset.moe_top_k} of {routed} routed",
        None,
        [],
        llc_bytes=bandwidth.llc_bytes,
        llc_bytes_per_s=bandwidth.llc_bytes_per_s,
    )
    if meter is None:
        result.note = "No energy reading: power is read through NVML, so only on an NVIDIA GPU."
    tokens = random_tokens(preset, env.device)
    depth = preset.moe_depth
    with stoppable(result, progress):
        if meter is not None and preset.idle_seconds > 0:
            result.idle_watts = measure_idle_watts(meter, env, preset, should_stop, progress)
        models = [("dense_moe_size", "dense"), ("moe", "experts (MoE)")]
        models += [("dense_moe_size", DENSE_AGAIN)] if retime_dense else []
        step = 0.9 / len(models)
        for i, (ffn, label) in enumerate(models):
            if should_stop():
                raise Stopped
            progress(0.1 + step * i, f"{label}: timing")
            try:
                model = build("attention", preset, env.device, env.dtype, ffn=ffn)
            except Exception as error:  # out of memory while building is a result; anything else is raised
                result.rows.append(_unbuilt_row(label, ffn, preset, env, bandwidth, oom_message(error)))
                env.free_memory()
                continue
            try:
                row = _new_row(model, label, preset, env, bandwidth, tokens, should_stop)
                result.rows.append(row)
                try:
                    measured = time_at_depth(model, label, preset, env, tokens, depth, should_stop, oom_hook)
                    best = measured.best
                    row.tokens_per_s, row.std_tokens_per_s, row.timing = best.mean, best.std, best.method
                    row.eager_tokens_per_s = measured.eager.mean
                    row.graphed_tokens_per_s = None if measured.graphed is None else measured.graphed.mean
                    counted = kernels_at_depth(model, depth, best, tokens, env)  # untimed, once a model
                    row.kernels_per_step, row.kernels_counted = counted
                    if meter is not None:
                        progress(0.1 + step * (i + 0.5), f"{label}: energy")
                        _energy_window(
                            model, depth, tokens, preset, env, meter, row, result.idle_watts, should_stop
                        )
                except Exception as error:  # out of memory is a result; anything else is raised
                    row.oom_message = oom_message(error)
            finally:  # Stop included: the model's memory is always given back
                model.release()
                del model
                env.free_memory()
    if len(result.rows) == 3:  # the dense twin's second timing is its own field: `rows` stays dense, MoE
        result.dense_again = result.rows.pop()
    return result


def _new_row(
    model: DecodeModel,
    label: str,
    preset: Preset,
    env: BenchEnv,
    bandwidth: Bandwidth,
    tokens: torch.Tensor,
    should_stop: ShouldStop,
) -> MoeRow:
    """A model's row before timing: sizes and the roofline of what a step moves — for the MoE,
    with the fastest way to read its experts already chosen (core.gpu.timing.ways)."""
    way: str | None = None
    trials: dict[str, float | str] | None = None
    if model.moe_layers():
        way, trials = ways.choose_fastest(model, preset, env, tokens, preset.moe_depth, should_stop)
    return _sized_row(model, label, preset, bandwidth, way=way, way_trials=trials)


def _unbuilt_row(
    label: str, ffn: str, preset: Preset, env: BenchEnv, bandwidth: Bandwidth, message: str
) -> MoeRow:
    """A row whose model ran out of memory while being built: sizes and roofline from a 'meta' copy."""
    shape = build("attention", preset, "meta", env.dtype, ffn=ffn)
    message = f"out of memory while building the model: {message}"
    return _sized_row(shape, label, preset, bandwidth, oom_message=message)


def _sized_row(model: DecodeModel, label: str, preset: Preset, bandwidth: Bandwidth, **fields: Any) -> MoeRow:
    """A row with the model's sizes and the roofline of every byte its step moves (weights, cache,
    and the MoE's gathered copy if any); speeds NaN until measured."""
    moved = model.traffic(preset.moe_depth).total
    roofline = bandwidth_bound_tokens_per_s(moved, bandwidth.for_reading(moved))
    return MoeRow(
        label,
        model.total_params(),
        model.active_params(),
        model.active_weight_bytes(),
        math.nan,
        math.nan,
        roofline,
        bytes_per_token=moved,
        **fields,
    )


def measure_idle_watts(
    meter: EnergyMeter, env: BenchEnv, preset: Preset, should_stop: ShouldStop, progress: Progress
) -> float | None:
    """Board power at rest: wait `rest_seconds` first, so the copy test's heat and clocks have
    settled (read right after work, idle reads high and net energy low), then average over
    `idle_seconds`."""
    env.sync()
    if preset.rest_seconds > 0:
        progress(0.0, f"resting {preset.rest_seconds:.0f} s before the idle baseline")
        _sleep_unless_stopped(preset.rest_seconds, should_stop)
    progress(0.02, "idle baseline")
    meter.begin()
    try:
        _sleep_unless_stopped(preset.idle_seconds, should_stop)
    finally:
        idle = meter.end()
    return idle.avg_watts if idle else None


def _energy_window(
    model: DecodeModel,
    depth: int,
    tokens: torch.Tensor,
    preset: Preset,
    env: BenchEnv,
    meter: EnergyMeter,
    row: MoeRow,
    idle_watts: float | None,
    should_stop: ShouldStop,
) -> None:
    """Decode for at least `energy_seconds` at depth d, energy read at the synced window edges.

    On CUDA the steps are one captured graph replayed (the memory-bound way, as timed);
    Stop is checked between replays and the meter is always closed.
    """
    graph = None
    if env.device.type == "cuda":
        try:
            graph = graphs.capture(model, depth, tokens, preset.n_steps)
        except Exception:  # eager steps then, as the timing fell back to
            graph = None
    env.sync()
    meter.begin()
    n = 0
    t0 = time.perf_counter()
    try:
        while n == 0 or time.perf_counter() - t0 < preset.energy_seconds:
            if should_stop():
                raise Stopped
            if graph is not None:
                graph.replay()
                env.sync()  # one replay at a time, so the window ends when its work does
            else:
                model.pos = depth
                for i in range(preset.n_steps):
                    model.step(token_at(tokens, i))
            n += preset.n_steps
        env.sync()
    finally:
        reading: EnergyReading | None = meter.end()  # a counter that went backwards is handled inside
        del graph
    if reading is None or reading.seconds <= 0:
        return
    row.avg_watts = reading.avg_watts
    row.joules_per_token = reading.joules / n
    row.net_joules_per_token = reading.net_joules(idle_watts) / n
    method = f"{reading.method} ({reading.note})" if reading.note else reading.method
    row.energy_method, row.energy_seconds, row.energy_tokens = method, reading.seconds, n
