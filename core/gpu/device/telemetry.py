"""One live-telemetry sampler per server, shared by every reader who watches.

Each reader who presses Start joins as a viewer; all of them see the same readings from one
background thread and one NVML handle (a class of thirty watching the card costs one reading
a second, not thirty). Viewers say they are still there (`seen`) each time their chart
redraws; the thread stops by itself — and closes its NVML handle, pairing the nvmlInit —
when no viewer has been seen for `viewer_ttl_s` (a closed tab redraws nothing), after
`max_readings`, or when the GPU is lost (recorded in core.gpu.device.health).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from core.gpu.device import nvml
from core.gpu.device.health import HEALTH
from core.gpu.device.sampler import Sampler


def _open() -> nvml.NvmlGpu | nvml.NoGpu:
    return nvml.open_cuda_gpu()  # the card the benchmarks run on, on a multi-GPU box too


class TelemetryHub:
    """Start/leave/seen per viewer over one shared `Sampler` of one `NvmlGpu`."""

    def __init__(
        self,
        opener: Callable[[], nvml.NvmlGpu | nvml.NoGpu] = _open,
        interval_s: float = 1.0,
        maxlen: int = 300,
        max_readings: int = 900,
        viewer_ttl_s: float = 90.0,  # a hidden tab redraws about once a minute
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.opener = opener
        self.interval_s, self.maxlen, self.max_readings = interval_s, maxlen, max_readings
        self.viewer_ttl_s = viewer_ttl_s
        self.clock = clock
        self.sampler: Sampler[nvml.TelemetrySample] | None = None
        self.gpu: nvml.NvmlGpu | None = None
        self._viewers: dict[str, float] = {}  # viewer → when last seen
        self._lock = threading.Lock()

    # -- viewers -------------------------------------------------------------------------------
    def start(self, viewer: str) -> str | None:
        """Join as a viewer, starting the shared sampler if it is not running; the reason if NVML refuses."""
        with self._lock:
            self._viewers[viewer] = self.clock()
            if self.sampler is not None and self.sampler.running:
                return None
            gpu = self.opener()
            if not isinstance(gpu, nvml.NvmlGpu):
                self._viewers.pop(viewer, None)
                if gpu.lost:
                    HEALTH.mark_lost(gpu.reason)
                return gpu.reason
            self.gpu = gpu
            self.sampler = Sampler(
                gpu.sample,
                interval_s=self.interval_s,
                maxlen=self.maxlen,
                max_readings=self.max_readings,
                keep_going=lambda: self._keep_going(gpu),
                on_exit=gpu.close,
            )
            self.sampler.start()
            return None

    def leave(self, viewer: str) -> None:
        """Stop watching; the last viewer to leave stops the sampler and closes its handle."""
        with self._lock:
            self._viewers.pop(viewer, None)
            last = not self._viewers
        if last:
            self.stop()

    def seen(self, viewer: str) -> None:
        """A viewer's chart redrew: they are still there."""
        with self._lock:
            if viewer in self._viewers:
                self._viewers[viewer] = self.clock()

    def watching(self, viewer: str) -> bool:
        """Whether this viewer is watching a running sampler."""
        with self._lock:
            return viewer in self._viewers and self.running

    @property
    def viewers(self) -> int:
        with self._lock:
            return len(self._fresh())

    # -- the sampler -----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.sampler is not None and self.sampler.running

    def samples(self) -> list[Any]:
        return self.sampler.snapshot() if self.sampler is not None else []

    def stop(self) -> None:
        """Stop the thread (its exit closes the NVML handle); the last readings stay readable."""
        sampler = self.sampler
        if sampler is not None:
            sampler.stop()
        with self._lock:
            self._viewers.clear()

    def _fresh(self) -> dict[str, float]:
        now = self.clock()
        self._viewers = {v: t for v, t in self._viewers.items() if now - t <= self.viewer_ttl_s}
        return self._viewers

    def _keep_going(self, gpu: nvml.NvmlGpu) -> bool:
        """Asked by the thread before each reading: someone watching, and the GPU still there."""
        if gpu.lost:
            HEALTH.mark_lost(gpu.lost)
            return False
        with self._lock:
            return bool(self._fresh())


HUB = TelemetryHub()
