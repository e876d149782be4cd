"""Load test: N simulated readers step lessons on one server (or K behind nginx) over loopback.

    .venv/bin/python -m bench.load                                  # KV cache and Kimi K3, N = 1 4 8 16 32
    .venv/bin/python -m bench.load --lesson kv_cache --readers 16 --seconds 60
    .venv/bin/python -m bench.load --readers 32 --interval 0        # closed loop: how many steps/s it holds
    .venv/bin/python -m bench.load --unique-settings --readers 4 --seconds 300   # memory under new settings
    .venv/bin/python -m bench.load --url http://127.0.0.1:8080 --pid $(deploy/classroom.sh pids)

Each simulated reader is a websocket session speaking Streamlit's own protocol
(`bench/load/protocol.py`, `bench/load/reader.py`): it opens the lesson, moves a setting (lesson
2: the sampling sliders; Kimi K3: the text), then clicks Step once per `--interval` seconds for
`--seconds`, pressing Reset at the end of the run. One real Chromium reader runs alongside
(`bench/load/chromium.py`; `--no-chromium` to skip). Without `--url` the script starts its own
server on a free port and stops it at the end.

Printed per N: step latency p50/p95/max (click → `script_finished`, wall clock), steps/s, the
server's CPU per step (utime + stime from /proc, all steps of the window, the Chromium reader's
included — the number that does not depend on how busy the machine is), the cores the server
processes used (their CPU seconds per second: on a shared machine, what they got), kB per step,
RSS, errors (exception elements, error boxes, timeouts, lost connections) and the cross-talk
check (each reader's counter moved exactly by its own clicks; its text equals the offline run of
its own setting). Page-not-found dialogs are counted apart.

`--unique-settings`: readers move the setting to values nobody asked for before, then step twice,
over and over; RSS is printed every `--sample-every` seconds, to see that memory levels off
(every cache keyed by reader input is bounded).

Targets (issue 11, one process on 2 cores): 16 readers stepping once a second with p95 <= 1 s,
zero errors and zero cross-talk; RSS <= 1 GB at 32 readers; memory levels off in a unique sweep.
This prints figures (and `--json` writes them); it never fails on a missed target.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.load.chromium import chromium_path, chromium_reader
from bench.load.lessons import LESSONS, LessonDrive
from bench.load.reader import Reader, ReaderLog
from bench.load.server import Meter, course_server, lesson_list

ROOT = Path(__file__).resolve().parents[2]

MB = 1024 * 1024


@dataclass
class Level:
    """One row of the report: one lesson, N readers, one window."""

    lesson: str
    readers: int
    seconds: float
    steps: int = 0
    steps_per_s: float = 0.0
    p50_ms: float | None = None
    p95_ms: float | None = None
    max_ms: float | None = None
    cpu_ms_per_step: float | None = None
    server_cores: float | None = None  # server CPU seconds per second of the window: how busy it was
    kb_per_step: float | None = None
    rss_mb: float | None = None
    errors: list[str] = field(default_factory=list)
    crosstalk: list[str] = field(default_factory=list)
    checks: int = 0
    text_checks: int = 0
    page_not_found: int = 0
    load_p50_ms: float | None = None
    move_p50_ms: float | None = None
    chromium: dict | None = None
    rss_series: list[tuple[float, int, float]] = field(default_factory=list)  # (s, settings, MB)


class Window:
    """The measured stretch of time, opened once every reader is ready."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.start = self.end = 0.0

    def open(self, seconds: float) -> None:
        self.start = time.monotonic() + 0.2
        self.end = self.start + seconds
        self.opened.set()


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# -- one level: N readers stepping for a window --------------------------------------------------


async def open_readers(
    url: str, drive: LessonDrive, n: int, check_text: bool
) -> tuple[list[Reader], list[str]]:
    """N readers open the lesson at once (a class arriving); those that cannot are errors."""
    readers = [Reader(i, url, drive, check_text) for i in range(n)]
    results = await asyncio.gather(*(r.open() for r in readers), return_exceptions=True)
    pairs = list(zip(readers, results, strict=True))
    errors = [f"reader {r.index} could not open the page: {_say(e)}" for r, e in pairs if e]
    return [r for r, e in pairs if not e], errors


async def stepping(reader: Reader, window: Window, interval: float, phase: float) -> None:
    """Click Step once per interval (at once when a step took longer) until the window closes."""
    next_click = window.start + phase
    try:
        while next_click < window.end:
            await asyncio.sleep(max(0.0, next_click - time.monotonic()))
            await reader.click(in_window=True)
            next_click = max(next_click + interval, time.monotonic())
    except Exception as error:
        reader.log.errors.append(f"reader {reader.index} stopped: {_say(error)}")


async def one_level(url: str, drive: LessonDrive, n: int, args, meter: Meter) -> Level:
    level = Level(drive.slug, n, args.seconds)
    window, ready = Window(), asyncio.Event()
    browser = None
    if args.chromium:
        browser = asyncio.create_task(chromium_reader(url, drive, window, args.interval, ready))
    readers, level.errors = await open_readers(url, drive, n, check_text=True)
    for r in readers:  # spread the class over the shared settings (the first is the page's default)
        setting = drive.shared[r.index % len(drive.shared)]
        if setting != drive.default:
            with contextlib.suppress(Exception):
                await r.move(setting)
    if browser is not None:
        await asyncio.wait([browser, asyncio.create_task(ready.wait())], return_when=asyncio.FIRST_COMPLETED)
    window.open(args.seconds)
    await asyncio.sleep(max(0.0, window.start - time.monotonic()))
    cpu0 = meter.cpu()
    await asyncio.gather(*(stepping(r, window, args.interval, args.interval * r.index / n) for r in readers))
    browser_log = await browser if browser is not None else None
    return await _finish(level, readers, browser_log, window, cpu0, meter)


async def _finish(level: Level, readers, browser_log: ReaderLog | None, window, cpu0, meter) -> Level:
    """The window is over: its length and CPU time, readers closed, the level's figures filled in."""
    elapsed = time.monotonic() - window.start
    cpu1 = meter.cpu()
    for r in readers:
        await r.close()
    _fill(level, [r.log for r in readers], browser_log, elapsed, cpu0, cpu1, meter)
    return level


def _fill(level: Level, logs: list[ReaderLog], browser: ReaderLog | None, elapsed, cpu0, cpu1, meter) -> None:
    steps = [s for log in logs for s in log.step_s]
    all_steps = len(steps) + (len(browser.step_s) if browser else 0)
    level.steps = len(steps)
    level.steps_per_s = all_steps / elapsed if elapsed > 0 else 0.0
    level.p50_ms, level.p95_ms, level.max_ms = (
        None if not steps else v * 1000 for v in (percentile(steps, 0.5), percentile(steps, 0.95), max(steps))
    )
    if cpu0 is not None and all_steps:
        level.cpu_ms_per_step = (cpu1 - cpu0) * 1000 / all_steps
    if cpu0 is not None and elapsed > 0:
        level.server_cores = (cpu1 - cpu0) / elapsed
    if steps:
        level.kb_per_step = sum(log.step_bytes for log in logs) / len(steps) / 1000
    rss = meter.rss()
    level.rss_mb = sum(rss) / MB if rss else None
    for log in logs + ([browser] if browser else []):
        level.errors += log.errors
        level.crosstalk += log.crosstalk
        level.checks += log.checks
        level.text_checks += log.text_checks
        level.page_not_found += log.page_not_found
    loads = [log.load_s for log in logs if log.load_s is not None]
    moves = [m for log in logs for m in log.move_s]
    level.load_p50_ms = percentile(loads, 0.5) * 1000 if loads else None
    level.move_p50_ms = percentile(moves, 0.5) * 1000 if moves else None
    if browser:
        level.chromium = {
            "steps": len(browser.step_s),
            "p50_ms": (percentile(browser.step_s, 0.5) or 0) * 1000,
            "p95_ms": (percentile(browser.step_s, 0.95) or 0) * 1000,
            "load_ms": (browser.load_s or 0) * 1000,
            "checks": browser.checks,
            "errors": len(browser.errors),
            "crosstalk": len(browser.crosstalk),
        }


# -- the unique-settings sweep ---------------------------------------------------------------------


async def unique_sweep(url: str, drive: LessonDrive, n: int, args, meter: Meter) -> Level:
    """Readers keep moving to never-seen settings; RSS over time shows whether memory levels off."""
    level = Level(drive.slug, n, args.seconds)
    readers, level.errors = await open_readers(url, drive, n, check_text=False)
    fresh = itertools.count()
    window = Window()
    window.open(args.seconds)
    cpu0 = meter.cpu()

    async def reader_loop(r: Reader) -> None:
        try:
            while time.monotonic() < window.end:
                await r.move(drive.unique(next(fresh)))
                for _ in range(2):
                    await r.click(in_window=True)
        except Exception as error:
            r.log.errors.append(f"reader {r.index} stopped: {_say(error)}")

    async def sample() -> None:
        while time.monotonic() < window.end:
            rss = meter.rss()
            if rss:
                point = (
                    round(time.monotonic() - window.start, 1),
                    sum(len(r.log.move_s) for r in readers),
                    sum(rss) / MB,
                )
                level.rss_series.append(point)
                print(f"  {point[0]:7.1f} s  {point[1]:5d} new settings  RSS {point[2]:7.1f} MB", flush=True)
            await asyncio.sleep(args.sample_every)

    sampler = asyncio.create_task(sample())
    await asyncio.gather(*(reader_loop(r) for r in readers))
    sampler.cancel()
    return await _finish(level, readers, None, window, cpu0, meter)


def levels_off(series: list[tuple[float, int, float]], flat_mb_per_100: float = 10.0) -> str:
    """RSS growth over the last third of the sweep, per 100 new settings: flat below `flat_mb_per_100`."""
    if len(series) < 6:
        return "too few samples to tell"
    last = series[len(series) - len(series) // 3 - 1 :]
    grew = last[-1][2] - min(p[2] for p in last[:2])
    settings = last[-1][1] - last[0][1]
    if settings <= 0:
        return "no new settings in the last third"
    rate = grew * 100 / settings
    verdict = "levels off" if rate <= flat_mb_per_100 else "still growing"
    return (
        f"{verdict}: {series[0][2]:.0f} → {series[-1][2]:.0f} MB over {series[-1][1]} new settings; "
        f"last third {grew:+.0f} MB over {settings} settings ({rate:.0f} MB per 100)"
    )


# -- warm-up, report, main -------------------------------------------------------------------------


async def warm_up(url: str, drive: LessonDrive, settings, processes: int) -> None:
    """One reader per server process (nginx hands new readers out in turn) loads the lesson and
    visits the shared settings, so no window pays for a process's first run."""

    async def one(index: int) -> None:
        reader = Reader(-1 - index, url, drive, check_text=False)
        await reader.open()
        for setting in settings:
            await reader.move(setting)
        await reader.click(in_window=False)
        await reader.close()

    await asyncio.gather(*(one(i) for i in range(max(1, processes))))


HEADER = (
    f"{'lesson':<9} {'N':>3} {'steps':>6} {'steps/s':>8} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} "
    f"{'CPU ms/step':>11} {'cores':>5} {'kB/step':>8} {'RSS MB':>7} {'errors':>6} {'x-talk':>6} {'checks':>6} "
    f"{'not found':>9}"
)


def row(lv: Level) -> str:
    return (
        f"{lv.lesson:<9} {lv.readers:>3} {lv.steps:>6} {lv.steps_per_s:>8.2f} {_n(lv.p50_ms)} {_n(lv.p95_ms)} "
        f"{_n(lv.max_ms)} {_n(lv.cpu_ms_per_step, 11)} {_n(lv.server_cores, 5, 2)} {_n(lv.kb_per_step, 8)} "
        f"{_n(lv.rss_mb)} "
        f"{len(lv.errors):>6} {len(lv.crosstalk):>6} {lv.checks:>6} {lv.page_not_found:>9}"
    )


def report(levels: list[Level]) -> None:
    """The table again, then per level: the Chromium reader, page loads, the first problems seen."""
    print("\n" + HEADER)
    for lv in levels:
        print(row(lv))
    for lv in levels:
        if lv.chromium:
            c = lv.chromium
            print(
                f"  chromium beside {lv.lesson} N={lv.readers}: {c['steps']} steps, p50 {c['p50_ms']:.0f} ms, "
                f"p95 {c['p95_ms']:.0f} ms, page load {c['load_ms']:.0f} ms, {c['checks']} checks, "
                f"{c['errors']} errors, {c['crosstalk']} cross-talk"
            )
        if lv.rss_series:
            print(f"  {lv.lesson} unique settings: {levels_off(lv.rss_series)}")
        if lv.load_p50_ms is not None:
            moved = f", setting moved p50 {lv.move_p50_ms:.0f} ms" if lv.move_p50_ms is not None else ""
            print(f"  {lv.lesson} N={lv.readers}: page load p50 {lv.load_p50_ms:.0f} ms{moved}")
        for line in sorted(set(lv.errors + lv.crosstalk))[:5]:
            print(f"  ! {line}")


def _n(value: float | None, width: int = 7, digits: int = 0) -> str:
    return f"{'—':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def _say(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error)[:200]}"


@contextlib.contextmanager
def target(args):
    """(url, server pids): the --url given, or a fresh server of our own, stopped after."""
    if args.url:
        yield args.url.rstrip("/"), args.pid
        return
    with course_server(ROOT / "artifacts" / "load-server.log") as (url, pid):
        yield url, [pid]


async def run(args) -> list[Level]:
    levels = []
    with target(args) as (url, pids):
        meter = Meter(pids)
        print(
            f"server {url}"
            + (f", pids {' '.join(map(str, pids))}" if pids else ", CPU and RSS unknown (no --pid)")
        )
        for slug in args.lesson:
            drive = LESSONS[slug]
            for setting in drive.shared:  # the offline runs the cross-talk check compares with
                drive.text(setting)
            await warm_up(url, drive, drive.shared[1:] if not args.unique_settings else (), len(pids))
            sizes = args.readers if not args.unique_settings else args.readers[:1]
            for n in sizes:
                print(f"{slug}: {n} readers for {args.seconds:.0f} s …", flush=True)
                sweep = unique_sweep if args.unique_settings else one_level
                levels.append(await sweep(url, drive, n, args, meter))
                print(f"{HEADER}\n{row(levels[-1])}", flush=True)
    report(levels)
    return levels


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--lesson",
        default="kv_cache,kimi_k3",
        help="lessons to drive, comma-separated: " + ", ".join(LESSONS),
    )
    p.add_argument(
        "--readers", default="1,4,8,16,32", help="reader counts, comma-separated (one window each)"
    )
    p.add_argument("--seconds", type=float, default=30.0, help="length of each measured window")
    p.add_argument(
        "--interval",
        type=float,
        default=1.0,
        help="seconds between a reader's clicks (0: click as soon as done)",
    )
    p.add_argument("--url", help="drive this server (or nginx) instead of starting one")
    p.add_argument(
        "--pid", type=int, nargs="*", default=[], help="with --url: the server processes, for CPU and RSS"
    )
    p.add_argument("--no-chromium", dest="chromium", action="store_false", help="no real browser alongside")
    p.add_argument(
        "--unique-settings", action="store_true", help="move settings to never-seen values; print RSS"
    )
    p.add_argument(
        "--sample-every", type=float, default=5.0, help="seconds between RSS samples (--unique-settings)"
    )
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    args.lesson = lesson_list(p, args.lesson, LESSONS)
    try:
        args.readers = [int(n) for n in args.readers.split(",")]
    except ValueError:
        p.error("--readers takes whole numbers, comma-separated")
    if any(n < 1 for n in args.readers) or args.seconds <= 0 or args.interval < 0:
        p.error("readers >= 1, seconds > 0 and interval >= 0")
    if args.chromium and chromium_path() is None:
        print("no chromium on this machine: running without the real browser", file=sys.stderr)
        args.chromium = False
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    levels = asyncio.run(run(args))
    if args.json:
        args.json.write_text(json.dumps([asdict(lv) for lv in levels], indent=1))


if __name__ == "__main__":
    main()
