"""Server CPU and bytes of every lesson page: a new reader's page load and one Step click (AppTest).

    .venv/bin/python -m bench.pages                  # all pages
    .venv/bin/python -m bench.pages kv_cache 5       # only these lessons (slug or number)
    .venv/bin/python -m bench.pages --clicks 9 gpt2  # median over 9 Step clicks (default 7)
    .venv/bin/python -m bench.pages --profile gpt2   # cProfile of the script thread on Step clicks
    .venv/bin/python -m bench.pages --profile --again gpt2  # … of a second reader's (cached) clicks

What it measures, per lesson:

- **load ms**: CPU of a new reader's first run of the page with the process's caches warm (a new
  AppTest session each time, median of `--loads`), the way a server runs it: the script thread
  (widget callbacks, the page, plotly's JSON, Streamlit's protobufs and message hashes) plus
  serialising every ForwardMsg for the websocket. AppTest's own work (its mock runtime, parsing the
  element tree) is not counted. CPU time, not wall time: the machine may be shared.
- **step ms**: the same for one click of each Step button (key ending in `_step`), median over
  `--clicks` clicks, for the first reader to reach those steps (**step ms**: each step's figures
  are built) and for a second reader after them (**again ms**: the shared caches hold them). A
  Step button inside an `st.fragment` is clicked the way the browser does it (a rerun of that
  fragment only, with the fragment's id); otherwise the whole page reruns. Pages are compiled once,
  as a server does.
- **step kB / plotly kB**: bytes sent per click — every ForwardMsg serialised, with messages the
  browser already holds (Streamlit's message cache: new elements of >= 10 kB seen before) sent as
  a reference — and how much of it is plotly figure JSON.
- **load kB**: the same for the page load.
- **+gc ms**: the full `gc.collect(2)` a server's script runner adds after every run, page load and
  Step alike, while `runner.postScriptGC` is on (Streamlit's default; AppTest's runner skips it, so
  it is timed here apart). With torch and the models loaded it is ~110-160 ms, more than all the
  rest: a server for a class turns it off (`[runner] postScriptGC = false`, or `gc.freeze()` after
  start-up, which takes what is loaded by then out of every collection).

Targets on 2 cores: <= 40 ms CPU per Step, <= 300 ms CPU per page load. This prints figures; it
never fails — the targets are for people, not CI.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gc
import io
import logging
import pstats
import statistics
import sys
import time
from pathlib import Path

from streamlit import config
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequests
from streamlit.testing.v1 import AppTest, app_test, local_script_runner
from streamlit.testing.v1.local_script_runner import LocalScriptRunner

from ui.course import available

ROOT = Path(__file__).resolve().parents[1]


def _quiet() -> None:
    """No "missing ScriptRunContext" warnings: AppTest's main thread reads elements outside a run."""
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("streamlit"):
            logging.getLogger(name).setLevel(logging.ERROR)


STEP_TARGET_MS, LOAD_TARGET_MS = 40.0, 300.0

# -- hooks into AppTest's script runner: the RerunData a browser would send, and the thread's CPU --

_rerun_extra: dict = {}  # RerunData fields for the next run (fragment id, hashes the browser holds)
_last: dict = {}  # the last run's runner and its script thread's CPU seconds
_profile: cProfile.Profile | None = None  # set: the script thread runs under it

_request_rerun = LocalScriptRunner.request_rerun
_run_script_thread = LocalScriptRunner._run_script_thread


def _hooked_request_rerun(self, rerun_data):
    _last["runner"] = self
    # A server starts its script runner with the browser's request; AppTest starts it with an empty
    # one that a fragment request would be folded into (a full rerun). Start from the request alone.
    self._requests = ScriptRequests()
    return _request_rerun(self, dataclasses.replace(rerun_data, **_rerun_extra))


def _hooked_run_script_thread(self):
    start = time.thread_time()
    if _profile is not None:
        _profile.enable()
    try:
        _run_script_thread(self)
    finally:
        if _profile is not None:
            _profile.disable()
        _last["cpu"] = time.thread_time() - start
    # A server's script runner ends every run (fragment runs too) with a full collection when
    # runner.postScriptGC is on (Streamlit's default); AppTest's runner does not. Timed apart.
    start = time.thread_time()
    if config.get_option("runner.postScriptGC"):
        gc.collect(2)
    _last["gc"] = time.thread_time() - start


LocalScriptRunner.request_rerun = _hooked_request_rerun
LocalScriptRunner._run_script_thread = _hooked_run_script_thread
# A server compiles each page once (its ScriptCache lives as long as it does); AppTest makes a new
# cache per run, which would charge every rerun a parse and compile of the page.
_script_cache = app_test.ScriptCache()
app_test.ScriptCache = local_script_runner.ScriptCache = lambda: _script_cache


@dataclasses.dataclass
class Run:
    cpu_ms: float  # script thread + serialising the messages
    gc_ms: float  # the post-run full collection a server adds (runner.postScriptGC), else 0
    bytes_sent: int
    plotly_bytes: int
    messages: list


def _run(
    at: AppTest, widget_state=None, fragment_id: str | None = None, browser_cache: set | None = None
) -> Run:
    """One run as the server sees it; `browser_cache` (hashes the browser holds) is updated."""
    cache = browser_cache if browser_cache is not None else set()
    _rerun_extra.clear()
    _rerun_extra["cached_message_hashes"] = frozenset(cache)
    if fragment_id:
        _rerun_extra["fragment_id_queue"] = [fragment_id]
    at._run(widget_state)
    _rerun_extra.clear()
    _quiet()  # loggers Streamlit made during the run
    messages = list(_last["runner"].forward_msgs())
    start = time.thread_time()
    wire = [m.SerializeToString() for m in messages]
    serialise = time.thread_time() - start
    plotly = 0
    for m in messages:
        if m.WhichOneof("type") == "delta" and m.delta.WhichOneof("type") == "new_element":
            element = m.delta.new_element
            if element.WhichOneof("type") == "plotly_chart":
                plotly += len(element.plotly_chart.spec)
            elif element.WhichOneof("type") == "bidi_component":  # ui.live_chart: the figure's JSON
                plotly += len(element.bidi_component.bytes)
        if m.metadata.cacheable:
            cache.add(m.hash)
    return Run((_last["cpu"] + serialise) * 1000, _last["gc"] * 1000, sum(map(len, wire)), plotly, messages)


def _fragment_of(messages: list, widget_id: str) -> str | None:
    """The fragment a widget was drawn in (what the browser sends back when it is clicked)."""
    for m in messages:
        if m.WhichOneof("type") != "delta" or m.delta.WhichOneof("type") != "new_element":
            continue
        element = m.delta.new_element
        kind = element.WhichOneof("type")
        if kind and getattr(getattr(element, kind), "id", None) == widget_id:
            return m.delta.fragment_id or None
    return None


@dataclasses.dataclass
class PageResult:
    cold_s: float
    load: Run
    load_ms: float  # median
    steps: dict  # step key -> (median ms new step, median ms cached step, bytes, plotly bytes, fragment?)
    error: str | None = None


def bench_page(path: str, loads: int, clicks: int) -> PageResult:
    start = time.perf_counter()
    at = AppTest.from_file(str(ROOT / path), default_timeout=300)
    _run(at)  # cold: fills the process's caches
    cold = time.perf_counter() - start
    load_runs = []
    for _ in range(loads):  # a new reader each time, caches warm
        at = AppTest.from_file(str(ROOT / path), default_timeout=300)
        load_runs.append(_run(at))
    load = load_runs[-1]
    load_ms = statistics.median(r.cpu_ms for r in load_runs)
    steps = {}
    step_keys = [b.key for b in at.button if b.key and b.key.endswith("_step")]
    for key in step_keys:
        # reader 1 is the first to reach these steps (figures built), reader 2 follows (cached)
        per_reader = []
        for _reader in range(2):
            reader = AppTest.from_file(str(ROOT / path), default_timeout=300)
            cache: set = set()
            first = _run(reader, browser_cache=cache)
            tree = reader._tree
            button = tree.button(key=key)
            fragment = _fragment_of(first.messages, button.id)
            runs = []
            for _ in range(clicks):
                button.click()  # the same full tree every time: the other widgets keep their values
                runs.append(_run(reader, tree.get_widget_states(), fragment, cache))
                if reader.exception:
                    return PageResult(cold, load, load_ms, steps, f"{key}: {reader.exception[0].value}")
            per_reader.append(runs)
        first_runs, again = per_reader
        steps[key] = (
            statistics.median(r.cpu_ms for r in first_runs),
            statistics.median(r.cpu_ms for r in again),
            statistics.median(r.bytes_sent for r in again),
            statistics.median(r.plotly_bytes for r in again),
            fragment is not None,
            statistics.median(r.gc_ms for r in first_runs + again),
        )
    error = f"{at.exception[0].value}" if at.exception else None
    return PageResult(cold, load, load_ms, steps, error)


def profile_steps(path: str, clicks: int, again: bool, top: int = 45) -> None:
    """cProfile of the script thread over `clicks` Step clicks of the page's first Step button
    (`again`: by a second reader, after a first one has made those steps' figures)."""
    global _profile
    reader = AppTest.from_file(str(ROOT / path), default_timeout=300)
    _run(reader)
    keys = [b.key for b in reader.button if b.key and b.key.endswith("_step")]
    if not keys:
        print(f"{path}: no Step button")
        return
    for profiled in [False, True] if again else [True]:
        reader = AppTest.from_file(str(ROOT / path), default_timeout=300)
        cache: set = set()
        first = _run(reader, browser_cache=cache)
        tree = reader._tree
        button = tree.button(key=keys[0])
        fragment = _fragment_of(first.messages, button.id)
        if profiled:
            _profile = cProfile.Profile()
        for _ in range(clicks):
            button.click()
            _run(reader, tree.get_widget_states(), fragment, cache)
    stats, _profile = _profile, None
    out = io.StringIO()
    pstats.Stats(stats, stream=out).sort_stats("cumulative").print_stats(top)
    print(f"== cProfile, {clicks} clicks of {keys[0]} ({path}), by cumulative time ==")
    print(out.getvalue())


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lessons", nargs="*", help="slugs or numbers (default: every lesson)")
    parser.add_argument("--loads", type=int, default=3, help="page loads per lesson (median)")
    parser.add_argument("--clicks", type=int, default=7, help="Step clicks per button (median)")
    parser.add_argument("--profile", action="store_true", help="cProfile the Step clicks")
    parser.add_argument("--again", action="store_true", help="with --profile: a second reader's clicks")
    args = parser.parse_args(argv)
    _quiet()
    wanted = set(args.lessons)
    lessons = [
        item
        for item in available()
        if not wanted or {item.slug, str(item.number), f"{item.number:02d}"} & wanted
    ]
    if args.profile:
        for item in lessons:
            profile_steps(item.file, args.clicks, args.again)
        return
    gc_on = config.get_option("runner.postScriptGC")
    print(
        f"{'page / step button':34s} {'cold s':>7s} {'load ms':>8s} {'load kB':>8s} "
        f"{'step ms':>8s} {'again ms':>8s} {'step kB':>8s} {'plotly kB':>9s} {'+gc ms':>7s}  "
        f"target: load <= {LOAD_TARGET_MS:.0f} ms, step <= {STEP_TARGET_MS:.0f} ms CPU"
    )
    if gc_on:
        print(
            "runner.postScriptGC is on: a server adds the full collection in '+gc ms' to every run "
            "(page load and Step alike); the ms columns leave it out"
        )
    for item in lessons:
        result = bench_page(item.file, args.loads, args.clicks)
        over = result.load_ms + result.load.gc_ms > LOAD_TARGET_MS
        print(
            f"{item.file:34s} {result.cold_s:7.2f} {result.load_ms:8.0f} {result.load.bytes_sent / 1e3:8.0f}"
            + ("  (load over target)" if over else "")
        )
        for key, (ms, again, sent, plotly, fragment, gc_ms) in result.steps.items():
            flag = "  (over target)" if max(ms, again) + gc_ms > STEP_TARGET_MS else ""
            where = "fragment" if fragment else "page"
            print(
                f"  {key + ' (' + where + ')':32s} {'':7s} {'':8s} {'':8s} "
                f"{ms:8.1f} {again:8.1f} {sent / 1e3:8.1f} {plotly / 1e3:9.1f} {gc_ms:7.0f}{flag}"
            )
        if result.error:
            print(f"  !! {item.file} raised: {result.error}")


if __name__ == "__main__":
    main(sys.argv[1:])
