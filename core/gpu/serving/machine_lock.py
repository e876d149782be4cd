"""One benchmark per machine, not just per process.

A classroom server may run several Streamlit processes behind a proxy, and a reader may run
the CLI beside the page; two benchmarks on one GPU would each measure half a card. So the
lock is a thread lock for this process plus an exclusive `flock` on a file in the course's
cache folder for every other process of the same user. Where there is no `fcntl` (Windows)
or the folder cannot be written, it is the thread lock alone.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # Windows: one process is all we can vouch for
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "gpu_benchmark.lock"


def lock_path() -> Path:
    """The lock file: in $COURSE_CACHE_DIR, else ~/.cache/gpt2-to-k3/ (where the last run is kept)."""
    env = os.environ.get("COURSE_CACHE_DIR")
    folder = Path(env) if env else Path.home() / ".cache" / "gpt2-to-k3"
    return folder / LOCK_NAME


class MachineLock:
    """`acquire()` without waiting → True if this caller now runs the machine's one benchmark."""

    def __init__(self) -> None:
        self._thread = threading.Lock()
        self._file: IO[str] | None = None

    def acquire(self) -> bool:
        if not self._thread.acquire(blocking=False):
            return False
        if fcntl is None:
            return True
        try:
            path = lock_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(path, "a+")  # noqa: SIM115 — held open for as long as the benchmark runs
        except OSError:
            return True  # nowhere to put the file: this process's lock is all there is
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another process runs a benchmark
            handle.close()
            self._thread.release()
            return False
        self._file = handle
        return True

    def release(self) -> None:
        handle, self._file = self._file, None
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        self._thread.release()

    def locked(self) -> bool:
        """Whether a benchmark runs anywhere on this machine (this process or another)."""
        if self._thread.locked():
            return True
        return fcntl is not None and held_elsewhere()


def held_elsewhere() -> bool:
    """Whether another open file holds the machine's lock (probed without taking it for long)."""
    try:
        with open(lock_path(), "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
            return False
    except OSError:
        return False
