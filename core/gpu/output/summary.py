"""What `python -m core.gpu.bench` prints when a run ends: every part of a `SuiteResult`, read by field."""

from __future__ import annotations

from core.gpu.output.result import SuiteResult
from core.gpu.suites.checkpoint_bench import CheckpointResult
from core.gpu.timing.kernels import KernelFloors


def print_summary(result: SuiteResult) -> None:
    """The device and copy speed, each context sweep's points, dense vs MoE, the batch sweep, the time."""
    bw, dev = result.bandwidth, result.device
    print(f"device: {result.settings.device} | NVML: {dev.name or dev.reason}")
    if bw:
        print(
            f"copy bandwidth {bw.device_bytes_per_s / 1e9:.1f} GB/s, link {bw.link_bytes_per_s / 1e9:.1f} GB/s"
        )
        if bw.llc_bytes and bw.llc_bytes_per_s:
            print(
                f"cache copy {bw.llc_bytes_per_s / 1e9:.1f} GB/s in the {bw.llc_bytes / 2**20:,.0f} MiB "
                "last-level cache: the roofline of a step whose bytes fit in it"
            )
    for key, ctx in result.contexts():
        budget = ctx.budget_bytes
        print(f"\n{key}" + ("" if budget is None else f" (VRAM budget {budget / 1024**3:.2f} GiB)"))
        for s in ctx.series:
            for p in s.points:
                graphed = p.graphed_tokens_per_s
                print(
                    f"  {s.model:<15} d={p.depth:>7}  {p.tokens_per_s:9.1f} ± {p.std_tokens_per_s:6.1f} t/s"
                    f"  ({p.timing}; eager {p.eager_tokens_per_s:.1f}"
                    + ("" if graphed is None else f", graphed {graphed:.1f}")
                    + f")  roofline {p.predicted_tokens_per_s:10.1f}  ({p.percent_of_roofline:5.1f} %)"
                    + ("  spilled" if p.spilled_bytes else "")
                    + ("" if p.gpu_layers is None else f"  GPU layers: {p.gpu_layers}")
                    + ("  capped" if p.capped else "")
                    + floors_text(p)
                )
            if s.oom_depth is not None:
                print(f"  {s.model:<15} d={s.oom_depth:>7}  {s.oom_message or 'out of memory'}")
            if s.way_trials:
                print(f"  {'':<15} ran as {s.way} ({trials_line(s.way_trials)})")
    if result.moe is not None:
        moe = result.moe
        print(f"\ndense vs MoE at depth {moe.depth} ({moe.experts}), idle {moe.idle_watts} W")
        for r in moe.rows:
            print(
                f"  {r.model:<15} {r.tokens_per_s:9.1f} ± {r.std_tokens_per_s:6.1f} t/s ({r.timing})"
                f"  watts {r.avg_watts}  J/token (net) {r.net_joules_per_token}" + floors_text(r)
            )
            if r.way_trials:
                print(f"  {'':<15} experts read by {r.way} ({trials_line(r.way_trials)})")
        if moe.share_of_bytes_ratio is not None:
            shape = f"{moe.shape} experts: " if moe.shape else ""
            print(f"  {shape}MoE ÷ dense {moe.speed_ratio:.2f}× in speed, {moe.bytes_ratio:.2f}× in bytes per token: "
                  f"{moe.share_of_bytes_ratio:.0%} of the byte ratio")  # fmt: skip
    if result.batch is not None:
        batch = result.batch
        print(f"\nbatch at depth {batch.depth:,} ({batch.pair} pair)")
        for s in batch.series:
            planner = (
                "" if s.planner_max_batch is None else f"; the planner, same shapes: {s.planner_max_batch:,}"
            )
            print(f"  {s.model:<15} at most {s.max_batch:,} sequences fit "
                  f"({s.per_sequence_bytes / 2**20:,.1f} MiB each{planner})")  # fmt: skip
            if s.layers is not None:
                print(f"  {'':<15} {s.layers} of {s.released_layers} layers, {s.width} wide, vocabulary "
                      f"{s.vocab:,} of {s.released_vocab:,}")  # fmt: skip
            for p in s.points:
                if p.fits:
                    print(f"  {'':<15} B={p.batch:>3}  {p.tokens_per_s_per_sequence:9.1f} t/s a sequence, "
                          f"{p.tokens_per_s_total:10.1f} t/s in all ({p.timing})" + floors_text(p))  # fmt: skip
                else:
                    print(f"  {'':<15} B={p.batch:>3}  {p.note}")
    print(f"\n{result.seconds or 0.0:.1f} s" + ("  (stopped early)" if result.stopped else ""))


def floors_text(point: KernelFloors) -> str:
    """'  121 ops/step (aten ops (torch.profiler)): kernel floor 0.363 ms, bytes' floor 0.051 ms', or ''
    for a point whose operations were not counted."""
    if point.kernels_per_step is None:
        return ""
    nbytes = point.bytes_floor_s
    return (
        f"  {point.kernels_per_step:,.0f} ops/step ({point.kernels_counted}): kernel floor "
        f"{1000 * (point.kernel_floor_s or 0.0):.3f} ms"
        + ("" if nbytes is None else f", bytes' floor {1000 * nbytes:.3f} ms")
    )


def trials_line(trials: dict[str, float | str]) -> str:
    """'trials: gather 337.4 t/s, triton 905.2 t/s, grouped failed (why)'."""
    return "trials: " + ", ".join(
        f"{way} {v:.1f} t/s" if isinstance(v, float) else f"{way} failed ({v})" for way, v in trials.items()
    )


def print_checkpoint(r: CheckpointResult) -> None:
    """A checkpoint run: the model, its loader and cache, then speed against the roofline at each depth."""
    print(f"{r.name} ({r.family}, {r.params:,} parameters, {r.dtype}) on {r.device}")
    print(
        f"loader: {r.loader}; cache: {r.cache_kind}; copy bandwidth {r.bandwidth_bytes_per_s / 1e9:.1f} GB/s"
    )
    print(f"steps: {r.step_method}" + (f" ({r.graph_note})" if r.graph_note else ""))
    for p in r.points:
        print(
            f"  d={p.depth:>7}  {p.tokens_per_s:9.1f} ± {p.std_tokens_per_s:6.1f} t/s"
            f"  cache {p.cache_bytes / 1024**2:8.2f} MiB  bytes/token {p.bytes_per_token:,}"
            f"  roofline {p.predicted_tokens_per_s:10.1f}  ({p.percent_of_roofline:5.1f} %)"
            + ("  capped" if p.capped else "")
            + floors_text(p)
        )
    if r.oom_depth is not None:
        print(f"  d={r.oom_depth:>7}  {r.oom_message or 'out of memory'}")
    if r.stopped:
        print("(stopped early)")
