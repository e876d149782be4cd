"""Decode speed vs context depth on a real checkpoint from the reader's disk, beside its roofline.

The preset benchmarks (core.gpu.suites.context_bench) time random-weight models built to a shape; this
one times a released model as it is: a GPT-2 folder in the course's own module
(core/models/hf_gpt2.py, its KV cache from core/models/gpt2.py), a Qwen3 (dense) or Qwen3.5
(hybrid: fixed boards in three layers of four) folder in the course's own modules over static
buffers (core/gpu/decode/checkpoint_course.py), or a Llama / Mistral / Qwen2 folder through transformers
with its own cache (core/models/hf_causal.py). Method: llama-bench's `tg @ d` (ggml-org/llama.cpp
tools/llama-bench; docs/sources.md §6.1, §6.5) — fill the cache to depth d with
untimed prefill, then time single-token steps. On CUDA the course's Qwen decoders replay each
repetition as one CUDA graph (core.gpu.timing.graphs.time_graphed, as the synthetic models run); the
others, and every decoder on a CPU, run eagerly through core.gpu.timing.decode_timer.time_decode (warm-up,
repetitions, a sync after every step, a time cap per depth). `CheckpointPoint.method` says which.

The roofline comes from the checkpoint's config.json through the planner (core.plan): weights one
step reads + the cache at depth d + the fixed state read and written back (core.roofline.step_bytes, the
planner's own count), over the measured copy bandwidth. Each point also keeps the
cache bytes counted on the real cache tensors, which the tests check equal the planner's, and the
fixed state (Qwen3.5's boards and convolution windows), counted the same way, and the operations one
step ran (a CUDA graph's nodes ÷ its steps, or one profiled step: core.gpu.timing.kernels) with the floor
they set at the planner's 3 µs a kernel, beside the bytes' floor.
`describe(folder)` checks a folder from its config and file headers alone (one-line
CheckpointError), so the CLI and the page refuse bad input before loading anything.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from core.gpu.decode import checkpoint_course
from core.gpu.decode.checkpoint_decoders import Decoder, open_decoder, rows_bytes, state_tensors, unique_bytes
from core.gpu.timing import graphs
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.decode_timer import SpeedPoint, kernels_at_depth, time_decode
from core.gpu.timing.errors import error_line, is_out_of_memory, oom_message
from core.gpu.timing.steps import (
    Progress,
    ShouldStop,
    Stopped,
    Timing,
    never,
    no_progress,
    stoppable,
    token_at,
)
from core.models import hf_causal, hf_folder
from core.models.hf_tokenizer import CheckpointError
from core.plan import ConfigError, PlannedModel, parse
from core.plan.memory import growing_bytes_per_token, sequence_bytes
from core.roofline import bandwidth_bound_tokens_per_s, step_bytes

LAYOUT = "transformers"  # the planner's cache layout that both loaders keep (no MLA, no sliding past the cap)
STATE_LAYOUT = "engine"  # the course's Gated DeltaNet keeps kernel − 1 convolution inputs, as vLLM does
GRAPH_NEEDS_CUDA = "CUDA graphs need a CUDA device"  # why a graphable decoder ran eagerly
MAX_DEFAULT_DEPTH = {"cpu": 4096, "cuda": 32768}  # the default sweep stops here on long-window models


@dataclass(frozen=True)
class Settings:
    """How each depth is timed (the preset fields core.gpu.timing uses, for a checkpoint)."""

    n_steps: int = 16  # timed decode steps per repetition
    warmup: int = 2
    repeats: int = 3
    depth_seconds: float = 20.0  # time cap on one depth

    @property
    def room(self) -> int:
        """Positions a depth needs past d: the timed steps (or the warm-up), one spare."""
        return max(self.n_steps, self.warmup) + 1


# ------------------------------------------------------------------------------------------------
# What the folder holds (config and headers only)
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckpointInfo:
    """A checked checkpoint folder: its family, config, the planner's model of it, its window."""

    folder: Path
    name: str
    family: str
    config: dict = field(repr=False)
    planned: PlannedModel = field(repr=False)
    window: int  # positions one sequence may hold (sliding models: the window, so every layer is full)

    def cache_bytes_per_token(self, elem_bytes: int) -> int:
        return int(growing_bytes_per_token(self.planned, elem_bytes, LAYOUT))

    def state_bytes(self, elem_bytes: int) -> int:
        """Fixed state per sequence (boards in fp32, convolution windows in the weights' dtype)."""
        fixed = sequence_bytes(self.planned, 0, elem_bytes, STATE_LAYOUT, conv_bytes=elem_bytes)
        return int(fixed.state + fixed.conv)

    def weight_bytes(self, elem_bytes: int) -> int:
        """Every parameter, as the planner counts them from config.json."""
        return self.planned.spec.total_params() * elem_bytes

    def weight_read_bytes(self, elem_bytes: int) -> int:
        """Weights one decode step reads: all but the input table's unused rows (the planner's rule)."""
        return self.planned.spec.active_params(count_embedding_table=False) * elem_bytes


def checkpoint_name(folder: Path) -> str:
    """A readable name: 'owner/model' for a Hugging Face cache snapshot, else the folder's name."""
    parts = folder.resolve().parts
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return parts[-3].removeprefix("models--").replace("--", "/")
    return folder.name or str(folder)


def describe(folder: Path | str) -> CheckpointInfo:
    """Check a folder without loading weights: config.json, a supported family (and transformers
    for the non-GPT-2 ones), readable safetensors headers. CheckpointError (one line) otherwise."""
    folder = Path(folder).expanduser()
    config = hf_folder.read_config(folder)
    family = config.get("model_type")
    if family == "gpt2":
        from core.models.hf_gpt2 import read_config as gpt2_checks

        gpt2_checks(folder)  # GPT-2's own refusals (activation, attention scaling)
        if not (folder / "tokenizer.json").is_file():  # the course's GPT-2 loader reads it with the weights
            raise CheckpointError(f"{folder} has no tokenizer.json (the course's GPT-2 loader needs it)")
    elif family in checkpoint_course.QWEN3:
        from core.models.qwen3 import qwen3_config

        qwen3_config(config)  # what the course's Qwen3 module does not do (sliding layers, scaled rotary)
    elif family in checkpoint_course.QWEN35:
        from core.models.hf_qwen35 import qwen35_config, read_config

        top, text = read_config(folder)
        qwen35_config(text, top)
        if not (folder / "tokenizer.json").is_file():  # the course's Qwen3.5 loader reads it with the weights
            raise CheckpointError(f"{folder} has no tokenizer.json (the course's Qwen3.5 loader needs it)")
    elif family in hf_causal.SUPPORTED:
        hf_causal.check_family(config)  # transformers installed
    else:
        families = ", ".join(
            ["gpt2", *checkpoint_course.FAMILIES, *sorted(set(hf_causal.SUPPORTED) - {"qwen3"})]
        )
        raise CheckpointError(
            f"unsupported model family {str(family)[:60]!r} in config.json: the checkpoint benchmark reads {families}"
        )
    hf_folder.check_weight_files(folder)
    try:
        planned = parse(config, name=checkpoint_name(folder))
    except ConfigError as error:
        raise CheckpointError(str(error)) from None
    window = int(config.get("n_positions") or config.get("n_ctx") or 0) if family == "gpt2" else 0
    window = window or planned.spec.context
    if planned.sliding_layers and planned.sliding_window:
        window = min(window, planned.sliding_window - 1)  # keep every layer's cache growing a row per token
    if window < 2:
        raise CheckpointError(f"config.json gives a context window of {window} positions: too short to time")
    return CheckpointInfo(folder, checkpoint_name(folder), family, config, planned, window)


def default_depths(info: CheckpointInfo, settings: Settings, device: torch.device) -> tuple[int, ...]:
    """0, a quarter and half of the window, and the deepest that fits (capped on long windows)."""
    span = min(info.window, MAX_DEFAULT_DEPTH.get(device.type, MAX_DEFAULT_DEPTH["cuda"]))
    deepest = span - settings.room if span == info.window else span
    deepest = deepest // 8 * 8 if deepest >= 8 else max(deepest, 0)
    return tuple(sorted({0, min(span // 4, deepest), min(span // 2, deepest), deepest}))


def check_depths(info: CheckpointInfo, depths: tuple[int, ...], settings: Settings) -> tuple[int, ...]:
    """Increasing depths ≥ 0 that leave room for the timed steps inside the window (CheckpointError)."""
    if not depths or any(d < 0 for d in depths) or list(depths) != sorted(set(depths)):
        raise CheckpointError(f"depths must be increasing whole numbers ≥ 0, got {list(depths)}")
    deepest = info.window - settings.room
    if depths[-1] > deepest:
        raise CheckpointError(
            f"depth {depths[-1]:,} is beyond {info.name}'s window of {info.window:,} positions: the deepest "
            f"that leaves room for {settings.n_steps} timed steps is {deepest:,}"
        )
    return depths


# ------------------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------------------


@dataclass
class CheckpointPoint(SpeedPoint):
    depth: int
    tokens_per_s: float
    std_tokens_per_s: float
    samples_tokens_per_s: list[float]
    cache_bytes: int  # counted on the real cache tensors at depth d
    planned_cache_bytes: int  # core.plan's for the config at depth d
    bytes_per_token: int  # the roofline's (core.roofline.step_bytes): weights read + cache + 2 × state
    predicted_tokens_per_s: float
    capped: bool = False  # the depth's time cap cut its repetitions short
    state_bytes: int = 0  # fixed state (boards, convolution windows) counted on the real tensors at depth d
    planned_state_bytes: int = 0  # core.plan's for the config
    method: str = "eager"  # how the steps ran: "eager", or "CUDA graph"
    kernels_per_step: float | None = None  # operations per step (core.gpu.timing.kernels); None: not counted
    kernels_counted: str = ""  # how: a CUDA graph's nodes, the profiler's CUDA kernels or its aten ops


@dataclass
class CheckpointResult:
    folder: str
    name: str
    family: str
    loader: str
    cache_kind: str
    device: str
    dtype: str
    params: int  # distinct parameters in the loaded model
    weight_bytes: int  # of the loaded tensors
    planned_weight_bytes: int  # core.plan's count from config.json
    weight_read_bytes: int  # what one step reads (planner)
    cache_bytes_per_token: int  # planner, per token of depth
    window: int
    bandwidth_bytes_per_s: float
    bandwidth_method: str
    n_steps: int
    repeats: int
    points: list[CheckpointPoint] = field(default_factory=list)
    oom_depth: int | None = None
    oom_message: str | None = None
    stopped: bool = False
    llc_bytes: int | None = None  # CPU runs: the last-level cache whose speed a step that fits in it gets
    llc_bytes_per_s: float | None = None
    state_bytes: int = 0  # planner: fixed state per sequence (0 for a model with no board)
    graph_note: str | None = None  # why some depth's steps ran eagerly, when they did

    @property
    def cache_matches_plan(self) -> bool:
        return all(
            p.cache_bytes == p.planned_cache_bytes and p.state_bytes == p.planned_state_bytes
            for p in self.points
        )

    @property
    def step_method(self) -> str:
        """'CUDA graph' when every depth was replayed as one, else 'eager'."""
        graphed = bool(self.points) and all(p.method == "CUDA graph" for p in self.points)
        return "CUDA graph" if graphed else "eager"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["step_method"] = self.step_method
        for p_out, p in zip(out["points"], self.points, strict=True):
            p_out["ms_per_token"] = p.ms_per_token
            p_out["percent_of_roofline"] = p.percent_of_roofline
            p_out |= p.floors_ms()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckpointResult:
        point_keys = {f.name for f in dataclasses.fields(CheckpointPoint)}
        keys = {f.name for f in dataclasses.fields(cls)} - {"points"}
        points = [CheckpointPoint(**{k: v for k, v in p.items() if k in point_keys}) for p in data["points"]]
        return cls(**{k: v for k, v in data.items() if k in keys}, points=points)


# ------------------------------------------------------------------------------------------------
# The sweep
# ------------------------------------------------------------------------------------------------


def _nothing(result: CheckpointResult) -> None:
    """The default: nobody watches the points arrive."""


def run_checkpoint(
    folder: Path | str,
    env: BenchEnv,
    bandwidth: Bandwidth,
    depths: tuple[int, ...] | None = None,
    settings: Settings | None = None,
    progress: Progress = no_progress,
    should_stop: ShouldStop = never,
    on_update: Callable[[CheckpointResult], None] = _nothing,
) -> CheckpointResult:
    """Tokens/s at every depth for the checkpoint in `folder`, with its real cache and its roofline.

    Bad input raises CheckpointError before anything is loaded; out of memory at a depth ends the
    sweep there (a result); Stop keeps the depths measured so far."""
    settings = settings or Settings()
    info = describe(folder)
    depths = check_depths(info, tuple(depths or default_depths(info, settings, env.device)), settings)
    elem = torch.finfo(env.dtype).bits // 8
    progress(0.0, f"loading {info.name}")
    decoder = open_decoder(info.family, info.folder, env.device, env.dtype)
    params = decoder.parameters()
    result = CheckpointResult(
        str(info.folder), info.name, info.family, decoder.loader, decoder.cache_kind, env.device_label,
        str(env.dtype).removeprefix("torch."), sum(p.numel() for p in {p.data_ptr(): p for p in params}.values()),
        unique_bytes(params), info.weight_bytes(elem), info.weight_read_bytes(elem),
        info.cache_bytes_per_token(elem), info.window, bandwidth.device_bytes_per_s, bandwidth.method,
        settings.n_steps, settings.repeats,
        llc_bytes=bandwidth.llc_bytes, llc_bytes_per_s=bandwidth.llc_bytes_per_s, state_bytes=info.state_bytes(elem),
    )  # fmt: skip
    del params  # a decoder may lay its weights out anew (core/models/qwen35_lean.py): keep no old ones
    tokens = torch.randint(0, decoder.vocab, (256,), generator=torch.Generator().manual_seed(1))
    tokens = tokens.to(env.device)
    try:
        _warm_up(decoder, info, settings, tokens, env)
        with stoppable(result, progress):
            for i, depth in enumerate(depths):
                if should_stop():
                    raise Stopped
                progress(0.05 + 0.95 * i / len(depths), f"{info.name}: depth {depth:,}")
                try:
                    point, note = _measure(
                        decoder, info, depth, settings, env, bandwidth, tokens, elem, should_stop
                    )
                except Stopped:
                    raise
                except Exception as error:  # out of memory ends the sweep; anything else is raised
                    result.oom_depth, result.oom_message = depth, oom_message(error)
                    break
                result.cache_kind = decoder.cache_kind
                result.points.append(point)
                result.graph_note = result.graph_note or note
                on_update(result)
    finally:
        decoder.release()
        env.free_memory()
    on_update(result)
    return result


def _warm_up(
    decoder: Decoder, info: CheckpointInfo, settings: Settings, tokens: torch.Tensor, env: BenchEnv
) -> None:
    """A short untimed run before the first depth, so its figure carries no first-call costs
    (allocator, kernel selection, lazy initialisation) that the deeper depths do not."""
    depth = min(8, info.window - settings.room)
    decoder.allocate(depth + settings.room)
    decoder.fill(depth)
    for i in range(settings.n_steps):
        decoder.step(token_at(tokens, i))
    env.sync()


def _measure(
    decoder: Decoder,
    info: CheckpointInfo,
    depth: int,
    settings: Settings,
    env: BenchEnv,
    bandwidth: Bandwidth,
    tokens: torch.Tensor,
    elem: int,
    should_stop: ShouldStop,
) -> tuple[CheckpointPoint, str | None]:
    """Fresh cache, untimed prefill to d, count its bytes, then the timed steps (and why they ran
    eagerly, when the decoder could have been graphed)."""
    decoder.allocate(depth + settings.room)
    decoder.fill(depth)
    env.sync()
    measured_cache = rows_bytes(decoder.cache_tensors(), depth)
    measured_state = unique_bytes(state_tensors(decoder))
    planned_cache = int(sequence_bytes(info.planned, depth, elem, LAYOUT).kv)
    planned_state = info.state_bytes(elem)
    deadline = time.perf_counter() + settings.depth_seconds
    timed, note = _graphed(decoder, depth, settings, env, tokens, should_stop, deadline)
    if timed is None:
        timed = time_decode(
            decoder, depth, tokens, settings.n_steps, settings.warmup, settings.repeats, env.sync,
            should_stop, deadline,
        )  # fmt: skip
    counted, how = kernels_at_depth(decoder, depth, timed, tokens, env)
    # the boards and windows read and written back: the planner's count, one roofline for one model
    moved = int(step_bytes(info.weight_read_bytes(elem), planned_cache, planned_state))
    point = CheckpointPoint(
        depth, timed.mean, timed.std, timed.samples_tokens_per_s, measured_cache, planned_cache, moved,
        bandwidth_bound_tokens_per_s(moved, bandwidth.for_reading(moved)), timed.capped,
        measured_state, planned_state, timed.method, counted, how,
    )  # fmt: skip
    return point, note


def _graphed(
    decoder: Decoder,
    depth: int,
    settings: Settings,
    env: BenchEnv,
    tokens: torch.Tensor,
    should_stop: ShouldStop,
    deadline: float,
) -> tuple[Timing | None, str | None]:
    """The depth's repetitions replayed as CUDA graphs, for a decoder that keeps its tensors in place;
    (None, why) where that cannot be: no CUDA device, or a capture that failed (out of memory is raised)."""
    if not getattr(decoder, "graphable", False):
        return None, None
    if env.device.type != "cuda":
        return None, GRAPH_NEEDS_CUDA
    try:
        return graphs.time_graphed(
            decoder, depth, tokens, settings.n_steps, settings.repeats, should_stop, deadline
        ), None
    except Stopped:
        raise
    except Exception as error:  # a graph that cannot be captured leaves the eager figure to be measured
        if is_out_of_memory(error):
            raise
        return None, f"the graph capture failed ({error_line(error)})"
    finally:
        env.free_memory()
