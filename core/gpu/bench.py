"""Decode benchmarks on the reader's own machine, llama-bench style, plus a CLI.

Method (ggml-org/llama.cpp tools/llama-bench; reference/gpu-measurement.md §1.1, §5):
for each context depth d, an untimed prefill to d, a short untimed warm-up, then
`repeats` repetitions of `n_steps` single-token decode steps with a device sync after
each step; per repetition tokens/s = n_steps / seconds; report mean ± sample std.

- `run_context`: tokens/s vs depth for full attention (a KV cache that grows) and a
  fixed-state model of the same width, beside the roofline (core/roofline.py). A VRAM
  budget keeps the cache rows past it in host memory, streamed every step: the spill.
  Running out of memory at some depth ends that series with the depth recorded.
- `run_moe`: a dense model and an MoE of equal total parameters: tokens/s, average
  board watts and joules per token with the idle baseline subtracted (energy counter,
  sampled power as fallback, as Zeus and vLLM do; None without NVML on the device used).
- `measure_copy_bandwidth`: device-to-device copy (or memcpy on the CPU), the B_eff
  that the roofline uses.

One benchmark per process at a time (`run_exclusive`, `BenchRunner`): a second request
gets `Busy`. Run headless with `python -m core.gpu.bench --preset tiny --out results.json`.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import platform
import statistics
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from core.gpu import nvml as nvml_mod
from core.gpu.energy import CounterWentBackwards, EnergyMeter, EnergyReading
from core.gpu.models import PRESETS, DecodeModel, Preset, build
from core.roofline import bandwidth_bound_tokens_per_s, spill_split, spill_time_per_token

Progress = Callable[[float, str], None]
ShouldStop = Callable[[], bool]
OomHook = Callable[[str, int], None]  # (series name, depth) → may raise torch.cuda.OutOfMemoryError

BUSY_MESSAGE = "Another benchmark is running on this server right now. Wait for it to finish, then try again."


class Stopped(Exception):
    """The reader pressed Stop; partial results are kept."""


def _no_progress(fraction: float, message: str) -> None:
    pass


def _never() -> bool:
    return False


def is_out_of_memory(error: BaseException) -> bool:
    """A CUDA OOM, or a CPU allocator failure."""
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    text = str(error).lower()
    return isinstance(error, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


# ------------------------------------------------------------------------------------------------
# Where the benchmark runs
# ------------------------------------------------------------------------------------------------


@dataclass
class BenchEnv:
    """The device the models run on, how to sync it, and NVML for that device (or None)."""

    device: torch.device
    dtype: torch.dtype
    snapshot: nvml_mod.DeviceSnapshot
    gpu: nvml_mod.NvmlGpu | None = None  # only when the models run on this NVIDIA GPU

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def free_memory(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    @property
    def device_label(self) -> str:
        if self.device.type == "cuda":
            return torch.cuda.get_device_name(self.device)
        return f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def make_env(device: str = "auto", nvml_module: Any = None) -> BenchEnv:
    """Pick CUDA when present (bf16), else the CPU (fp32); open NVML for the chosen GPU."""
    use_cuda = torch.cuda.is_available() and device in ("auto", "cuda")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda was asked for, but this PyTorch sees no CUDA GPU")
    if use_cuda:
        dev = torch.device("cuda", 0)
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        gpu = nvml_mod.open_gpu(nvml_module, 0, pci_bus_id=nvml_mod.cuda_pci_bus_id(0))
        snapshot = gpu.snapshot()
        return BenchEnv(dev, dtype, snapshot, gpu if isinstance(gpu, nvml_mod.NvmlGpu) else None)
    return BenchEnv(torch.device("cpu"), torch.float32, nvml_mod.probe(nvml_module))


# ------------------------------------------------------------------------------------------------
# Measurements
# ------------------------------------------------------------------------------------------------


@dataclass
class Bandwidth:
    device_bytes_per_s: float  # device-to-device copy: (read + write) bytes / s
    link_bytes_per_s: float  # host → device (pinned) on CUDA; memcpy on the CPU
    method: str


def _best_seconds(fn: Callable[[], None], sync: Callable[[], None], repeats: int) -> float:
    fn()  # warm-up
    sync()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def measure_copy_bandwidth(env: BenchEnv, nbytes: int, repeats: int = 5) -> Bandwidth:
    """Copy an `nbytes` buffer; a copy reads and writes every byte, so bandwidth = 2·n / t."""
    device_bw, link_bw = _copy_speeds(env, nbytes, repeats)
    env.free_memory()  # the buffers died with _copy_speeds' frame
    if env.device.type == "cuda":
        return Bandwidth(device_bw, link_bw, "device-to-device copy; pinned host-to-device copy")
    return Bandwidth(device_bw, link_bw, "CPU memcpy (host and 'device' are the same memory)")


def _copy_speeds(env: BenchEnv, nbytes: int, repeats: int) -> tuple[float, float]:
    src = torch.empty(nbytes, dtype=torch.uint8, device=env.device)
    dst = torch.empty_like(src)
    device_bw = 2 * nbytes / _best_seconds(lambda: dst.copy_(src), env.sync, repeats)
    if env.device.type != "cuda":
        return device_bw, device_bw / 2  # a host→host copy moves n bytes each way
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    return device_bw, nbytes / _best_seconds(lambda: dst.copy_(host, non_blocking=True), env.sync, repeats)


@dataclass
class Timing:
    samples_tokens_per_s: list[float]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples_tokens_per_s)

    @property
    def std(self) -> float:
        s = self.samples_tokens_per_s
        return statistics.stdev(s) if len(s) > 1 else 0.0


def time_decode(
    model: DecodeModel,
    depth: int,
    tokens: torch.Tensor,
    n_steps: int,
    warmup: int,
    repeats: int,
    sync: Callable[[], None],
    should_stop: ShouldStop = _never,
) -> Timing:
    """Warm-up, then `repeats` × (restore depth d, `n_steps` steps, a sync after every step)."""
    model.pos = depth
    for i in range(warmup):
        model.step(tokens[i % len(tokens)])
    sync()
    samples = []
    for _ in range(repeats):
        if should_stop():
            raise Stopped
        model.pos = depth  # back to depth d: the rows past it are simply overwritten
        t0 = time.perf_counter()
        for i in range(n_steps):
            model.step(tokens[i % len(tokens)])
            sync()
        samples.append(n_steps / (time.perf_counter() - t0))
    return Timing(samples)


def random_tokens(preset: Preset, device: torch.device, n: int = 256) -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    return torch.randint(0, preset.vocab, (n,), generator=gen).to(device)


# ------------------------------------------------------------------------------------------------
# Context vs speed
# ------------------------------------------------------------------------------------------------


@dataclass
class DepthPoint:
    depth: int
    tokens_per_s: float
    std_tokens_per_s: float
    samples_tokens_per_s: list[float]
    memory_bytes: int  # cache or state at this depth
    spilled_bytes: int  # of it, kept in host memory and streamed every step
    bytes_per_token: int  # active weights + cache/state
    predicted_tokens_per_s: float

    @property
    def ms_per_token(self) -> float:
        return 1000.0 / self.tokens_per_s

    @property
    def percent_of_roofline(self) -> float:
        return 100.0 * self.tokens_per_s / self.predicted_tokens_per_s


@dataclass
class Series:
    model: str  # "full attention" / "fixed state"
    total_params: int
    active_weight_bytes: int
    weight_bytes: int
    points: list[DepthPoint] = field(default_factory=list)
    spill_position: int | None = None  # first cache position that does not fit the budget
    spill_depth: int | None = None  # first measured depth whose cache exceeds the budget
    oom_depth: int | None = None  # depth where allocation ran out of memory; the series ends there
    oom_message: str | None = None


@dataclass
class ContextResult:
    preset: str
    device: str
    dtype: str
    budget_bytes: int | None
    bandwidth_bytes_per_s: float
    link_bytes_per_s: float
    series: list[Series]
    stopped: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for s_out, s in zip(out["series"], self.series, strict=True):
            for p_out, p in zip(s_out["points"], s.points, strict=True):
                p_out["ms_per_token"] = p.ms_per_token
                p_out["percent_of_roofline"] = p.percent_of_roofline
        return out


def resident_positions(budget_bytes: int | None, weight_bytes: int, bytes_per_position: int) -> int | None:
    """How many cache positions fit in the budget once every weight is resident (None: no budget)."""
    if budget_bytes is None:
        return None
    return max(0, (budget_bytes - weight_bytes) // bytes_per_position)


def predicted_tokens_per_s(
    active_bytes: int, memory_bytes: int, unread_bytes: int, budget_bytes: int | None, bw: Bandwidth
) -> float:
    """Roofline for one step: everything read from VRAM, or the spill model under a budget."""
    read = active_bytes + memory_bytes
    if budget_bytes is None:
        return bandwidth_bound_tokens_per_s(read, bw.device_bytes_per_s)
    return 1.0 / spill_time_per_token(
        read, budget_bytes, bw.device_bytes_per_s, bw.link_bytes_per_s, unread_bytes
    )


def run_context(
    preset: Preset,
    env: BenchEnv,
    bandwidth: Bandwidth,
    budget_bytes: int | None = None,
    kinds: tuple[str, ...] = ("attention", "state"),
    progress: Progress = _no_progress,
    should_stop: ShouldStop = _never,
    oom_hook: OomHook | None = None,
) -> ContextResult:
    """Tokens/s at every depth of the preset for each model kind; OOM ends a series, Stop ends all."""
    result = ContextResult(
        preset.name,
        env.device_label,
        str(env.dtype).removeprefix("torch."),
        budget_bytes,
        bandwidth.device_bytes_per_s,
        bandwidth.link_bytes_per_s,
        [],
    )
    tokens = random_tokens(preset, env.device)
    total = len(kinds) * len(preset.depths)
    done = 0
    try:
        for kind in kinds:
            model = build(kind, preset, env.device, env.dtype)
            weights = model.total_params() * model.elem_bytes
            active = model.active_weight_bytes()
            series = Series(model.kind, model.total_params(), active, weights)
            result.series.append(series)
            per_pos = model.memory_bytes(1) if kind == "attention" else 0
            fit = resident_positions(budget_bytes, weights, per_pos) if per_pos else None
            series.spill_position = fit
            for depth in preset.depths:
                if should_stop():
                    raise Stopped
                progress(done / total, f"{model.kind}: depth {depth:,}")
                try:
                    if oom_hook is not None:
                        oom_hook(model.kind, depth)
                    model.allocate(depth + max(preset.n_steps, preset.warmup) + 1, fit)
                    model.fill(depth)
                    timing = time_decode(
                        model,
                        depth,
                        tokens,
                        preset.n_steps,
                        preset.warmup,
                        preset.repeats,
                        env.sync,
                        should_stop,
                    )
                except Stopped:
                    raise
                except Exception as error:
                    if not is_out_of_memory(error):
                        raise
                    series.oom_depth, series.oom_message = depth, str(error).splitlines()[0][:300]
                    model.release()
                    env.free_memory()
                    done += len(preset.depths) - preset.depths.index(depth)
                    break
                memory = model.memory_bytes(depth)
                unread = weights - active
                spilled = 0
                if budget_bytes is not None:
                    spilled = int(spill_split(active + memory, budget_bytes, unread)[1])
                    if spilled > 0 and series.spill_depth is None and per_pos:
                        series.spill_depth = depth
                series.points.append(
                    DepthPoint(
                        depth,
                        timing.mean,
                        timing.std,
                        timing.samples_tokens_per_s,
                        memory,
                        spilled,
                        active + memory,
                        predicted_tokens_per_s(active, memory, unread, budget_bytes, bandwidth),
                    )
                )
                done += 1
            model.release()
            del model
            env.free_memory()
    except Stopped:
        result.stopped = True
    progress(1.0, "stopped" if result.stopped else "done")
    return result


# ------------------------------------------------------------------------------------------------
# Dense vs experts
# ------------------------------------------------------------------------------------------------


@dataclass
class MoeRow:
    model: str  # "dense" / "experts (MoE)"
    total_params: int
    active_params: int
    active_weight_bytes: int
    tokens_per_s: float
    std_tokens_per_s: float
    predicted_tokens_per_s: float
    avg_watts: float | None = None
    joules_per_token: float | None = None  # gross
    net_joules_per_token: float | None = None  # idle baseline subtracted
    energy_method: str | None = None
    energy_seconds: float | None = None
    energy_tokens: int | None = None
    oom_message: str | None = None


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def make_energy_meter(env: BenchEnv) -> EnergyMeter | None:
    """Energy for the device the models run on: only an NVIDIA GPU with NVML answers."""
    if env.gpu is None or env.device.type != "cuda":
        return None
    counter = env.gpu.energy_mj if env.snapshot.energy_counter else None
    power = env.gpu.power_w if env.gpu.power_w() is not None else None
    meter = EnergyMeter(counter, power)
    return meter if meter.can_measure else None


def _sleep_unless_stopped(seconds: float, should_stop: ShouldStop) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        if should_stop():
            raise Stopped
        time.sleep(min(0.1, max(0.0, end - time.perf_counter())))


def run_moe(
    preset: Preset,
    env: BenchEnv,
    bandwidth: Bandwidth,
    progress: Progress = _no_progress,
    should_stop: ShouldStop = _never,
    oom_hook: OomHook | None = None,
    meter: EnergyMeter | None = None,
) -> MoeResult:
    """Dense vs MoE of equal total parameters at a fixed short context, both fully resident."""
    meter = meter if meter is not None else make_energy_meter(env)
    routed = preset.moe_experts - preset.moe_shared
    result = MoeResult(
        preset.name,
        env.device_label,
        preset.moe_depth,
        f"{preset.moe_shared} shared + {preset.moe_top_k} of {routed} routed",
        None,
        [],
    )
    if meter is None:
        result.note = "No energy reading: power is read through NVML, so only on an NVIDIA GPU."
    tokens = random_tokens(preset, env.device)
    depth = preset.moe_depth
    try:
        if meter is not None and preset.idle_seconds > 0:
            progress(0.0, "idle baseline")
            env.sync()
            meter.begin()
            _sleep_unless_stopped(preset.idle_seconds, should_stop)
            idle = meter.end()
            result.idle_watts = idle.avg_watts if idle else None
        for i, (ffn, label) in enumerate((("dense_moe_size", "dense"), ("moe", "experts (MoE)"))):
            if should_stop():
                raise Stopped
            progress(0.1 + 0.45 * i, f"{label}: timing")
            model = build("attention", preset, env.device, env.dtype, ffn=ffn)
            active = model.active_weight_bytes()
            memory = model.memory_bytes(depth)
            row = MoeRow(
                label,
                model.total_params(),
                model.active_params(),
                active,
                math.nan,
                math.nan,
                bandwidth_bound_tokens_per_s(active + memory, bandwidth.device_bytes_per_s),
            )
            result.rows.append(row)
            try:
                if oom_hook is not None:
                    oom_hook(label, depth)
                model.allocate(depth + max(preset.n_steps, preset.warmup) + 1)
                model.fill(depth)
                timing = time_decode(
                    model, depth, tokens, preset.n_steps, preset.warmup, preset.repeats, env.sync, should_stop
                )
                row.tokens_per_s, row.std_tokens_per_s = timing.mean, timing.std
                if meter is not None:
                    progress(0.3 + 0.45 * i, f"{label}: energy")
                    _energy_window(
                        model, depth, tokens, preset, env, meter, row, result.idle_watts, should_stop
                    )
            except Stopped:
                raise
            except Exception as error:
                if not is_out_of_memory(error):
                    raise
                row.oom_message = str(error).splitlines()[0][:300]
            finally:
                model.release()
                del model
                env.free_memory()
    except Stopped:
        result.stopped = True
    progress(1.0, "stopped" if result.stopped else "done")
    return result


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
    """Decode for at least `energy_seconds` at depth d, energy read at the synced window edges."""
    env.sync()
    meter.begin()
    n = 0
    t0 = time.perf_counter()
    while n == 0 or time.perf_counter() - t0 < preset.energy_seconds:
        if should_stop():
            meter.end()
            raise Stopped
        model.pos = depth
        for i in range(preset.n_steps):
            model.step(tokens[i % len(tokens)])
        n += preset.n_steps
    env.sync()
    try:
        reading: EnergyReading | None = meter.end()
    except CounterWentBackwards as error:
        row.energy_method = f"discarded: {error}"
        return
    if reading is None or reading.seconds <= 0:
        return
    row.avg_watts = reading.avg_watts
    row.joules_per_token = reading.joules / n
    row.net_joules_per_token = reading.net_joules(idle_watts) / n
    row.energy_method, row.energy_seconds, row.energy_tokens = reading.method, reading.seconds, n


# ------------------------------------------------------------------------------------------------
# What the page runs (one call = one benchmark, with its own device setup and bandwidth)
# ------------------------------------------------------------------------------------------------

OOM_HOOK: OomHook | None = None  # tests set this to simulate running out of memory at some depth


def context_benchmark(
    preset_name: str,
    budget_bytes: int | None = None,
    device: str = "auto",
    progress: Progress = _no_progress,
    should_stop: ShouldStop = _never,
) -> dict[str, Any]:
    """Bandwidth, then the context sweep → {"bandwidth": Bandwidth, "context": ContextResult, "device": snapshot}."""
    preset = PRESETS[preset_name]
    env = make_env(device)
    progress(0.0, "measuring copy bandwidth")
    bw = measure_copy_bandwidth(env, preset.copy_bytes)
    ctx = run_context(
        preset,
        env,
        bw,
        budget_bytes,
        progress=lambda f, m: progress(0.05 + 0.95 * f, m),
        should_stop=should_stop,
        oom_hook=OOM_HOOK,
    )
    return {"bandwidth": bw, "context": ctx, "device": env.snapshot}


def moe_benchmark(
    preset_name: str,
    device: str = "auto",
    progress: Progress = _no_progress,
    should_stop: ShouldStop = _never,
) -> dict[str, Any]:
    """Bandwidth, then dense vs MoE → {"bandwidth": Bandwidth, "moe": MoeResult, "device": snapshot}."""
    preset = PRESETS[preset_name]
    env = make_env(device)
    progress(0.0, "measuring copy bandwidth")
    bw = measure_copy_bandwidth(env, preset.copy_bytes)
    moe = run_moe(
        preset,
        env,
        bw,
        progress=lambda f, m: progress(0.05 + 0.95 * f, m),
        should_stop=should_stop,
        oom_hook=OOM_HOOK,
    )
    return {"bandwidth": bw, "moe": moe, "device": env.snapshot}


def predict_context(
    preset: Preset,
    bandwidth: Bandwidth,
    budget_bytes: int | None = None,
    elem_bytes: int = 2,
) -> dict[str, list[tuple[int, float]]]:
    """Roofline only, no run: (depth, tokens/s) per model kind, from shapes on the 'meta' device."""
    dtype = {2: torch.bfloat16, 4: torch.float32}[elem_bytes]
    out = {}
    for kind in ("attention", "state"):
        model = build(kind, preset, "meta", dtype)
        weights, active = model.total_params() * elem_bytes, model.active_weight_bytes()
        out[model.kind] = [
            (
                d,
                predicted_tokens_per_s(
                    active,
                    model.memory_bytes(d),
                    weights - active,
                    budget_bytes if kind == "attention" else None,
                    bandwidth,
                ),
            )
            for d in preset.depths
        ]
    return out


# ------------------------------------------------------------------------------------------------
# One benchmark at a time
# ------------------------------------------------------------------------------------------------

_BENCH_LOCK = threading.Lock()


@dataclass
class Busy:
    """Returned instead of a result when another benchmark holds the lock."""

    message: str = BUSY_MESSAGE


def run_exclusive(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run `fn` unless a benchmark is already running in this process; then return Busy()."""
    if not _BENCH_LOCK.acquire(blocking=False):
        return Busy()
    try:
        return fn(*args, **kwargs)
    finally:
        _BENCH_LOCK.release()


def benchmark_running() -> bool:
    return _BENCH_LOCK.locked()


@dataclass
class Job:
    """A benchmark running on a background thread, watched by the page that started it."""

    owner: str
    label: str
    fraction: float = 0.0
    message: str = "starting"
    result: Any = None
    error: str | None = None
    done: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def update(self, fraction: float, message: str) -> None:
        self.fraction, self.message = max(0.0, min(1.0, fraction)), message

    def wait(self, timeout: float | None = None) -> bool:
        if self.thread is not None:
            self.thread.join(timeout)
        return self.done


class BenchRunner:
    """Runs benchmarks on a thread, one per process; remembers each reader's last job."""

    def __init__(self, keep: int = 64) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._keep = keep
        self._state = threading.Lock()

    def submit(self, owner: str, label: str, fn: Callable[..., Any], **kwargs: Any) -> Job | Busy:
        """Start `fn(progress=…, should_stop=…, **kwargs)` unless any benchmark is running."""
        if not _BENCH_LOCK.acquire(blocking=False):
            return Busy()
        job = Job(owner, label)

        def work() -> None:
            try:
                job.result = fn(progress=job.update, should_stop=job.stop.is_set, **kwargs)
            except Exception as error:  # reported on the page, never raised into Streamlit
                job.error = f"{type(error).__name__}: {error}"
            finally:
                job.done = True
                _BENCH_LOCK.release()

        with self._state:
            self._jobs[owner] = job
            self._jobs.move_to_end(owner)
            while len(self._jobs) > self._keep:
                self._jobs.popitem(last=False)
        job.thread = threading.Thread(target=work, name=f"bench-{label}", daemon=True)
        job.thread.start()
        return job

    def job(self, owner: str) -> Job | None:
        with self._state:
            return self._jobs.get(owner)

    def forget(self, owner: str) -> None:
        with self._state:
            self._jobs.pop(owner, None)


RUNNER = BenchRunner()


# ------------------------------------------------------------------------------------------------
# Export
# ------------------------------------------------------------------------------------------------

CSV_FIELDS = (
    "benchmark",
    "model",
    "depth",
    "tokens_per_s",
    "std_tokens_per_s",
    "ms_per_token",
    "predicted_tokens_per_s",
    "percent_of_roofline",
    "memory_bytes",
    "spilled_bytes",
    "avg_watts",
    "joules_per_token",
    "net_joules_per_token",
    "energy_method",
    "note",
)


def to_csv(context: ContextResult | None = None, moe: MoeResult | None = None) -> str:
    """One row per measured point, both benchmarks in one table."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    if context is not None:
        for s in context.series:
            for p in s.points:
                writer.writerow(
                    {
                        "benchmark": "context",
                        "model": s.model,
                        "depth": p.depth,
                        "tokens_per_s": f"{p.tokens_per_s:.4f}",
                        "std_tokens_per_s": f"{p.std_tokens_per_s:.4f}",
                        "ms_per_token": f"{p.ms_per_token:.4f}",
                        "predicted_tokens_per_s": f"{p.predicted_tokens_per_s:.4f}",
                        "percent_of_roofline": f"{p.percent_of_roofline:.2f}",
                        "memory_bytes": p.memory_bytes,
                        "spilled_bytes": p.spilled_bytes,
                    }
                )
            if s.oom_depth is not None:
                writer.writerow(
                    {
                        "benchmark": "context",
                        "model": s.model,
                        "depth": s.oom_depth,
                        "note": f"out of memory: {s.oom_message}",
                    }
                )
    if moe is not None:
        for r in moe.rows:
            writer.writerow(
                {
                    "benchmark": "dense vs MoE",
                    "model": r.model,
                    "depth": moe.depth,
                    "tokens_per_s": f"{r.tokens_per_s:.4f}",
                    "std_tokens_per_s": f"{r.std_tokens_per_s:.4f}",
                    "predicted_tokens_per_s": f"{r.predicted_tokens_per_s:.4f}",
                    "percent_of_roofline": f"{100 * r.tokens_per_s / r.predicted_tokens_per_s:.2f}",
                    "avg_watts": "" if r.avg_watts is None else f"{r.avg_watts:.2f}",
                    "joules_per_token": "" if r.joules_per_token is None else f"{r.joules_per_token:.6f}",
                    "net_joules_per_token": ""
                    if r.net_joules_per_token is None
                    else f"{r.net_joules_per_token:.6f}",
                    "energy_method": r.energy_method or "",
                    "note": r.oom_message or "",
                }
            )
    return buf.getvalue()


def versions() -> dict[str, str | None]:
    try:
        from importlib.metadata import version

        nvml_version = version("nvidia-ml-py")
    except Exception:
        nvml_version = None
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": str(torch.backends.cudnn.version()) if torch.cuda.is_available() else None,
        "nvidia_ml_py": nvml_version,
        "platform": platform.platform(),
    }


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)


def _finite(obj: Any) -> Any:
    """NaN/inf → None so the JSON is strict."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def to_json(payload: dict[str, Any]) -> str:
    return json.dumps(_finite(payload), indent=2, default=_json_default)


# ------------------------------------------------------------------------------------------------
# The whole suite (page "run all" and the CLI)
# ------------------------------------------------------------------------------------------------


def run_suite(
    preset: Preset,
    env: BenchEnv,
    budget_bytes: int | None = None,
    moe: bool = True,
    progress: Progress = _no_progress,
    should_stop: ShouldStop = _never,
) -> dict[str, Any]:
    """Bandwidth, context sweep (and again under a VRAM budget), dense vs MoE → one JSON-ready dict."""
    started = time.time()
    progress(0.0, "copy bandwidth")
    bw = measure_copy_bandwidth(env, preset.copy_bytes)
    parts = 3 if budget_bytes is not None else 2
    part = 0

    def sub(fraction: float, message: str) -> None:
        progress((part + fraction) / parts, message)

    out: dict[str, Any] = {
        "settings": {
            "preset": asdict(preset),
            "device": str(env.device),
            "dtype": str(env.dtype),
            "vram_budget_bytes": budget_bytes,
        },
        "versions": versions(),
        "device": env.snapshot.to_dict(),
        "bandwidth": asdict(bw),
    }
    out["context"] = run_context(preset, env, bw, None, progress=sub, should_stop=should_stop).to_dict()
    part += 1
    if budget_bytes is not None and not should_stop():
        ctx = run_context(
            preset, env, bw, budget_bytes, kinds=("attention",), progress=sub, should_stop=should_stop
        )
        out["context_budget"] = ctx.to_dict()
        part += 1
    if moe and not should_stop():
        out["moe"] = run_moe(preset, env, bw, progress=sub, should_stop=should_stop).to_dict()
    out["stopped"] = should_stop()
    out["seconds"] = time.time() - started
    return out


def _print_summary(result: dict[str, Any]) -> None:
    bw = result["bandwidth"]
    dev = result["device"]
    print(f"device: {result['settings']['device']} | NVML: {dev.get('name') or dev.get('reason')}")
    print(
        f"copy bandwidth {bw['device_bytes_per_s'] / 1e9:.1f} GB/s, link {bw['link_bytes_per_s'] / 1e9:.1f} GB/s"
    )
    for key in ("context", "context_budget"):
        if key not in result:
            continue
        ctx = result[key]
        budget = ctx["budget_bytes"]
        print(f"\n{key}" + ("" if budget is None else f" (VRAM budget {budget / 1024**3:.2f} GiB)"))
        for s in ctx["series"]:
            for p in s["points"]:
                print(
                    f"  {s['model']:<15} d={p['depth']:>7}  {p['tokens_per_s']:9.1f} ± {p['std_tokens_per_s']:6.1f} t/s"
                    f"  roofline {p['predicted_tokens_per_s']:10.1f}  ({p['percent_of_roofline']:5.1f} %)"
                    + ("  spilled" if p["spilled_bytes"] else "")
                )
            if s["oom_depth"] is not None:
                print(f"  {s['model']:<15} d={s['oom_depth']:>7}  out of memory")
    if "moe" in result:
        moe = result["moe"]
        print(f"\ndense vs MoE at depth {moe['depth']} ({moe['experts']}), idle {moe['idle_watts']} W")
        for r in moe["rows"]:
            jpt = r["net_joules_per_token"]
            print(
                f"  {r['model']:<15} {r['tokens_per_s']:9.1f} ± {r['std_tokens_per_s']:6.1f} t/s"
                f"  watts {r['avg_watts']}  J/token (net) {jpt}"
            )
    print(f"\n{result['seconds']:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.gpu.bench", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--preset",
        choices=[*PRESETS, "auto"],
        default="auto",
        help="model sizes (auto: by VRAM, 'cpu' without CUDA)",
    )
    parser.add_argument("--out", default="results/gpu_bench.json", help="where to write the JSON")
    parser.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    parser.add_argument(
        "--vram-budget-gb",
        type=float,
        default=None,
        help="also run the context sweep pretending the card has this many GiB",
    )
    parser.add_argument("--no-moe", action="store_true", help="skip dense vs MoE")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    env = make_env(args.device)
    preset_name = args.preset
    if preset_name == "auto":
        preset_name = auto_preset(env)
    preset = PRESETS[preset_name]
    budget = None if args.vram_budget_gb is None else int(args.vram_budget_gb * 1024**3)
    print(f"preset {preset.name}: {preset.description}", flush=True)

    def progress(fraction: float, message: str) -> None:
        print(f"[{100 * fraction:5.1f} %] {message}", file=sys.stderr, flush=True)

    result = run_exclusive(run_suite, preset, env, budget, not args.no_moe, progress)
    if isinstance(result, Busy):
        print(result.message, file=sys.stderr)
        return 2
    from pathlib import Path

    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_json(result))
    _print_summary(result)
    print(f"wrote {path}")
    return 0


def preset_for_vram(total_bytes: int | None) -> str:
    """'large' from 20 GiB of VRAM, else 'small'."""
    return "large" if total_bytes is not None and total_bytes >= 20 * 1024**3 else "small"


def auto_preset(env: BenchEnv) -> str:
    """'cpu' without CUDA; on a GPU by its memory (preset_for_vram)."""
    if env.device.type != "cuda":
        return "cpu"
    return preset_for_vram(torch.cuda.get_device_properties(env.device).total_memory)


if __name__ == "__main__":
    sys.exit(main())
