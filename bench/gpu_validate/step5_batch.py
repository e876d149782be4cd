"""Check 7, run fifth (after 4) — batch: decode at batch 1, 4, 16, 64 at depth 16K, full attention and
the fixed state — tokens/s per sequence and in total, and the largest batch that fits the card
(core.gpu.suites.batch_bench)."""

from __future__ import annotations

import dataclasses
from typing import Any

from bench.gpu_validate.runner import Expectations, Validator
from bench.gpu_validate.verdicts import ratio
from core.gpu.presets import PRESETS
from core.gpu.suites import batch_bench

CHECK, NAME = "7", "7 batch"


def run(v: Validator) -> tuple[dict[str, Any], Expectations]:
    """Decode at batch 1, 4, 16, 64 at one depth (16K): full attention and the fixed state (PyTorch
    ops, the established ways), tokens/s per sequence and in total, and the largest batch that fits."""
    preset = dataclasses.replace(PRESETS[v.s.preset], depth_seconds=v.s.batch_seconds)
    result = batch_bench.run_batch(preset, v.env, batch_bench.BATCHES, v.s.batch_depth, v.should_stop)
    data = v.partial = result.to_dict()
    att, st = ({p.batch: p for p in x.points if p.fits} for x in result.series)
    both = max(set(att) & set(st), default=None)
    total = lambda points, b: points[b].tokens_per_s_total if b in points else None  # noqa: E731
    e = v.e
    return data, [
        e(f"largest batch that fits at depth {v.s.batch_depth:,}, fixed state ÷ full attention",
          ratio(result.series[1].max_batch, result.series[0].max_batch), 10, None, "×", needs_cuda=False),
        e("fixed state, batch 64 ÷ batch 1, tokens/s in all", ratio(total(st, 64), total(st, 1)), 4, None, "×"),
        e(f"fixed state ÷ full attention, tokens/s in all at batch {both}", ratio(total(st, both), total(att, both)), 1.5, None, "×"),
        e("full attention, largest batch run ÷ batch 1, tokens/s in all", ratio(total(att, max(att, default=None)), total(att, 1)), unit="×"),
    ]  # fmt: skip
