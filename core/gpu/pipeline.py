"""One benchmark pipeline: copy bandwidth, then each part a `SuiteSpec` asks for → one `SuiteResult`.

The CLI (`python -m core.gpu.bench`, a preset's suite or a checkpoint), the page's jobs
(core.gpu.serving.jobs) and the validator's end-to-end check (which runs that CLI) all measure
through `run`: the copy bandwidth every roofline divides by comes first, then the parts in this
order — the context sweep, again under a VRAM budget, dense vs MoE, the batch sweep, and the sweep
whose layers past the budget run on the CPU. `on_update(result)` sees the typed result after every
part and every measured depth (the CLI writes it to disk); Stop ends the run between them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import torch

from core.gpu.output.export import versions
from core.gpu.output.result import RunSettings, SuiteResult
from core.gpu.presets import PRESETS, Preset
from core.gpu.suites import batch_bench, checkpoint_bench, moe_sizing
from core.gpu.suites.context_bench import run_context
from core.gpu.suites.moe_bench import MoeResult, run_moe
from core.gpu.timing import bandwidth
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.steps import OomHook, Progress, ShouldStop, never, no_progress


@dataclass(frozen=True)
class CheckpointSpec:
    """A real checkpoint's depth sweep (core.gpu.suites.checkpoint_bench) instead of a preset's parts."""

    folder: str
    depths: tuple[int, ...] | None = None  # None: the checkpoint's default depths
    settings: checkpoint_bench.Settings = field(default_factory=checkpoint_bench.Settings)


@dataclass(frozen=True)
class Bar:
    """How the progress bar is shared out: the copy test's slice and message, then the parts — each
    the same share, or `shares` in run order. `batch_heading`: one line naming the batches (the CLI)
    instead of the batch sweep's own messages (the page); `end`: the page's closing 'done'/'stopped'."""

    copy_share: float = 0.0
    copy_message: str = "copy bandwidth"
    shares: tuple[float, ...] | None = None
    batch_heading: bool = True
    end: tuple[str, str] | None = None  # (done, stopped)


@dataclass(frozen=True)
class SuiteSpec:
    """What one run measures: a preset's parts, or one checkpoint (`checkpoint`, `preset` then None)."""

    preset: Preset | None = None
    checkpoint: CheckpointSpec | None = None
    context: bool = True  # the context sweep, full attention and the fixed state
    context_budget_bytes: int | None = None  # …pretending the card has this much (the page's budget)
    vram_budget_bytes: int | None = None  # the CLI's: also the sweep under it (full attention)…
    cpu_layers: bool = True  # …and, under it too, the one whose layers past it run on the CPU
    moe: bool = True
    moe_sized_by_card: bool = False  # experts sized from this card's free memory and copy speed
    # a released MoE's experts (core.gpu.suites.moe_sizing.SHAPES): on a GPU as its memory holds
    # (`moe_sized_by_card` alone: 'large'), on a CPU the few of `moe_sizing.cpu_sizing`
    moe_shape: str | None = None
    retime_dense: bool = False  # the dense twin timed again right after the MoE
    batches: tuple[int, ...] = ()  # decode at each of these batches…
    batch_depth: int = batch_bench.BATCH_DEPTH  # …at this depth…
    batch_preset: Preset | None = None  # …with this preset (default `preset`: the page shortens its cap)
    bar: Bar = Bar()

    def copy_bytes(self, env: BenchEnv) -> int:
        """The copy test's buffer: the preset's, or for a checkpoint the `small` (GPU) or `cpu` one's."""
        if self.preset is not None:
            return self.preset.copy_bytes
        return PRESETS["small" if env.device.type == "cuda" else "cpu"].copy_bytes

    def settings(self, env: BenchEnv) -> RunSettings:
        if self.checkpoint is not None:
            return RunSettings(
                str(env.device), checkpoint=self.checkpoint.folder, depths=self.checkpoint.depths
            )
        return RunSettings(str(env.device), self.preset, str(env.dtype), self.vram_budget_bytes)

    def parts(self) -> int:
        """How many parts after the copy test (the progress bar's shares)."""
        if self.checkpoint is not None:
            return 1
        budget = self.vram_budget_bytes is not None
        return self.context + budget * (1 + self.cpu_layers) + self.moe + bool(self.batches)


def _nothing(result: SuiteResult) -> None:
    """The default: nobody saves the partial result."""


def run(
    spec: SuiteSpec,
    env: BenchEnv,
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
    on_update: Callable[[SuiteResult], None] = _nothing,
    oom_hook: OomHook | None = None,
) -> SuiteResult:
    """Copy bandwidth, then each part of `spec` in order (see the module's docstring) → one result;
    `oom_hook` (tests) simulates running out of memory at some depth."""
    return _Run(spec, env, progress, should_stop, on_update, oom_hook).all()


class _Run:
    """One run's state: the result so far, the parts finished (for the progress bar), the callbacks."""

    def __init__(self, spec: SuiteSpec, env: BenchEnv, progress: Progress, should_stop: ShouldStop,
                 on_update: Callable[[SuiteResult], None], oom_hook: OomHook | None) -> None:  # fmt: skip
        self.spec, self.env, self.progress, self.should_stop = spec, env, progress, should_stop
        self.on_update, self.oom_hook = on_update, oom_hook
        self.started = time.time()
        self.result = SuiteResult(spec.settings(env), env.snapshot, versions())
        self.done = 0  # parts finished
        self.shares = spec.bar.shares or (1.0,) * spec.parts()

    def all(self) -> SuiteResult:
        spec, env, result = self.spec, self.env, self.result
        self.progress(0.0, spec.bar.copy_message)
        result.bandwidth = bandwidth.measure_copy_bandwidth(env, spec.copy_bytes(env))
        if spec.checkpoint is None:
            self.update()
            self.preset_parts()
            result.complete = not self.should_stop()
            self.update()
        else:  # a checkpoint run's JSON is written after each depth, its stop is the sweep's own
            c = spec.checkpoint
            result.checkpoint = checkpoint_bench.run_checkpoint(
                c.folder, env, result.bandwidth, c.depths, c.settings, self.sub, self.should_stop,
                self.keep("checkpoint"),
            )  # fmt: skip
            result.complete = not result.checkpoint.stopped
        return result

    def update(self) -> None:
        """Stamp the time and the stop, and hand the result so far on."""
        result = self.result
        if result.checkpoint is None and self.spec.checkpoint is None:
            result.seconds = time.time() - self.started
            result.stopped = self.should_stop()
        else:
            result.stopped = bool(result.checkpoint and result.checkpoint.stopped)
        self.on_update(result)

    def sub(self, fraction: float, message: str) -> None:
        """A part's progress, placed in its share of the bar after the copy test's."""
        shares, copy = self.shares, self.spec.bar.copy_share
        part = sum(shares[: self.done]) + fraction * shares[min(self.done, len(shares) - 1)]
        self.progress(copy + (1 - copy) * part / sum(shares), message)

    def keep(self, key: str) -> Callable[[object], None]:
        """The callback that stores a part (whole or so far) under `key` and hands the result on."""

        def store(part: object) -> None:
            setattr(self.result, key, part)
            self.update()

        return store

    def finished(self, key: str, part: object) -> None:
        self.keep(key)(part)
        self.done += 1

    def preset_parts(self) -> None:
        """The preset's parts, in run order; each starts only if nothing asked to stop."""
        spec, env, stop, result = self.spec, self.env, self.should_stop, self.result
        bw = result.bandwidth
        context = partial(run_context, spec.preset, env, bw, progress=self.sub, should_stop=stop,
                          oom_hook=self.oom_hook)  # fmt: skip
        budget = spec.vram_budget_bytes
        if spec.context:
            self.finished("context", context(spec.context_budget_bytes, on_update=self.keep("context")))
        if budget is not None and not stop():
            on_gpu = context(budget, kinds=("attention",), on_update=self.keep("context_budget"))
            self.finished("context_budget", on_gpu)
        if spec.moe and not stop():
            self.finished("moe", self.moe())
        if spec.batches and not (stop() or (result.context is not None and result.context.stopped)):
            self.batch()
        if budget is not None and spec.cpu_layers and not stop():
            on_cpu = context(budget, kinds=("attention",), on_update=self.keep("context_cpu_layers"),
                             cpu_layers=True)  # fmt: skip
            self.finished("context_cpu_layers", on_cpu)

    def moe(self) -> MoeResult:
        """Dense vs MoE — with a released MoE's experts, as this card holds (or a CPU runs in
        seconds), if asked (core.gpu.suites.moe_sizing)."""
        spec, env, bw = self.spec, self.env, self.result.bandwidth
        preset = spec.preset
        e = torch.finfo(env.dtype).bits // 8
        shape = spec.moe_shape or "large"
        sizing = None
        if spec.moe_sized_by_card or (spec.moe_shape and env.device.type == "cuda"):
            sizing = moe_sizing.size_moe(env.free_bytes(), bw.device_bytes_per_s, e, shape=shape)
        elif spec.moe_shape:
            sizing = moe_sizing.cpu_sizing(shape, bw.device_bytes_per_s, e)
        if sizing is not None:
            self.result.moe_sizing = sizing
            preset = moe_sizing.sized_preset(preset, sizing)
        result = run_moe(preset, env, bw, progress=self.sub, should_stop=self.should_stop, oom_hook=self.oom_hook,
                         retime_dense=spec.retime_dense)  # fmt: skip
        result.shape = "" if sizing is None else sizing.shape
        return result

    def batch(self) -> None:
        """The batch sweep: headed by one line naming it (the CLI), or with its own messages (the page)."""
        spec, bar = self.spec, self.spec.bar
        if bar.batch_heading:
            self.sub(0.0, f"batch {', '.join(map(str, spec.batches))} at depth {spec.batch_depth:,}")
        batch = batch_bench.run_batch(
            spec.batch_preset or spec.preset, self.env, spec.batches, spec.batch_depth, self.should_stop,
            bandwidth=self.result.bandwidth, **({} if bar.batch_heading else {"progress": self.sub}),
        )  # fmt: skip
        self.finished("batch", batch)
        if bar.end is not None:
            self.progress(1.0, bar.end[1] if batch.stopped else bar.end[0])
