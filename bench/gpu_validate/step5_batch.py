"""Check 7, run fifth (after 4) — batch: decode at batch 1, 4, 16, 64 at depth 16K, the released pair —
Qwen3-8B's shapes (dense, grouped-query attention) against Qwen3.5-9B's (a 3:1 Gated DeltaNet hybrid),
built on the device from their configs with random weights (nothing downloaded; the dry run builds
the tiny preset's miniatures) — tokens/s per sequence and in total, and the largest batch that fits the
card beside the planner's figure for the same shapes (core.gpu.suites.batch_bench)."""

from __future__ import annotations

import dataclasses
from typing import Any

from bench.gpu_validate.runner import Expectations, Validator
from bench.gpu_validate.verdicts import ratio
from core.gpu.presets import PRESETS
from core.gpu.suites import batch_bench

CHECK, NAME = "7", "7 batch"
PLANNER_AGREES = (
    0.9,
    1.1,
)  # this sweep's largest batch ÷ the planner's: the same bytes per sequence, its reserve aside


def run(v: Validator) -> tuple[dict[str, Any], Expectations]:
    """Decode at batch 1, 4, 16, 64 at one depth (16K): the released pair as the validate size's preset
    builds it (PyTorch ops, the established ways), tokens/s per sequence and in total, and the largest
    batch that fits — ours and the planner's."""
    preset = dataclasses.replace(PRESETS[v.s.preset], depth_seconds=v.s.batch_seconds)
    result = batch_bench.run_batch(
        preset, v.env, batch_bench.BATCHES, v.s.batch_depth, v.should_stop, pair="released"
    )
    data = v.partial = result.to_dict()
    dense, hybrid = result.series
    att, st = ({p.batch: p for p in x.points if p.fits} for x in result.series)
    both = max(set(att) & set(st), default=None)
    total = lambda points, b: points[b].tokens_per_s_total if b in points else None  # noqa: E731
    e = v.e
    return data, [
        e(f"largest batch that fits at depth {v.s.batch_depth:,}, hybrid ÷ dense (Qwen3.5-9B ÷ Qwen3-8B shapes)",
          ratio(hybrid.max_batch, dense.max_batch), 3, None, "×"),
        e("largest batch that fits, this sweep ÷ the planner's, dense", ratio(dense.max_batch, dense.planner_max_batch),
          *PLANNER_AGREES, "×", needs_cuda=False),
        e("largest batch that fits, this sweep ÷ the planner's, hybrid",
          ratio(hybrid.max_batch, hybrid.planner_max_batch), *PLANNER_AGREES, "×", needs_cuda=False),
        e("hybrid, batch 64 ÷ batch 1, tokens/s in all", ratio(total(st, 64), total(st, 1)), 4, None, "×"),
        e(f"hybrid ÷ dense, tokens/s in all at batch {both}", ratio(total(st, both), total(att, both)), 1.3, None, "×"),
        e("dense, largest batch run ÷ batch 1, tokens/s in all", ratio(total(att, max(att, default=None)), total(att, 1)), unit="×"),
    ]  # fmt: skip
