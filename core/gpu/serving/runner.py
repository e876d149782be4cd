"""One benchmark per machine at a time (core.gpu.serving.machine_lock), so timings stay honest; the others
wait in line.

`run_exclusive` runs a call unless another holds the lock (then returns `Busy`): the CLI.
`BenchRunner` is the page's: it runs one benchmark on a background thread and queues the
rest, first come first served, each starting by itself when the one before it ends. Every
run and place in the line belongs to an owner token (the page keeps it in the URL, so a
reload keeps control of one's own run). A run ends early, keeping what it measured, when
its owner presses Stop, when it reaches `max_run_s`, or when its owner has not been seen for
`owner_ttl_s` — the page says "still here" every half second while it shows the run, so a
closed tab or a reader who left the page stops being seen. A waiting reader who leaves
loses their place the same way. Nothing starts while core.gpu.device.health says the GPU is lost.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.gpu.device.health import HEALTH
from core.gpu.serving.machine_lock import MachineLock
from core.gpu.timing.errors import error_line
from core.i18n import N_

# status lines stay English here (a worker thread, every reader); the page translates them (ui/gpu/words.py)
BUSY_MESSAGE = N_("Another benchmark is running on this server right now. Wait for it to finish, then try again.")
LIMIT_REASON = N_("it reached the {minutes:.0f}-minute limit for one run")  # why a run stopped early
MAX_RUN_S = 600.0  # the longest one page benchmark may run
# An owner not seen for this long has left. Generous on purpose: browsers slow a hidden tab's
# timers to once a minute, and a reader who switches tabs while their run finishes has not left.
OWNER_TTL_S = 90.0

_BENCH_LOCK = MachineLock()  # this process and every other one of this user
_log = logging.getLogger(__name__)


@dataclass
class Busy:
    """Returned instead of a result when another benchmark holds the lock (or runs are off)."""

    message: str = BUSY_MESSAGE


def run_exclusive(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run `fn` unless a benchmark is already running in this process; then return Busy()."""
    if not _BENCH_LOCK.acquire():
        return Busy()
    try:
        return fn(*args, **kwargs)
    finally:
        _BENCH_LOCK.release()


def benchmark_running() -> bool:
    return _BENCH_LOCK.locked()


@dataclass
class Job:
    """A benchmark running on a background thread, watched by the page that started it."""

    owner: str
    label: str
    fraction: float = 0.0
    message: str = N_("starting")
    result: Any = None
    error: str | None = None
    done: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    stop_reason: str | None = None  # why it ended early, when not by its owner's Stop

    def update(self, fraction: float, message: str) -> None:
        self.fraction, self.message = max(0.0, min(1.0, fraction)), message

    def wait(self, timeout: float | None = None) -> bool:
        if self.thread is not None:
            self.thread.join(timeout)
        return self.done


@dataclass
class Waiting:
    """A run asked for while another was running: it starts by itself when its turn comes."""

    owner: str
    label: str
    fn: Callable[..., Any]
    kwargs: dict[str, Any]


class BenchRunner:
    """Runs benchmarks on a thread, one per machine, the others in line; remembers each owner's last job."""

    def __init__(
        self,
        keep: int = 64,
        max_run_s: float = MAX_RUN_S,
        owner_ttl_s: float = OWNER_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._line: list[Waiting] = []
        self._seen: dict[str, float] = {}
        self._keep = keep
        self.max_run_s, self.owner_ttl_s, self.clock = max_run_s, owner_ttl_s, clock
        self._state = threading.RLock()

    # -- owners ----------------------------------------------------------------------------------
    def seen(self, owner: str) -> None:
        """The owner's page is open: their run keeps going and their place in line is kept."""
        with self._state:
            self._seen[owner] = self.clock()

    def _gone(self, owner: str) -> bool:
        return self.clock() - self._seen.get(owner, -float("inf")) > self.owner_ttl_s

    def knows(self, owner: str) -> bool:
        """Whether this owner has a run (running, finished and not collected) or a place in line."""
        with self._state:
            return owner in self._jobs or any(w.owner == owner for w in self._line)

    # -- runs and the line -----------------------------------------------------------------------
    def submit(self, owner: str, label: str, fn: Callable[..., Any], **kwargs: Any) -> Job | Busy | int:
        """Start `fn(progress=…, should_stop=…, **kwargs)` now if nothing runs, else join the line.

        Returns the started Job, the owner's place in line (1 = next), or Busy when runs are off."""
        if HEALTH.runs_off:
            return Busy(HEALTH.runs_off)
        with self._state:
            self._seen[owner] = self.clock()
            current = self._jobs.get(owner)
            if current is not None and not current.done:
                return current
            self._drop_gone()
            self._line = [w for w in self._line if w.owner != owner]  # a new choice replaces the old one
            self._line.append(Waiting(owner, label, fn, kwargs))
            self._start_next()  # first in line and nothing running: it starts now
            for place, waiting in enumerate(self._line, 1):
                if waiting.owner == owner:
                    return place
            return self._jobs[owner]

    def position(self, owner: str) -> int | None:
        """The owner's place in line (1 = next), or None when they are not waiting."""
        with self._state:
            self._drop_gone()
            self._start_next()  # in case the lock came free while nobody was looking
            for i, waiting in enumerate(self._line, 1):
                if waiting.owner == owner:
                    return i
            return None

    def leave_line(self, owner: str) -> None:
        with self._state:
            self._line = [w for w in self._line if w.owner != owner]

    def job(self, owner: str) -> Job | None:
        with self._state:
            return self._jobs.get(owner)

    def forget(self, owner: str) -> None:
        with self._state:
            self._jobs.pop(owner, None)

    def _drop_gone(self) -> None:
        self._line = [w for w in self._line if not self._gone(w.owner)]

    def _start_next(self) -> None:
        while self._line and not HEALTH.runs_off:
            waiting = self._line[0]
            if self._start(waiting.owner, waiting.label, waiting.fn, waiting.kwargs) is None:
                return  # still busy
            self._line.pop(0)

    def _start(self, owner: str, label: str, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Job | None:
        """Start a run if the lock is free (None if it is not)."""
        if not _BENCH_LOCK.acquire():
            return None
        job = Job(owner, label)
        started = self.clock()

        def should_stop() -> bool:
            if job.stop.is_set():
                return True
            if self.clock() - started > self.max_run_s:
                job.stop_reason = LIMIT_REASON.format(minutes=self.max_run_s / 60)
            elif self._gone(owner):
                job.stop_reason = N_("its reader left the page")
            elif HEALTH.runs_off:
                job.stop_reason = N_("the GPU was lost")
            else:
                return False
            job.stop.set()
            return True

        def work() -> None:
            try:
                job.result = fn(progress=job.update, should_stop=should_stop, **kwargs)
            except Exception as error:  # reported on the page in one line, never raised into Streamlit
                _log.exception("benchmark %s failed", label)  # the full error goes to the console log
                job.error = error_line(error, 300)
            finally:
                _BENCH_LOCK.release()
                with self._state:
                    self._drop_gone()
                    self._start_next()
                job.done = True  # last: whoever sees it done finds the lock free or the next run started

        self._jobs[owner] = job
        self._jobs.move_to_end(owner)
        while len(self._jobs) > self._keep:
            self._jobs.popitem(last=False)
        job.thread = threading.Thread(target=work, name=f"bench-{label}", daemon=True)
        job.thread.start()
        return job


RUNNER = BenchRunner()
