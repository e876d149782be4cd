"""The latency floor of one decode step: kernels one after another, and tensor parallelism's all-reduces.

A step is a chain of kernels, each waiting for the one before it; however few bytes a kernel reads, it
takes some time to start and finish. So besides the bandwidth ceiling (bytes ÷ bandwidth, `decode.py`)
a step has a floor that does not shrink with the bytes:

    floor = (layers' kernels + the ends' kernels) × KERNEL_FLOOR_S + 2 × layers × all_reduce_s(GPUs)

and a batch-1 speed is the slower of the two ceilings (`decode.DecodeStep.bound` says which binds).

Both latencies are the planner's stated assumptions, shown on the page and in the CLI's assumptions:

- KERNEL_FLOOR_S = 3 µs: one small kernel back to back with the next inside a CUDA graph (launch,
  ramp-up, the previous kernel's tail) — a stated round figure, not a measurement. This project's own
  H200 replayed a 568-kernel step as one CUDA graph in 2.96 ms, 5.2 µs a kernel with its work
  (docs/gpu-runs/2026-11-30-nvidia-h200/after-moe-bmm/validate.json, check 1, "attention/moe/d1024").
- Kernels per layer (`KERNELS`), as a serving engine with fused norms runs a layer: 2 fused residual-add
  + RMSNorm; attention 4 (QKV projection, rotary + cache write, attention, output projection); a fixed-
  state mixer 5 (input projections, short convolution, recurrent update, gated norm, output projection);
  a dense MLP 3 (gate-up GEMM, activation, down GEMM); routed experts 5 (router GEMM, top-k, token
  sort, two grouped GEMMs) + 3 per shared expert; the ends 4 (embedding, final norm, head, sampling).
- One all-reduce of a token's hidden vector over NVLink: NCCL's own latency model for a ring all-reduce
  with the low-latency protocol, 6.6 µs + 2(g − 1) × 0.6 µs (ncclTopoTuneModel's baseLat and NVLink
  hwLat, NCCL src/graph/tuning.cc, as quoted in NVIDIA/nccl issue #1334): 15.0 µs on 8 GPUs. Megatron-
  LM's tensor parallelism needs two per layer (Shoeybi et al. 2019, §3: after attention and after the
  MLP). Their bytes (a few kB a token) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.plan.config import PlannedModel

KERNEL_FLOOR_S = 3e-6
ALL_REDUCE_BASE_S = 6.6e-6  # NCCL tuning.cc baseLat, Ring / LL
ALL_REDUCE_HOP_S = 0.6e-6  # NCCL tuning.cc hwLat, NVLink, Ring / LL, per step of the ring
ALL_REDUCES_PER_LAYER = 2  # Megatron-LM: after attention and after the MLP

KERNELS = {
    "norms": 2,  # fused residual-add + RMSNorm, before the mixer and before the MLP
    "attention": 4,  # QKV projection, rotary + cache write, attention, output projection
    "fixed_state": 5,  # input projections, short convolution, recurrent update, gated norm, output projection
    "dense_mlp": 3,  # gate-up GEMM, activation, down GEMM
    "routed_experts": 5,  # router GEMM, top-k, token sort, two grouped GEMMs (activation fused)
    "shared_expert": 3,  # each always-on expert: a dense MLP
    "ends": 4,  # embedding lookup, final norm, output head, sampling
}


def all_reduce_s(gpus: int) -> float:
    """One all-reduce of a token's hidden vector over `gpus` GPUs (0 on one GPU): NCCL's ring latency model."""
    return 0.0 if gpus < 2 else ALL_REDUCE_BASE_S + 2 * (gpus - 1) * ALL_REDUCE_HOP_S


def layer_kernels(model: PlannedModel, layer: int, kind: str) -> int:
    """Kernels one layer runs per decode step (`KERNELS`): its norms, its mixer and its MLP."""
    spec = model.spec
    fixed = spec.linear is not None and kind == spec.linear.kind
    n = KERNELS["norms"] + KERNELS["fixed_state" if fixed else "attention"]
    if spec.moe is None or layer < spec.first_k_dense:
        return n + KERNELS["dense_mlp"]
    return n + KERNELS["routed_experts"] + spec.moe.shared * KERNELS["shared_expert"]


@dataclass(frozen=True)
class LatencyFloor:
    """The shortest a decode step can take whatever its bytes: its kernels and its all-reduces."""

    kernels: int  # per step, every layer and the ends
    all_reduces: int  # per step (0 on one GPU)
    all_reduce_s: float  # one all-reduce

    @property
    def kernel_seconds(self) -> float:
        return self.kernels * KERNEL_FLOOR_S

    @property
    def all_reduce_seconds(self) -> float:
        return self.all_reduces * self.all_reduce_s

    @property
    def seconds(self) -> float:
        return self.kernel_seconds + self.all_reduce_seconds


def latency_floor(model: PlannedModel, gpus: int = 1) -> LatencyFloor:
    """The floor of one decode step on a tensor-parallel group of `gpus` (the module docstring's sum)."""
    kinds = model.spec.layer_kinds()
    kernels = KERNELS["ends"] + sum(layer_kernels(model, i, kind) for i, kind in enumerate(kinds))
    reduces = ALL_REDUCES_PER_LAYER * len(kinds) if gpus > 1 else 0
    return LatencyFloor(kernels, reduces, all_reduce_s(gpus))
