"""Keep the fastest way a card runs a model's step, as engines pick their kernels.

A model may run part of its step more than one way (core.gpu.decode.models: `kernel_ways`): the MoE's
experts gathered, read by a grouped GEMM or by Triton kernels; the fixed-state step as PyTorch
ops or one Triton kernel. Which is fastest depends on the card, so each way this card can run is
timed in a short CUDA-graph run at the depth about to be measured, and the fastest is kept. Off
CUDA the first (PyTorch) way is kept untried: there is no graph to time, and Triton only
interprets there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from core.gpu.decode.models import part_way
from core.gpu.timing import graphs
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.decode_timer import steps_room
from core.gpu.timing.errors import error_line, is_out_of_memory, oom_message
from core.gpu.timing.steps import ShouldStop, Stopped, never

if TYPE_CHECKING:
    from core.gpu.decode.models import DecodeModel
    from core.gpu.presets import Preset

TRIAL_REPEATS = 2  # graph replays per way: enough to rank ways that differ by more than noise


def skipped(part: str, way: str, skip: tuple[str, ...]) -> bool:
    """Is `way` of the step's `part` in the skip list? 'moe:triton' names one part's way (the MoE's
    Triton kernels, not the fused state step); a bare 'triton' names it in every part."""
    return way in skip or part_way(part, way) in skip


def choose_fastest(
    model: DecodeModel,
    preset: Preset,
    env: BenchEnv,
    tokens: torch.Tensor,
    depth: int,
    should_stop: ShouldStop = never,
) -> tuple[str, dict[str, float | str] | None]:
    """Time each way in a short CUDA-graph run at `depth` and leave the model using the fastest.

    Returns (the way kept, tokens/s per way tried — or the one-line reason it could not run).
    A way that fails leaves the others; out of memory in a trial keeps the first way, untried
    (trials None); Stop is raised; the trial's cache is always released."""
    ways = [
        w
        for i, w in enumerate(model.kernel_ways())
        if i == 0 or not skipped(model.way_part, w, preset.skip_ways)
    ]
    if env.device.type != "cuda" or len(ways) < 2:
        model.use_way(ways[0])
        return ways[0], {}
    trials: dict[str, float | str] | None = {}
    try:
        model.allocate(steps_room(preset, depth))
        model.fill(depth)
        for way in ways:
            if should_stop():
                raise Stopped
            model.use_way(way)
            try:
                # capture() warms up on a side stream first: Triton compiles there, not in the graph
                trials[way] = graphs.time_graphed(
                    model, depth, tokens, preset.n_steps, TRIAL_REPEATS, should_stop
                ).mean
            except Stopped:
                raise
            except Exception as error:  # this way cannot run here; out of memory ends the trials
                if is_out_of_memory(error):
                    raise
                trials[way] = error_line(error, 160)
            finally:
                env.free_memory()
    except Exception as error:  # out of memory: the first way, untried; anything else (Stop too) is raised
        oom_message(error)
        trials = None
    finally:
        model.release()
        env.free_memory()
    timed = {way: speed for way, speed in (trials or {}).items() if isinstance(speed, float)}
    best = max(timed, key=timed.__getitem__) if timed else ways[0]
    model.use_way(best)
    return best, trials
