"""What a lesson costs the reader's browser: real headless Chromium, one reader, every lesson.

    .venv/bin/python -m bench.browser                          # every lesson, 6 Steps each
    .venv/bin/python -m bench.browser --lesson kv_cache,gpt2 --steps 10
    .venv/bin/python -m bench.browser --json /tmp/after.json --compare /tmp/before.json

Per lesson, on a warm server (a first reader opens the lesson and steps it first, so the
measured reader finds every cache filled):

- **load s**: navigation → the page interactive and drawn (connected, the script finished twice a
  beat apart, no placeholder left, then the browser's CPU quiet: under 5 ms in 250 ms), min/median
  over `--loads` fresh tabs;
- **load CPU s**: the Chromium processes' CPU time (utime + stime from /proc, the browser's own
  processes only: descendants of this script, not the server) over that load;
- **Step CPU ms**, **Step kB**, **server ms**, **Step wall ms**: per Step click, the browser's CPU
  until it is quiet again, the bytes it received (websocket frames and HTTP bodies, from the
  DevTools Network events), the server's CPU time (/proc) and click → new step shown; min and
  median over `--steps` clicks. Lessons without Step controls show "—";
- **charts redrawn**: plotly charts unmounted and drawn from scratch per Step (a changed figure
  gets a new element id in Streamlit 1.67, and the browser draws it anew; so does a chart whose
  place on the page moved) — what most of a Step's browser CPU goes to;
- **move server ms / move wall ms** (the GPT-2 and KV cache lessons): the temperature slider moved
  one notch to a value not asked for before, `--moves` times: the server's CPU and the wall time
  until the page has settled.

Measuring: Step is pressed from the keyboard (focus, Enter), not clicked. After Playwright's mouse
click, which scrolls the button into view first, headless Chromium at times keeps drawing empty
frames at 60 a second for seconds, with no script and no CSS animation running (a trace shows only
aborted main frames), and a Step measured until the browser is quiet counts that idle drawing too.
On 2026-12-02, hovering Step that way with no click at all cost 100-290 ms of CPU per 2 s against
0-50 ms after a keyboard press, and Step medians of unchanged code swung from 300 to 1,000 ms.
`--press mouse` measures the click anyway.

CPU times are the figures to compare on a shared machine; wall times are noisy there. The run is
bounded (`--budget` seconds in all, each wait has its own timeout); it starts its own server on a
port in 8700-8799 (or drives `--url`) and stops the server and every browser process by their PIDs.

Targets (issue 29, 2 cores): Step CPU <= 250 ms, load <= 4 s, Step kB <= 50, a slider move <= 1 s
of server time. This prints figures;
it never fails on a missed target.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.load.server import CHROMIUM_FLAGS, chromium_path, course_server, cpu_seconds, lesson_list

ROOT = Path(__file__).resolve().parents[1]

PORTS = range(8700, 8800)
TARGETS = {"step_cpu_ms": 250.0, "load_s": 4.0, "step_kb": 50.0, "move_server_ms": 1000.0}
QUIET_MS = 5.0  # the browser is quiet when 250 ms pass with less than this much CPU spent
QUIET_WINDOW_S, QUIET_LIMIT_S = 0.25, 6.0


# -- figures and the table (no browser needed: tests/bench/test_browser.py) ------------------------


@dataclass
class Spread:
    """min / median / max of a list of samples (None when there are none)."""

    n: int = 0
    min: float | None = None
    median: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, samples: list[float]) -> Spread:
        if not samples:
            return cls()
        return cls(len(samples), min(samples), statistics.median(samples), max(samples))


@dataclass
class LessonFigures:
    slug: str
    load_s: list[float] = field(default_factory=list)
    load_cpu_s: list[float] = field(default_factory=list)
    load_kb: list[float] = field(default_factory=list)
    step_cpu_ms: list[float] = field(default_factory=list)
    step_kb: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    step_wall_ms: list[float] = field(default_factory=list)
    redrawn: list[float] = field(default_factory=list)  # plotly charts drawn anew (not kept) per Step
    move_server_ms: list[float] = field(default_factory=list)  # a setting moved to a value never asked for
    move_wall_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def spread(self, name: str) -> Spread:
        return Spread.of(getattr(self, name))


COLUMNS = (  # (field, heading, digits)
    ("load_s", "load s", 1),
    ("load_cpu_s", "load CPU s", 1),
    ("load_kb", "load kB", 0),
    ("step_cpu_ms", "Step CPU ms", 0),
    ("step_kb", "Step kB", 1),
    ("server_ms", "server ms", 0),
    ("step_wall_ms", "Step wall ms", 0),
    ("redrawn", "charts redrawn", 0),
    ("move_server_ms", "move server ms", 0),
    ("move_wall_ms", "move wall ms", 0),
)
# lessons whose sampling sliders are moved (the temperature, one notch right per move: each a new
# setting on a fresh server, so the server computes its run)
MOVES = {"gpt2": "Temperature", "kv_cache": "Temperature"}


def cell(spread: Spread, digits: int) -> str:
    """ "min / median" of one measurement, or "—" when it was not taken."""
    if spread.n == 0:
        return "—"
    if spread.n == 1:
        return f"{spread.min:.{digits}f}"
    return f"{spread.min:.{digits}f} / {spread.median:.{digits}f}"


def table(rows: list[LessonFigures]) -> str:
    """One line per lesson, each cell "min / median" over its samples."""
    headings = ["lesson"] + [heading for _, heading, _ in COLUMNS] + ["errors"]
    body = [
        [r.slug] + [cell(r.spread(name), digits) for name, _, digits in COLUMNS] + [str(len(r.errors))]
        for r in rows
    ]
    return _aligned([headings, *body])


def comparison(before: list[LessonFigures], after: list[LessonFigures]) -> str:
    """The medians before → after, per lesson and measurement (lessons in the after run's order)."""
    old = {r.slug: r for r in before}
    chosen = ("load_s", "load_cpu_s", "step_cpu_ms", "step_kb", "server_ms", "move_server_ms")
    names = [name for name, _, _ in COLUMNS if name in chosen]
    headings = ["lesson"] + [heading for name, heading, _ in COLUMNS if name in chosen]
    digits = {name: d for name, _, d in COLUMNS}
    body = []
    for r in after:
        line = [r.slug]
        for name in names:
            was = old[r.slug].spread(name).median if r.slug in old else None
            now = r.spread(name).median
            line.append(f"{_num(was, digits[name])} → {_num(now, digits[name])}")
        body.append(line)
    return _aligned([headings, *body])


def misses(rows: list[LessonFigures]) -> list[str]:
    """The targets a lesson misses, by its median, in words."""
    out = []
    for r in rows:
        for name, limit in TARGETS.items():
            median = r.spread(name).median
            if median is not None and median > limit:
                out.append(f"{r.slug}: {name} median {median:.1f} > target {limit:g}")
    return out


def load_json(path: Path) -> list[LessonFigures]:
    return [LessonFigures(**row) for row in json.loads(path.read_text())]


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _aligned(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            text.ljust(w) if i == 0 else text.rjust(w)
            for i, (text, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    )


def ws_frame_bytes(response: dict) -> int:
    """Bytes of one websocket frame from a DevTools `webSocketFrameReceived` response: binary frames
    (opcode 2, Streamlit's protobufs) arrive base64-encoded, text frames as they are."""
    payload = response.get("payloadData", "")
    if response.get("opcode") == 2:
        return len(base64.b64decode(payload))
    return len(payload.encode())


# -- the browser's processes ----------------------------------------------------------------------


def _parents() -> dict[int, int]:
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                out[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    return out


def descendants(root: int, parents: dict[int, int]) -> set[int]:
    """Every process below `root` in the process tree `parents` (pid → parent pid)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def browser_pids(exclude: set[int]) -> set[int]:
    """This script's Chromium processes: its descendants but the server's tree and Playwright's driver."""
    parents = _parents()
    skip = set(exclude)
    for pid in exclude:
        skip |= descendants(pid, parents)
    pids = descendants(os.getpid(), parents) - skip
    return {pid for pid in pids if _comm(pid) not in {"node", "python", "python3"}}


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def browser_cpu(exclude: set[int]) -> float:
    total = 0.0
    for pid in browser_pids(exclude):
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += cpu_seconds(pid)
    return total


async def quiet_cpu(exclude: set[int]) -> tuple[float, float]:
    """(the browser's CPU seconds, time.perf_counter()) once it has stopped working: plotly draws
    after the script ends. The time is the start of the first quiet window."""
    deadline = time.monotonic() + QUIET_LIMIT_S
    last, at = browser_cpu(exclude), time.perf_counter()
    while time.monotonic() < deadline:
        await asyncio.sleep(QUIET_WINDOW_S)
        now = browser_cpu(exclude)
        if (now - last) * 1000 < QUIET_MS:
            return now, at
        last, at = now, time.perf_counter()
    return last, at


# -- one lesson in the browser ----------------------------------------------------------------------


class Traffic:
    """Bytes the page received, from DevTools Network events (websocket frames and HTTP bodies)."""

    def __init__(self) -> None:
        self.bytes = 0

    async def attach(self, page) -> None:
        cdp = await page.context.new_cdp_session(page)
        await cdp.send("Network.enable")
        cdp.on("Network.webSocketFrameReceived", lambda e: self._add(ws_frame_bytes(e["response"])))
        cdp.on("Network.loadingFinished", lambda e: self._add(int(e.get("encodedDataLength", 0))))

    def _add(self, n: int) -> None:
        self.bytes += n


async def open_page(browser, url: str, exclude: set[int], figures: LessonFigures | None):
    """A fresh tab on the lesson; with `figures`, the load is timed and measured."""
    from bench.load.chromium import _settled

    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    traffic = Traffic()
    await traffic.attach(page)
    cpu0, start = browser_cpu(exclude), time.perf_counter()
    await page.goto(url, timeout=180_000)
    await page.wait_for_selector(
        "[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=180_000
    )
    await _settled(page)
    await page.wait_for_selector("h1", timeout=60_000)
    cpu1, quiet_at = await quiet_cpu(exclude)
    if figures is not None:
        figures.load_s.append(quiet_at - start)
        figures.load_cpu_s.append(cpu1 - cpu0)
        figures.load_kb.append(traffic.bytes / 1000)
    return context, page, traffic


# Streamlit 1.67 keys a plotly chart's component by its element id, which hashes the figure: a chart
# whose figure changed is unmounted and drawn from scratch, and so is one whose place on the page
# moved. Counted per Step: the charts on the page before the click that are gone after it.
MARK_CHARTS = "() => { window.__courseCharts = [...document.querySelectorAll('.js-plotly-plot')]; }"
COUNT_REDRAWN = "() => (window.__courseCharts || []).filter(el => !el.isConnected).length"


async def step_once(page, t: int, total: int, press: str = "keyboard") -> int:
    """Press Step (Reset at the end) and wait until the status line shows the new step.

    `press` "keyboard" focuses the button and presses Enter, as a keyboard reader does; "mouse"
    clicks it (noisier: "Measuring" in the module's docstring)."""
    from bench.load.chromium import IDLE, SHOWS_STEP, _settled
    from bench.load.protocol import STEP_STATUS

    label = "Reset" if t >= total else "Step"
    button = page.locator("[data-testid='stButton'] button", has_text=label).first
    if press == "mouse":
        await button.click(timeout=60_000)
    else:
        await button.focus(timeout=60_000)
        await page.keyboard.press("Enter")
    t = 0 if t >= total else t + 1
    await page.wait_for_function(SHOWS_STEP, arg=[t, STEP_STATUS.pattern], timeout=60_000)
    await page.wait_for_selector(IDLE, timeout=120_000)
    await _settled(page)
    return t


async def step_position(page) -> tuple[int, int] | None:
    """(step shown, steps in the run) from the Step controls' status line; None on a page without them."""
    from bench.load.chromium import _position
    from bench.load.protocol import STEP_STATUS

    status = page.locator("[data-testid='stMarkdownContainer'] p", has_text=STEP_STATUS)
    if not await status.count():
        return None
    return await _position(page)


async def lesson_run(browser, url: str, slug: str, args, server_pid: int | None) -> LessonFigures:
    figures = LessonFigures(slug)
    exclude = {server_pid} if server_pid else set()
    # warm-up: a first reader fills the server's caches for the page and its steps
    context, page, _ = await open_page(browser, url, exclude, None)
    position = await step_position(page)
    for _ in range(args.steps if position else 0):
        position = (await step_once(page, *position, args.press), position[1])
    await context.close()
    for i in range(args.loads):
        context, page, traffic = await open_page(browser, url, exclude, figures)
        if i < args.loads - 1:
            await context.close()
    position = await step_position(page)
    if position is None:  # no Step controls on this page
        await context.close()
        return figures
    t, total = position
    for _ in range(args.steps):
        await page.evaluate(MARK_CHARTS)
        b0, c0, s0 = traffic.bytes, browser_cpu(exclude), _server_cpu(server_pid)
        start = time.perf_counter()
        t = await step_once(page, t, total, args.press)
        wall = time.perf_counter() - start
        c1, _ = await quiet_cpu(exclude)
        figures.redrawn.append(await page.evaluate(COUNT_REDRAWN))
        s1 = _server_cpu(server_pid)
        figures.step_cpu_ms.append((c1 - c0) * 1000)
        figures.step_kb.append((traffic.bytes - b0) / 1000)
        figures.step_wall_ms.append(wall * 1000)
        if s0 is not None and s1 is not None:
            figures.server_ms.append((s1 - s0) * 1000)
    if slug in MOVES:
        try:
            await moves(page, MOVES[slug], args.moves, server_pid, figures)
        except Exception as error:  # the Step figures stand; the moves are an error of their own
            figures.errors.append(f"moving {MOVES[slug]}: {type(error).__name__}: {str(error)[:200]}")
    await context.close()
    return figures


# set window.__courseRan once the app's script starts running (a quick run may end before a poll sees it)
SEES_A_RUN = """() => {
    window.__courseRan = false;
    const app = document.querySelector("[data-testid='stApp']");
    new MutationObserver(() => {
        if (app.dataset.testScriptState === 'running') window.__courseRan = true;
    }).observe(app, {attributes: true});
}"""


async def moves(page, label: str, n: int, server_pid: int | None, figures: LessonFigures) -> None:
    """Move the slider `label` one notch right `n` times (keyboard), timing the server's answer."""
    from bench.load.chromium import _settled

    await page.locator("[data-testid='stExpander'] summary", has_text="Generation settings").first.click()
    thumb = page.get_by_role("slider", name=label).first
    await thumb.wait_for(timeout=30_000)
    for _ in range(n):
        s0, start = _server_cpu(server_pid), time.perf_counter()
        await page.evaluate(SEES_A_RUN)
        await thumb.focus()
        await page.keyboard.press("ArrowRight")
        with contextlib.suppress(Exception):  # no run seen in 10 s: the settled page is timed anyway
            await page.wait_for_function("() => window.__courseRan === true", timeout=10_000)
        await _settled(page)
        s1 = _server_cpu(server_pid)
        figures.move_wall_ms.append((time.perf_counter() - start) * 1000)
        if s0 is not None and s1 is not None:
            figures.move_server_ms.append((s1 - s0) * 1000)


def _server_cpu(pid: int | None) -> float | None:
    return cpu_seconds(pid) if pid else None


# -- the run ----------------------------------------------------------------------------------------


def free_port_in(ports: range) -> int:
    for port in ports:
        with socket.socket() as s, contextlib.suppress(OSError):
            s.bind(("127.0.0.1", port))
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")


@contextlib.contextmanager
def target(args):
    """(url, server pid): the --url given (pid from --pid), or a server of our own, stopped after."""
    if args.url:
        yield args.url.rstrip("/"), args.pid
        return
    with course_server(ROOT / "artifacts" / "browser-bench-server.log", port=free_port_in(PORTS)) as (
        url,
        pid,
    ):
        yield url, pid


async def run(args) -> list[LessonFigures]:
    from playwright.async_api import async_playwright

    from ui.course import COURSE

    rows: list[LessonFigures] = []
    deadline = time.monotonic() + args.budget
    with target(args) as (base, server_pid):
        print(f"server {base}" + (f", pid {server_pid}" if server_pid else ""), flush=True)
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            pids = browser_pids({server_pid} if server_pid else set())
            try:
                for slug in args.lesson:
                    if time.monotonic() > deadline:
                        print(f"budget of {args.budget:.0f} s spent: {slug} and later lessons not run")
                        break
                    item = COURSE.lesson(slug)
                    url = base + ("/" if item == COURSE.start else f"/{item.url_path}")
                    left = max(30.0, deadline - time.monotonic())
                    try:
                        row = await asyncio.wait_for(lesson_run(browser, url, slug, args, server_pid), left)
                    except Exception as error:  # one lesson that cannot run is an error in its row
                        row = LessonFigures(slug, errors=[f"{type(error).__name__}: {str(error)[:200]}"])
                    rows.append(row)
                    print(table([row]), flush=True)
                    for line in row.errors:
                        print(f"  ! {line}", flush=True)
            finally:
                pids |= browser_pids({server_pid} if server_pid else set())
                await browser.close()
                _stop(pids)
    return rows


def _stop(pids: set[int]) -> None:
    """Any browser process still alive after close() is ended by its own PID."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if _comm(pid):
                os.kill(pid, signal.SIGKILL)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    from ui.course import COURSE

    slugs = [item.slug for item in COURSE.available()]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lesson", default=",".join(slugs), help="lessons, comma-separated: " + ", ".join(slugs))
    p.add_argument("--steps", type=int, default=6, help="Step clicks measured per lesson")
    p.add_argument("--loads", type=int, default=2, help="page loads measured per lesson (fresh tabs)")
    p.add_argument("--moves", type=int, default=3, help="slider moves measured (the GPT-2 and KV cache pages)")
    p.add_argument("--budget", type=float, default=1200.0, help="seconds for the whole run")
    p.add_argument(
        "--press",
        choices=("keyboard", "mouse"),
        default="keyboard",
        help="how Step is pressed: focus + Enter (default) or a mouse click (noisier: see Measuring)",
    )
    p.add_argument("--url", help="drive this server instead of starting one")
    p.add_argument("--pid", type=int, help="with --url: the server's pid, for its CPU")
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--compare", type=Path, help="a --json file of an earlier run: print before → after")
    args = p.parse_args(argv)
    args.lesson = lesson_list(p, args.lesson, slugs)
    if args.steps < 0 or args.loads < 1 or args.budget <= 0:
        p.error("steps >= 0, loads >= 1 and budget > 0")
    if chromium_path() is None:
        p.error("no chromium on this machine (apt-get install chromium)")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    rows = asyncio.run(run(args))
    print("\n" + table(rows))
    for line in misses(rows):
        print(f"  missed: {line}")
    for row in rows:
        for line in row.errors[:3]:
            print(f"  ! {row.slug}: {line}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    if args.compare:
        print("\nbefore → after (medians)\n" + comparison(load_json(args.compare), rows))


if __name__ == "__main__":
    main()
