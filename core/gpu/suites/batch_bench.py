"""Decode at batch 1, 4, 16, 64: where a smaller memory per sequence pays off.

At batch 1 a step reads every weight for one token; at batch B the same weights serve B sequences,
so tokens/s in total grows with B until each sequence's own memory — its KV cache, or its fixed
state — dominates what a step reads, or no longer fits on the card. So the largest batch that fits,
and the total tokens/s there, is where two models' memories part ways.

Two pairs can be swept (a preset's `batch_pair`, or `run_batch(pair=…)`):

- `released` (the default): Qwen3-8B's shapes (dense, grouped-query attention in every layer) against
  Qwen3.5-9B's (a 3:1 hybrid of Gated DeltaNet and full-attention layers), both 4,096 wide, from their
  configs (core.gpu.decode.pair_shapes, built by core.gpu.decode.pair_decoder): at 16K a Qwen3-8B
  sequence holds 2.25 GiB, a Qwen3.5-9B one 561 MiB, about 4× less. A preset cuts them down only where
  its machine cannot hold them (fewer layers, a shorter vocabulary; each layer's shapes as released). Each
  series also carries the planner's largest batch for the same shapes in the same free memory
  (`pair_shapes.planner_max_batch`): one function counts a sequence's bytes for both.
- `synthetic`: the preset's multi-head attention against a pure fixed state (`BatchedDecoder`): the
  decode models' skeleton (core.gpu.decode.models) with a batch dimension — at 16K on the `large`
  preset 4 GiB against 32 MiB per sequence, 128×.

`run_batch` times each at one depth for each batch that fits (core.gpu.timing.decode_timer.time_at_depth:
eager, and replayed as a CUDA graph on a GPU), then counts the operations of one step of that batch
(core.gpu.timing.kernels) and, given the copy bandwidth, sets its kernel floor beside its bytes' floor.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from core.gpu.decode import pair_shapes
from core.gpu.decode.ffn import weight
from core.gpu.decode.pair_decoder import PairDecoder
from core.gpu.decode.pair_shapes import PAIR_WORDS
from core.gpu.decode.sized import SizedModule
from core.gpu.decode.traffic import Traffic
from core.gpu.presets import Preset
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.decode_timer import kernels_at_depth, steps_room, time_at_depth
from core.gpu.timing.errors import oom_message
from core.gpu.timing.kernels import KernelFloors
from core.gpu.timing.steps import Progress, ShouldStop, Stopped, never, no_progress
from core.roofline import bandwidth_bound_tokens_per_s

BATCHES = (1, 4, 16, 64)
BATCH_DEPTH = 16384
FIT_SHARE = 0.9  # of the free memory a batch may fill: the allocator and the graph pool need the rest
KINDS = {"attention": "full attention", "state": "fixed state"}  # the synthetic pair's series
PAIRS = ("released", "synthetic")


def _rms(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def per_sequence_bytes(kind: str, preset: Preset, depth: int, elem_bytes: int) -> int:
    """Memory one sequence holds at `depth`: keys and values of every position, or the fp32 state."""
    p = preset
    if kind == "attention":
        return 2 * p.n_layers * depth * p.d_model * elem_bytes
    return p.n_layers * p.n_heads * p.head_dim * p.head_dim * 4


def max_batch(free_bytes: int, weight_bytes: int, sequence_bytes: int) -> int:
    """The most sequences whose memory fits beside the weights in FIT_SHARE of the free memory."""
    return max(0, int(FIT_SHARE * free_bytes - weight_bytes) // max(1, sequence_bytes))


class BatchedDecoder(SizedModule):
    """Embedding → n_layers × [attention or gated-delta state + dense feed-forward] → head, for
    `batch` sequences at once; each sequence's cache or state is its own, the weights are shared."""

    def __init__(self, kind: str, preset: Preset, batch: int, device: torch.device | str, dtype: torch.dtype):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
        self.kind, self.preset, self.batch = kind, preset, batch
        self.device, self.dtype = torch.device(device), dtype
        d, p = preset.d_model, preset
        self.embed = weight((p.vocab, d), self.device, dtype)
        self.head = weight((d, p.vocab), self.device, dtype)
        self.wqkv = nn.ParameterList(weight((d, 3 * d), self.device, dtype) for _ in range(p.n_layers))
        self.wo = nn.ParameterList(weight((d, d), self.device, dtype) for _ in range(p.n_layers))
        self.w1 = nn.ParameterList(weight((d, p.ffn_hidden), self.device, dtype) for _ in range(p.n_layers))
        self.w2 = nn.ParameterList(weight((p.ffn_hidden, d), self.device, dtype) for _ in range(p.n_layers))
        if kind == "state":
            self.w_gates = nn.ParameterList(
                weight((d, 2 * p.n_heads), self.device, dtype) for _ in range(p.n_layers)
            )
        self.memory: list[torch.Tensor] = []  # per layer: (B, H, L, 2, Dh) cache or (B, H, Dh, Dh) state
        self.pos = 0

    def traffic(self, pos: int) -> Traffic:
        """One step for all sequences: every weight once (one embedding row per sequence), and each
        sequence's cache read to `pos` and its new row written — or its state, in PyTorch ops read four
        times and written twice (as core.gpu.decode.models.StateDecoder's)."""
        p, e = self.preset, self.elem_bytes
        weights = self.weight_bytes() - (p.vocab - self.batch) * p.d_model * e
        if self.kind == "attention":
            row = 2 * p.d_model * e
            return Traffic(weights=weights, cache_read=self.batch * p.n_layers * (pos + 1) * row,
                           cache_write=self.batch * p.n_layers * row)  # fmt: skip
        state = self.batch * per_sequence_bytes("state", p, 0, e)
        return Traffic(weights=weights, state=6 * state)  # decay, recall, update (read + write), output

    def allocate(self, max_len: int, resident_positions: int | None = None) -> None:
        p, b = self.preset, self.batch
        if self.kind == "attention":
            shape: tuple[int, ...] = (b, p.n_heads, max_len, 2, p.head_dim)
            self.memory = [
                torch.empty(shape, device=self.device, dtype=self.dtype) for _ in range(p.n_layers)
            ]
        else:
            shape = (b, p.n_heads, p.head_dim, p.head_dim)
            self.memory = [
                torch.zeros(shape, device=self.device, dtype=torch.float32) for _ in range(p.n_layers)
            ]

    def release(self) -> None:
        self.memory = []

    def fill(self, depth: int) -> None:
        """Untimed prefill: random unit-scale rows to `depth` (or a random state), as the decode models do."""
        for m in self.memory:
            if self.kind == "attention":
                m[:, :, :depth].normal_()
            else:
                m.normal_(0.0, 1.0 / self.preset.head_dim) if depth else m.zero_()
        self.pos = depth

    @torch.inference_mode()
    def step(self, tokens: torch.Tensor) -> torch.Tensor:
        """Decode one token per sequence ((B,) or (1, B) long, on the device) → logits (B, vocab)."""
        x = self.embed.index_select(0, tokens.reshape(self.batch))  # (B, D)
        for layer in range(self.preset.n_layers):
            x = x + self._mix(_rms(x), layer) @ self.wo[layer]
            x = x + F.gelu(_rms(x) @ self.w1[layer]) @ self.w2[layer]
        self.pos += 1
        return _rms(x) @ self.head

    def _mix(self, h: torch.Tensor, layer: int) -> torch.Tensor:  # (B, D) → (B, D)
        p, b = self.preset, self.batch
        n_h, dh = p.n_heads, p.head_dim
        qkv = (h @ self.wqkv[layer]).view(b, 3, n_h, dh)
        if self.kind == "attention":
            cache = self.memory[layer]  # (B, H, L, 2, Dh)
            cache[:, :, self.pos].copy_(qkv[:, 1:].transpose(1, 2))  # this position's k, v: (B, H, 2, Dh)
            kv = cache[:, :, : self.pos + 1]  # (B, H, n, 2, Dh)
            out = F.scaled_dot_product_attention(
                qkv[:, 0, :, None], kv[..., 0, :], kv[..., 1, :]
            )  # (B, H, 1, Dh)
            return out.reshape(b, p.d_model)
        q, k, v = qkv.float().unbind(1)  # each (B, H, Dh)
        q = F.normalize(q, dim=-1) * dh**-0.5
        k = F.normalize(k, dim=-1)
        beta_logit, gate_logit = (h @ self.w_gates[layer]).float().view(b, 2, n_h).unbind(1)  # (B, H) each
        beta, alpha = torch.sigmoid(beta_logit), torch.exp(-F.softplus(gate_logit))
        s = self.memory[layer]  # (B, H, K, V), updated in place: S ← αS + β k (v − Sᵀk)ᵀ
        s.mul_(alpha[..., None, None])
        recalled = (k[..., None, :] @ s)[..., 0, :]  # (B, H, V)
        s.add_(k[..., :, None] * (beta[..., None] * (v - recalled))[..., None, :])
        o = (q[..., None, :] @ s)[..., 0, :]  # (B, H, V)
        return o.to(self.dtype).reshape(b, p.d_model)


@dataclass
class BatchPoint(KernelFloors):
    batch: int
    fits: bool
    tokens_per_s_per_sequence: float | None = None
    tokens_per_s_total: float | None = None
    timing: str | None = None
    bytes_per_step: int | None = None
    memory_bytes: int | None = None  # every sequence's cache or state
    note: str | None = None
    predicted_tokens_per_s_per_sequence: float | None = None  # the roofline: bytes ÷ bandwidth
    kernels_per_step: float | None = None  # operations per step (core.gpu.timing.kernels); None: not counted
    kernels_counted: str = ""  # how: a CUDA graph's nodes, the profiler's CUDA kernels or its aten ops

    @property
    def bytes_floor_s(self) -> float | None:
        """The roofline's time for one step of the whole batch: its bytes ÷ the bandwidth."""
        roofline = self.predicted_tokens_per_s_per_sequence
        return 1.0 / roofline if roofline else None


@dataclass
class BatchSeries:
    kind: str
    model: str
    depth: int
    weight_bytes: int
    per_sequence_bytes: int
    max_batch: int  # the largest that fits the free memory beside the weights
    points: list[BatchPoint] = field(default_factory=list)
    # the released pair's: the planner's largest batch for these shapes in the same free memory (at the
    # sweep's depth, with its runtime reserve), and how far the shapes were cut down
    planner_max_batch: int | None = None
    layers: int | None = None
    released_layers: int | None = None
    vocab: int | None = None
    released_vocab: int | None = None
    width: int | None = None
    released_width: int | None = None


@dataclass
class BatchResult:
    preset: str
    device: str
    depth: int
    free_bytes: int
    series: list[BatchSeries] = field(default_factory=list)
    stopped: bool = False
    pair: str = "synthetic"  # which pair (PAIRS); runs written before the released pair were synthetic

    def to_dict(self) -> dict[str, Any]:
        """Its JSON, each point with both floors (derived: dropped when read back)."""
        out = asdict(self)
        for s_out, s in zip(out["series"], self.series, strict=True):
            for p_out, p in zip(s_out["points"], s.points, strict=True):
                p_out |= p.floors_ms()
        return out


def pair_scale(preset: Preset) -> pair_shapes.PairScale:
    """How far `preset` cuts the released pair down (core.gpu.decode.pair_shapes.PairScale)."""
    return pair_shapes.PairScale(preset.pair_layers, preset.pair_vocab, preset.pair_width_divisor)


def run_batch(
    preset: Preset,
    env: BenchEnv,
    batches: tuple[int, ...] = BATCHES,
    depth: int = BATCH_DEPTH,
    should_stop: ShouldStop = never,
    progress: Progress = no_progress,
    pair: str | None = None,
    bandwidth: Bandwidth | None = None,
) -> BatchResult:
    """Each model of `pair` (default: the preset's) at `depth` for every batch in `batches` that fits;
    the largest that fits is reported for each whether or not it was among them. `progress(fraction,
    message)` before each batch. With `bandwidth`, each point's roofline (its step's bytes ÷ the copy speed)."""
    pair = pair or preset.batch_pair
    if pair not in PAIRS:
        raise ValueError(f"unknown batch pair {pair!r}; choose one of {', '.join(PAIRS)}")
    free = env.free_bytes()
    result = BatchResult(preset.name, env.device_label, depth, free, pair=pair)
    try:
        for kind in KINDS:
            models = _Models(kind, pair, preset, env)
            series = models.series(free, depth)
            result.series.append(series)
            try:
                for b in batches:
                    if should_stop():
                        raise Stopped
                    done = len(result.series) - 1 + batches.index(b) / len(batches)
                    progress(done / len(KINDS), f"{series.model}: batch {b} at depth {depth:,}")
                    point = _time_batch(models, preset, env, b, depth, series, should_stop, bandwidth)
                    series.points.append(point)
            finally:
                models.close()
    except Stopped:
        result.stopped = True
    return result


class _Models:
    """One series' model for each batch: the released pair's built once (its weights are the bulk; only
    the batch changes between runs), the synthetic pair's built anew per batch, as it always was."""

    def __init__(self, kind: str, pair: str, preset: Preset, env: BenchEnv) -> None:
        self.kind, self.preset, self.env = kind, preset, env
        self.model: PairDecoder | None = None
        self.planned = pair_shapes.planned(kind, pair_scale(preset)) if pair == "released" else None

    @property
    def vocab(self) -> int:
        return self.preset.vocab if self.planned is None else self.planned.spec.vocab

    def series(self, free: int, depth: int) -> BatchSeries:
        """The series before timing: its sizes, the largest batch that fits — and the planner's figure."""
        env, preset, e = self.env, self.preset, torch.finfo(self.env.dtype).bits // 8
        room = steps_room(preset, depth)
        if self.planned is None:
            weights = BatchedDecoder(self.kind, preset, 1, "meta", env.dtype).weight_bytes()
            per_seq = per_sequence_bytes(self.kind, preset, room, e)
            return BatchSeries(
                self.kind, KINDS[self.kind], depth, weights, per_seq, max_batch(free, weights, per_seq)
            )
        spec = self.planned.spec
        released = pair_shapes.planned_released(spec.key).spec
        weights = PairDecoder(self.planned, 1, "meta", env.dtype).weight_bytes()
        per_seq = pair_shapes.per_sequence_bytes(self.planned, room, e)
        return BatchSeries(
            self.kind, PAIR_WORDS[self.kind], depth, weights, per_seq, max_batch(free, weights, per_seq),
            planner_max_batch=pair_shapes.planner_max_batch(self.planned, free, depth, e),
            layers=spec.num_layers, released_layers=released.num_layers, vocab=spec.vocab,
            released_vocab=released.vocab, width=spec.hidden, released_width=released.hidden,
        )  # fmt: skip

    def for_batch(self, batch: int) -> BatchedDecoder | PairDecoder:
        if self.planned is None:
            return BatchedDecoder(self.kind, self.preset, batch, self.env.device, self.env.dtype)
        if self.model is None:
            self.model = PairDecoder(self.planned, batch, self.env.device, self.env.dtype)
        self.model.batch = batch
        return self.model

    def close(self) -> None:
        """Let the weights go before the next series is built."""
        self.model = None
        self.env.free_memory()


def _time_batch(
    models: _Models,
    preset: Preset,
    env: BenchEnv,
    batch: int,
    depth: int,
    series: BatchSeries,
    should_stop: ShouldStop,
    bandwidth: Bandwidth | None = None,
) -> BatchPoint:
    """One batch at `depth`: tokens/s per sequence and in total, its operations per step and (with a
    bandwidth) its roofline — or why it was not run."""
    if batch > series.max_batch:
        return BatchPoint(
            batch, False, note=f"does not fit: room for {series.max_batch} sequences at this depth"
        )
    model = None
    gen = torch.Generator().manual_seed(batch)
    tokens = torch.randint(0, models.vocab, (64, batch), generator=gen).to(env.device)  # (steps, B)
    try:
        model = models.for_batch(batch)
        measured = time_at_depth(model, series.kind, preset, env, tokens, depth, should_stop)
        best = measured.best
        counted, how = kernels_at_depth(model, depth, best, tokens, env)  # untimed, once a batch
        moved = model.traffic(depth).total
        roofline = (
            None if bandwidth is None else bandwidth_bound_tokens_per_s(moved, bandwidth.for_reading(moved))
        )
        return BatchPoint(batch, True, best.mean, best.mean * batch, best.method, moved,
                          batch * series.per_sequence_bytes, predicted_tokens_per_s_per_sequence=roofline,
                          kernels_per_step=counted, kernels_counted=how)  # fmt: skip
    except Stopped:
        raise
    except Exception as error:  # out of memory is a finding at this batch; anything else is raised
        return BatchPoint(batch, False, note=oom_message(error))
    finally:
        if model is not None:
            model.release()
        del model
        env.free_memory()
