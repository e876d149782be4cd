"""A background thread that reads a counter at a fixed interval into a bounded buffer.

Like nvitop's `ResourceMetricCollector` and Zeus's power poller: the reading runs on
its own thread so the code being measured is not interrupted, and the buffer is a
`deque(maxlen=…)`, so a sampler left running for hours holds a fixed amount of memory.
What is read is any zero-argument function (an `NvmlGpu.sample`, a power reading …),
which is how tests drive it without a GPU.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Sampler(Generic[T]):
    """Call `read()` every `interval_s` seconds on a daemon thread; keep the last `maxlen` results."""

    def __init__(
        self,
        read: Callable[[], T],
        interval_s: float = 0.5,
        maxlen: int = 600,
        max_readings: int | None = None,
        keep_going: Callable[[], bool] | None = None,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self.read = read
        # Stop by itself after this many readings: a forgotten browser tab must not poll forever.
        self.max_readings = max_readings
        self.keep_going = keep_going  # asked before every reading; False ends the thread
        self.on_exit = on_exit  # called on the thread when it ends (e.g. to close a handle)
        self.readings = 0
        self.interval_s = interval_s
        self._buffer: deque[T] = deque(maxlen=maxlen)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.errors = 0  # readings that raised; the sampler keeps going
        self.last_error: str | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def sample_now(self) -> T | None:
        """Take one reading on the calling thread and store it (None if the reading failed)."""
        self.readings += 1
        try:
            value = self.read()
        except Exception as error:  # a flaky counter must not kill the thread
            self.errors += 1
            self.last_error = f"{type(error).__name__}: {error}"
            return None
        with self._lock:
            self._buffer.append(value)
        return value

    def _more(self) -> bool:
        if self.max_readings is not None and self.readings >= self.max_readings:
            return False
        return self.keep_going is None or self.keep_going()

    def _loop(self) -> None:
        try:
            if self._more():
                self.sample_now()
            while not self._stop.wait(self.interval_s) and self._more():
                self.sample_now()
        finally:
            if self.on_exit is not None:
                self.on_exit()

    def start(self) -> None:
        """Begin sampling (no-op when already running)."""
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="gpu-sampler", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop sampling and wait for the thread; the buffer is kept."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None

    def snapshot(self) -> list[T]:
        """A copy of the buffer, oldest first, safe to read while the thread writes."""
        with self._lock:
            return list(self._buffer)

    def clear(self) -> None:
        with self._lock:
            self._buffer.clear()
