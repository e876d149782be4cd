"""Check 5, run last (seventh) — end to end: `python -m core.gpu.bench --preset large --vram-budget-gb 16
--moe-sized-by-card --moe-shape fine --retime-dense` in its own process (the MoE with Qwen3.5-MoE's 6 MiB
experts, check 1's had DeepSeek-V3's), given what is left of the budget, without the newer ways check 6 did
not clear; what the lesson claims is read back from its JSON."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.gpu_validate import child_run
from bench.gpu_validate.runner import CHECK5_MARGIN_S, ROOT, STOP_GRACE_S, Expectations, Validator, child_env
from bench.gpu_validate.verdicts import ratio
from core.gpu.output.result import SuiteResult
from core.gpu.suites.moe_bench import MoeRow

CHECK, NAME = "5", "5 end to end"


def bench_command(v: Validator, out: Path) -> list[str]:
    """Check 5's benchmark, without the ways that failed in check 6."""
    skip = ["--skip-ways", ",".join(v.skip_ways)] if v.skip_ways else []
    return [sys.executable, "-m", "core.gpu.bench", *v.s.bench_args, *skip, "--out", str(out)]


def run(v: Validator) -> tuple[dict[str, Any], Expectations]:
    out = v.folder / "bench.json"
    limit = max(30.0, v.deadline - time.perf_counter() - CHECK5_MARGIN_S)
    cmd = bench_command(v, out)
    print(f"  {' '.join(cmd)}  (limit {limit:.0f} s)", flush=True)
    done = child_run.run_with_limit(cmd, limit, STOP_GRACE_S, v.should_stop, ROOT, child_env())
    result = SuiteResult.from_json(out.read_text()) if out.exists() else None
    complete = None if result is None else result.complete
    data = {"command": cmd, "exit_status": done.exit_status, "seconds": done.seconds, "timed_out": done.timed_out,
            "output_tail": done.output[-3000:], "complete": complete}  # fmt: skip
    return data, [
        v.e("bench exit status", done.exit_status, 0, 0, needs_cuda=False),
        v.e("bench wrote a complete JSON", float(bool(complete)), 1, 1, needs_cuda=False),
        *_claims(result, v.e),
    ]


def _field(row: MoeRow | None, name: str) -> float | None:
    return None if row is None else getattr(row, name)


def _claims(result: SuiteResult | None, e: Callable[..., dict[str, Any]]) -> Expectations:
    """What the lesson claims, read from the bench JSON: attention slows, the state holds, the spill falls off a cliff, MoE wins."""
    context, budget = (None, None) if result is None else (result.context, result.context_budget)
    series = {s.model: s.points for s in (context.series if context else [])}
    att, st = series.get("full attention", []), series.get("fixed state", [])
    resident_at = {p.depth: p.tokens_per_s for p in att}
    under_budget = budget.series[0].points if budget and budget.series else []
    spilled = [p for p in under_budget if p.spilled_bytes and p.depth in resident_at]
    moe_part = None if result is None else result.moe
    rows = moe_part.rows if moe_part else []
    dense, moe = ([*rows, None, None])[:2]
    again = moe_part.dense_again if moe_part else None
    return [
        e("full attention: deepest ÷ depth 0", ratio(att[-1].tokens_per_s, att[0].tokens_per_s) if len(att) > 1 else None, None, 0.9, "×"),
        e("fixed state: deepest ÷ depth 0", ratio(st[-1].tokens_per_s, st[0].tokens_per_s) if len(st) > 1 else None, 0.85, 1.15, "×"),
        e("spilled ÷ resident at the first spilled depth", ratio(spilled[0].tokens_per_s, resident_at[spilled[0].depth]) if spilled else None, None, 0.7, "×"),
        e("MoE ÷ dense tokens/s", ratio(_field(moe, "tokens_per_s"), _field(dense, "tokens_per_s")), 1.5, None, "×"),
        e("MoE ÷ dense speed, as a share of the byte ratio", None if moe_part is None else moe_part.share_of_bytes_ratio),
        e("MoE ÷ dense net J/token", ratio(_field(moe, "net_joules_per_token"), _field(dense, "net_joules_per_token")), None, 0.9, "×"),
        e("dense again after the MoE ÷ dense before it, tokens/s", ratio(_field(again, "tokens_per_s"), _field(dense, "tokens_per_s")), 0.95, 1.05, "×"),
        e("dense again after the MoE ÷ dense before it, average watts", ratio(_field(again, "avg_watts"), _field(dense, "avg_watts")), 0.9, 1.1, "×"),
    ]  # fmt: skip
