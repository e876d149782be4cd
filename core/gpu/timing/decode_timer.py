"""Decode steps timed at one context depth, llama-bench style.

Method (ggml-org/llama.cpp tools/llama-bench; docs/sources.md §6.1, §6.5): `time_decode` runs a
short untimed warm-up, then `repeats` repetitions of `n_steps` single-token steps with a device
sync after each step; per repetition tokens/s = n_steps / seconds, reported as mean ± sample std.
On CUDA, `time_at_depth` also replays each repetition as one CUDA graph (core.gpu.timing.graphs),
as llama.cpp and vLLM run their decode, so launch overhead no longer hides the memory wall.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from core.gpu.decode.models import DecodeModel
from core.gpu.presets import Preset
from core.gpu.timing import graphs, kernels
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.errors import error_line, is_out_of_memory
from core.gpu.timing.kernels import KernelFloors
from core.gpu.timing.steps import OomHook, ShouldStop, Stopped, Timing, never, token_at


class SpeedPoint(KernelFloors):
    """What a measured point with `tokens_per_s` and `predicted_tokens_per_s` (its roofline) says
    per token: milliseconds, how close it came to the roofline, and — with `kernels_per_step` — its
    kernel floor beside its bytes' floor (core.gpu.timing.kernels.KernelFloors)."""

    tokens_per_s: float
    predicted_tokens_per_s: float

    @property
    def bytes_floor_s(self) -> float | None:
        """The roofline's time for one step: its bytes ÷ the bandwidth."""
        roofline = self.predicted_tokens_per_s
        return 1.0 / roofline if roofline and roofline == roofline else None

    @property
    def ms_per_token(self) -> float:
        return 1000.0 / self.tokens_per_s

    @property
    def percent_of_roofline(self) -> float:
        return 100.0 * self.tokens_per_s / self.predicted_tokens_per_s


@dataclass
class DepthTiming:
    """Eager and (on CUDA) graphed timings at one depth; `best` is the graphed one when there is one."""

    eager: Timing
    graphed: Timing | None = None
    graph_note: str | None = None  # why there is no graphed figure

    @property
    def best(self) -> Timing:
        return self.graphed if self.graphed is not None else self.eager

    @property
    def capped(self) -> bool:
        return self.eager.capped or (self.graphed is not None and self.graphed.capped)


def time_decode(
    model: DecodeModel,
    depth: int,
    tokens: torch.Tensor,
    n_steps: int,
    warmup: int,
    repeats: int,
    sync: Callable[[], None],
    should_stop: ShouldStop = never,
    deadline: float | None = None,
) -> Timing:
    """Warm-up, then `repeats` × (back to depth d, `n_steps` steps, a sync after every step).

    Stop is checked before every step. Past `deadline` (a `time.perf_counter()` value) no new
    repetition starts; a first repetition cut short still counts the steps it timed.
    """
    model.pos = depth
    for i in range(warmup):
        model.step(token_at(tokens, i))
    sync()
    timer = graphs.Timer(model.device)
    samples: list[float] = []
    capped = False
    for _ in range(repeats):
        if deadline is not None and samples and time.perf_counter() > deadline:
            capped = True
            break
        model.pos = depth  # back to depth d: the rows past it are simply overwritten
        timer.start()
        done = 0
        for i in range(n_steps):
            if should_stop():
                raise Stopped
            model.step(token_at(tokens, i))
            sync()
            done += 1
            if deadline is not None and time.perf_counter() > deadline and i + 1 < n_steps:
                capped = True
                break
        seconds = timer.stop()
        if capped and samples:
            break  # a cut-short repetition is not comparable with the whole ones
        samples.append(done / seconds)
        if capped:
            break
    return Timing(samples, "eager", capped)


def time_at_depth(
    model: DecodeModel,
    label: str,
    preset: Preset,
    env: BenchEnv,
    tokens: torch.Tensor,
    depth: int,
    should_stop: ShouldStop = never,
    oom_hook: OomHook | None = None,
    resident_positions: int | None = None,
    allocate: bool = True,
    graphed: bool = True,
) -> DepthTiming:
    """Allocate room for depth d and the timed steps (unless already allocated), prefill to d
    (untimed), time eager steps, then — on CUDA — the same steps replayed as one CUDA graph.

    `oom_hook(label, depth)` lets tests run out of memory at a chosen depth; `resident_positions`
    keeps only that many cache positions on the device (the rest streamed from host memory).
    Each depth gets `preset.depth_seconds` of timing at most (the deadline covers both ways).
    """
    if oom_hook is not None:
        oom_hook(label, depth)
    if allocate:
        model.allocate(steps_room(preset, depth), resident_positions)
    model.fill(depth)
    deadline = time.perf_counter() + preset.depth_seconds
    eager = time_decode(
        model, depth, tokens, preset.n_steps, preset.warmup, preset.repeats, env.sync, should_stop, deadline
    )
    result = DepthTiming(eager)
    if not (graphed and preset.use_graphs):
        return result
    if env.device.type != "cuda":
        result.graph_note = "CUDA graphs need a CUDA device"
        return result
    if time.perf_counter() > deadline:
        result.graph_note = "not graphed: the depth's time cap was spent on the eager steps"
        return result
    if not getattr(model, "graphable", True):
        result.graph_note = "not graphable: the CPU layers wait for the host"
        return result
    try:
        result.graphed = graphs.time_graphed(
            model, depth, tokens, preset.n_steps, preset.repeats, should_stop, deadline
        )
    except Stopped:
        raise
    except Exception as error:  # a graph that cannot be captured leaves the eager figure standing
        if is_out_of_memory(error):
            raise
        result.graph_note = f"graph capture failed: {error_line(error)}"
    finally:
        env.free_memory()
    return result


def kernels_at_depth(
    model: DecodeModel, depth: int, timed: Timing, tokens: torch.Tensor, env: BenchEnv
) -> tuple[float | None, str]:
    """Operations per step of `model` just timed at depth d, with how they were counted
    (core.gpu.timing.kernels.per_step): a graph's nodes when `timed` was graphed, else one profiled step —
    once per measured point, after its timed steps, never inside them."""
    return kernels.per_step(model, depth, timed, token_at(tokens, 0), env.device, env.sync)


def steps_room(preset: Preset, depth: int) -> int:
    """Positions a depth needs: the prefill, the timed steps (or the warm-up), one spare."""
    return depth + max(preset.n_steps, preset.warmup) + 1


def random_tokens(preset: Preset, device: torch.device, n: int = 256) -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    return torch.randint(0, preset.vocab, (n,), generator=gen).to(device)
