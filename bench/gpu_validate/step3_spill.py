"""Check 3, run third — spill: one depth under a 16 GiB budget — copies per step by direction,
host-blocking calls, device memory held vs the budget, pinned host memory before/after release,
speed vs the spill roofline."""

from __future__ import annotations

import dataclasses
from typing import Any

from bench.gpu_validate import probes
from bench.gpu_validate.runner import Expectations, Validator
from bench.gpu_validate.verdicts import pct, ratio
from core.gpu.decode import spill
from core.gpu.decode.kv_cache import pinned_host_bytes
from core.gpu.decode.models import build
from core.gpu.decode.traffic import trace_persistent_bytes
from core.gpu.presets import GIB, PRESETS
from core.gpu.suites.context_bench import plan_series, traffic_tokens_per_s
from core.gpu.timing.decode_timer import random_tokens, steps_room, time_at_depth

CHECK, NAME = "3", "3 spill"


def run(v: Validator) -> tuple[dict[str, Any], Expectations]:
    env, s = v.env, v.s
    preset = dataclasses.replace(PRESETS[s.preset], depths=(s.spill_depth,), depth_seconds=30.0)
    v.copy_bandwidth(preset.copy_bytes)
    tokens = random_tokens(preset, env.device)
    model = build("attention", preset, env.device, env.dtype)
    max_len = steps_room(preset, s.spill_depth)
    per_pos = model.memory_bytes(1)
    budget = s.spill_budget
    if budget is None:  # dry run: room for half the depth on the "device", plus the stage
        weights = model.total_params() * model.elem_bytes
        half = s.spill_depth // 2
        budget = weights + half * per_pos + (max_len - half) * (per_pos // preset.n_layers)
    try:
        plan = plan_series(model, "attention", preset, env, budget)
        if plan.refusal:
            raise RuntimeError(plan.refusal)
        pinned_before, free_before = pinned_host_bytes(), spill.host_available_bytes()
        model.allocate(max_len, plan.resident)
        held, pinned_alloc = env.held_bytes(), pinned_host_bytes()
        model.fill(s.spill_depth)
        model.step(tokens[:1])
        model.pos = s.spill_depth
        prof = probes.step_profile(lambda: model.step(tokens[:1]), env.device)
        model.pos = s.spill_depth
        traced, _ = trace_persistent_bytes(lambda: model.step(tokens[:1]), model.persistent_tensors())
        accounted = model.traffic(s.spill_depth).persistent
        contiguous = all(model.cache.host_rows(i, s.spill_depth - plan.resident).is_contiguous()
                         for i in range(preset.n_layers))  # fmt: skip
        measured = time_at_depth(
            model, "spill", preset, env, tokens, s.spill_depth, v.should_stop, allocate=False
        )
        traffic = model.traffic(s.spill_depth)
        roof = traffic_tokens_per_s(traffic, v.bw)
    finally:
        model.release()
        env.free_memory()
    pinned_after = pinned_host_bytes()
    best = measured.best.mean
    data = {
        "budget_bytes": budget, "depth": s.spill_depth, "resident_positions": plan.resident,
        "held_bytes": held, "copies_per_step": prof.copies, "host_blocking_calls": prof.blocking_calls,
        "kernels_per_step": prof.kernels, "pinned_before": pinned_before, "pinned_allocated": pinned_alloc,
        "pinned_after_release": pinned_after, "host_free_before": free_before,
        "host_free_after": spill.host_available_bytes(), "traced_bytes": traced, "accounted_bytes": accounted,
        "eager_tokens_per_s": measured.eager.mean,
        "graphed_tokens_per_s": None if measured.graphed is None else measured.graphed.mean,
        "graph_note": measured.graph_note, "spill_roofline_tokens_per_s": roof, "traffic": traffic.to_dict(),
    }  # fmt: skip
    layers = preset.n_layers
    leaked = None if pinned_after is None else (pinned_after - (pinned_before or 0)) / GIB
    e = v.e
    return data, [
        e("host→device copies per step (one per spilled layer)", prof.copies.get("HtoD"), layers, layers),
        e("device→host copies per step (the new rows)", prof.copies.get("DtoH"), layers, layers),
        e("host-blocking calls in a step", prof.syncs, 0, 0),
        e("device memory held ÷ budget", ratio(held, budget), 0.5, 1.0, "×"),
        e("pinned host memory left after release", leaked, None, 0.0625, " GiB"),
        e("measured % of the spill roofline", pct(best, roof), 30, 120, " %"),
        e("per-step host slices are contiguous", float(contiguous), 1, 1, needs_cuda=False),
        e("accounted ÷ traced bytes of a spilled step", ratio(accounted, traced), 1, 1, "×", needs_cuda=False),
    ]  # fmt: skip
