"""One benchmark per process at a time, so timings stay honest.

`run_exclusive` runs a call unless another holds the lock (then returns `Busy`);
`BenchRunner` runs one on a background thread for the page, remembers each reader's
last `Job` and lets them watch its progress or stop it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BUSY_MESSAGE = "Another benchmark is running on this server right now. Wait for it to finish, then try again."

_BENCH_LOCK = threading.Lock()


@dataclass
class Busy:
    """Returned instead of a result when another benchmark holds the lock."""

    message: str = BUSY_MESSAGE


def run_exclusive(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run `fn` unless a benchmark is already running in this process; then return Busy()."""
    if not _BENCH_LOCK.acquire(blocking=False):
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
    message: str = "starting"
    result: Any = None
    error: str | None = None
    done: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def update(self, fraction: float, message: str) -> None:
        self.fraction, self.message = max(0.0, min(1.0, fraction)), message

    def wait(self, timeout: float | None = None) -> bool:
        if self.thread is not None:
            self.thread.join(timeout)
        return self.done


class BenchRunner:
    """Runs benchmarks on a thread, one per process; remembers each reader's last job."""

    def __init__(self, keep: int = 64) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._keep = keep
        self._state = threading.Lock()

    def submit(self, owner: str, label: str, fn: Callable[..., Any], **kwargs: Any) -> Job | Busy:
        """Start `fn(progress=…, should_stop=…, **kwargs)` unless any benchmark is running."""
        if not _BENCH_LOCK.acquire(blocking=False):
            return Busy()
        job = Job(owner, label)

        def work() -> None:
            try:
                job.result = fn(progress=job.update, should_stop=job.stop.is_set, **kwargs)
            except Exception as error:  # reported on the page, never raised into Streamlit
                job.error = f"{type(error).__name__}: {error}"
            finally:
                job.done = True
                _BENCH_LOCK.release()

        with self._state:
            self._jobs[owner] = job
            self._jobs.move_to_end(owner)
            while len(self._jobs) > self._keep:
                self._jobs.popitem(last=False)
        job.thread = threading.Thread(target=work, name=f"bench-{label}", daemon=True)
        job.thread.start()
        return job

    def job(self, owner: str) -> Job | None:
        with self._state:
            return self._jobs.get(owner)

    def forget(self, owner: str) -> None:
        with self._state:
            self._jobs.pop(owner, None)


RUNNER = BenchRunner()
