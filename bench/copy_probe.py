"""How steady the copy-speed probe of "Measure this machine" is: run it several times back to back.

    python -m bench.copy_probe                 # 5 runs of the probe as the page runs it
    python -m bench.copy_probe --old           # 5 runs of the probe before issue 42, for comparison
    python -m bench.copy_probe --both          # the two in turn, so both meet the same load
    python -m bench.copy_probe --runs 3 --repeats 7 --copy-mib 64

The probe (core.gpu.timing.bandwidth.measure_copy_bandwidth) copies a buffer sized from this machine
(≥ 4 × its last-level cache) `--repeats` times after a warm-up and reports the median; `--old` times the
probe the page used before — the best of 5 copies of the `cpu` preset's 64 MiB buffer. One torch thread by
default, as the app runs (app.py). Prints each run's main-memory and cache speeds (median and min–max of its
copies), then the lowest, median and highest of the runs' speeds: the spread a reader sees between two
clicks. Prints numbers only. The CPU may be shared.
"""

from __future__ import annotations

import math
import statistics
import time

import torch

from core.gpu.output.cli_io import Parser, positive_int
from core.gpu.presets import PRESETS
from core.gpu.timing import bandwidth, bench_env
from core.gpu.timing.cpu_cache import last_level_cache_bytes
from core.gpu.timing.spread import Spread, spread_of
from core.threads import threads

MIB = 1024**2
OLD_REPEATS = 5  # the probe before issue 42: best of 5, buffer as the preset asked


def old_probe(nbytes: int, repeats: int = OLD_REPEATS) -> tuple[float, float | None]:
    """The probe before issue 42, as it was written: (main memory, cache) bytes/s, each the best of `repeats`
    copies after one warm-up; the main buffer exactly `nbytes` (the cpu preset's 64 MiB: with its copy, four
    times a 32 MiB cache), the cache's a quarter of the cache, eight copies per timed run."""
    cache = last_level_cache_bytes()
    main = _best_copy_speed(nbytes, repeats)
    return main, None if cache is None else _best_copy_speed(max(4096, cache // 4), repeats, copies=8)


def _best_copy_speed(nbytes: int, repeats: int, copies: int = 1) -> float:
    src = torch.empty(nbytes, dtype=torch.uint8)
    dst = torch.empty_like(src)

    def run() -> None:
        for _ in range(copies):
            dst.copy_(src)

    run()  # warm-up
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return 2 * copies * nbytes / best


def _gbs(x: float) -> str:
    return f"{x / 1e9:6.1f}"


def _spread_text(s: Spread | None) -> str:
    return "" if s is None else f"{_gbs(s.median)} ({_gbs(s.low)}–{_gbs(s.high).strip()})"


def main(argv: list[str] | None = None) -> None:
    parser = Parser(prog="python -m bench.copy_probe", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=positive_int, default=5, help="probe runs back to back (default 5)")
    parser.add_argument(
        "--repeats", type=positive_int, default=bandwidth.REPEATS, help="timed copies per run (new probe)"
    )
    parser.add_argument(
        "--copy-mib", type=positive_int, default=PRESETS["cpu"].copy_bytes // MIB,
        help="the buffer the preset asks for, MiB (the new probe raises it to ≥ 4 × the cache)",
    )  # fmt: skip
    parser.add_argument(
        "--threads", type=positive_int, default=1, help="torch threads (default 1, as the app runs: app.py)"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--old", action="store_true", help="the probe before issue 42 (best of 5, buffer as asked)"
    )
    which.add_argument(
        "--both", action="store_true", help="old and new probe in turn, each run, so both meet the same load"
    )
    args = parser.parse_args(argv)
    probes = ("old", "new") if args.both else ("old",) if args.old else ("new",)
    with threads(args.threads):
        _runs(args, probes)


def _runs(args, probes: tuple[str, ...]) -> None:
    """Run each probe of `probes` `args.runs` times (in turn) and print each run, then each probe's spread."""
    requested = args.copy_mib * MIB
    env = bench_env.make_env("cpu")
    seen: dict[tuple[str, str], list[float]] = {}
    print(
        f"last-level cache: {last_level_cache_bytes()} bytes; requested buffer {args.copy_mib} MiB; "
        f"{torch.get_num_threads()} torch thread(s)"
    )
    print("run  probe  main memory GB/s (min–max)          cache GB/s (min–max)")
    for run in range(1, args.runs + 1):
        for probe in probes:
            if probe == "old":
                main, cache = old_probe(requested)
                shown = f"{_gbs(main)} (best of {OLD_REPEATS})              {'' if cache is None else _gbs(cache)}"
            else:
                bw = bandwidth.measure_copy_bandwidth(env, requested, args.repeats)
                main, cache = bw.device_bytes_per_s, bw.llc_bytes_per_s
                llc = spread_of(bw.llc_samples_bytes_per_s) if bw.llc_samples_bytes_per_s else None
                shown = f"{_spread_text(bw.spread())} [{bw.copy_bytes // MIB} MiB]   {_spread_text(llc)}"
            print(f"{run:>3}  {probe:<5}  {shown}", flush=True)
            seen.setdefault((probe, "main memory"), []).append(main)
            if cache is not None:
                seen.setdefault((probe, "cache"), []).append(cache)
    for (probe, name), values in seen.items():
        print(f"{probe} probe, {name} over {len(values)} runs: min {_gbs(min(values)).strip()}, median "
              f"{_gbs(statistics.median(values)).strip()}, max {_gbs(max(values)).strip()} GB/s "
              f"(max ÷ min {max(values) / min(values):.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
