"""Whether this server's GPU is still there: once it is lost, benchmarks stay off.

A GPU that falls off the bus answers NVML with "GPU is lost" (or vanishes from the device
list); CUDA work on it then fails or hangs. The page, the telemetry sampler and the runner
report what they see here, per server process, and the page turns its Run buttons off with
the reason. Only a restart clears it, as only a restart brings such a GPU back.
"""

from __future__ import annotations

import threading

from core.gpu.device.nvml import GONE, LOST_MESSAGE, DeviceSnapshot


class GpuHealth:
    """Remembers the GPU this process has seen, and whether it has been lost since."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.seen: str | None = None  # the GPU's name, once NVML has shown one
        self.lost: str | None = None  # why runs are off, in words

    def observe(self, snapshot: DeviceSnapshot) -> None:
        """Take a new look at the card into account: lost, gone since it was seen, or fine."""
        with self._lock:
            if snapshot.lost:
                self.lost = self.lost or snapshot.reason
            elif snapshot.available:
                self.seen = snapshot.name or "the GPU"
            elif self.seen is not None and self.lost is None:
                self.lost = LOST_MESSAGE.format(error=GONE.format(name=self.seen, reason=snapshot.reason))

    def mark_lost(self, reason: str) -> None:
        with self._lock:
            self.lost = self.lost or reason

    @property
    def runs_off(self) -> str | None:
        """Why no benchmark may start on this server (None: they may)."""
        return self.lost

    def reset(self) -> None:
        """Forget everything (tests; a real server clears it by restarting)."""
        with self._lock:
            self.seen = self.lost = None


HEALTH = GpuHealth()
