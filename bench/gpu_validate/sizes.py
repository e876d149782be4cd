"""How big each check runs: on a real GPU (`GPU`), or in the CPU dry run (`DRY`)."""

from __future__ import annotations

import dataclasses

from core.gpu.presets import GIB, MIB


@dataclasses.dataclass(frozen=True, kw_only=True)
class Sizes:
    """How big each check runs: a real GPU, or the CPU dry run."""

    preset: str
    deep: int  # the deep depth of checks 1 and 6
    copy_big: int
    gemv: tuple[int, int]
    h2d: int
    spill_budget: int | None  # None: computed to spill half the depth (dry run)
    spill_depth: int
    burst_s: float
    after_s: float
    rests_s: tuple[float, ...]  # idle power read after each of these rests (a settled card reads the same)
    idle_s: float
    window_s: float
    batch_depth: int  # check 7's depth
    batch_seconds: float  # check 7's time cap per batch
    bench_args: tuple[str, ...]


GPU = Sizes(
    preset="large",
    deep=65536,
    copy_big=2 * GIB,
    gemv=(8192, 8192),
    h2d=1 * GIB,
    spill_budget=16 * GIB,
    spill_depth=65536,
    burst_s=3.0,
    after_s=2.0,
    rests_s=(5.0, 15.0),
    idle_s=3.0,
    window_s=8.0,
    batch_depth=16384,
    batch_seconds=4.0,
    bench_args=(
        "--preset",
        "large",
        "--vram-budget-gb",
        "16",
        "--depth-seconds",
        "10",
        "--moe-sized-by-card",
        "--moe-shape",
        "fine",  # check 1 times DeepSeek-V3's experts; this one Qwen3.5-MoE's fine-grained ones
        "--retime-dense",
    ),
)
DRY = Sizes(
    preset="tiny",
    deep=1024,
    copy_big=16 * MIB,
    gemv=(256, 256),
    h2d=0,
    spill_budget=None,
    spill_depth=1024,
    burst_s=0.1,
    after_s=0.1,
    rests_s=(0.1, 0.3),
    idle_s=0.1,
    window_s=0.2,
    batch_depth=256,
    batch_seconds=1.0,
    bench_args=(
        "--preset",
        "tiny",
        "--device",
        "cpu",
        "--vram-budget-gb",
        "0.001",
        "--threads",
        "1",
        "--retime-dense",
    ),
)
