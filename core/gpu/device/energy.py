"""Energy of a window of GPU work: the hardware counter where there is one, sampled power otherwise.

Method as in Zeus (`zeus/monitor/energy.py`) and vLLM (`benchmarks/lib/energy.py`):
read `nvmlDeviceGetTotalEnergyConsumption` (millijoules since driver load, Volta and
newer) right before and right after the window (after a device sync) and take the
difference. A counter that went backwards (a driver reload or GPU reset restarts it) is
discarded at the read that sees it, never raised: the window falls back to the sampled
power, and `EnergyReading.note` says why. Older cards have no
counter, so a background thread samples board power and the energy is the trapezoid
integral of watts over time. Zeus reports the two agree within about 1 %. A counter that
did not move at all over the window is treated as no reading (sampled power, or None), never 0 J.
NVML measures the GPU board only, never the wall socket. On Hopper and newer NVML's power
reading is a 1 s trailing average, so a meter with `lead_s` starts sampling that long before its
window opens: the first samples of the window then stand for the window, and the lead (its
seconds and average watts in the reading) shows what the card drew just before.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.gpu.device.sampler import Sampler

POWER_AVERAGE_S = 1.0  # NVML power on Hopper: the average of the last second


@dataclass
class EnergyReading:
    joules: float
    seconds: float
    method: str  # "energy counter" or "sampled power"
    n_samples: int = 0
    note: str = ""  # why the counter was not used, when it was there but went backwards
    lead_seconds: float = 0.0  # power sampled this long before the window opened
    lead_watts: float | None = None  # the average of those samples

    @property
    def avg_watts(self) -> float:
        return self.joules / self.seconds if self.seconds > 0 else 0.0

    def net_joules(self, idle_watts: float | None) -> float:
        """Energy above the idle baseline: gross − idle watts × seconds (never below zero)."""
        if idle_watts is None:
            return self.joules
        return max(0.0, self.joules - idle_watts * self.seconds)


def trapezoid_joules(samples: Sequence[tuple[float, float]]) -> float:
    """∫ P dt over (seconds, watts) samples by the trapezoid rule; exact for piecewise-linear P."""
    total = 0.0
    for (t0, p0), (t1, p1) in zip(samples, samples[1:], strict=False):
        if t1 < t0:
            raise ValueError("power samples must be in time order")
        total += 0.5 * (p0 + p1) * (t1 - t0)
    return total


class EnergyMeter:
    """begin() … end() around a window of work → an EnergyReading (or None if nothing can be read).

    read_counter_mj: total-energy counter in millijoules, or None for cards without one.
    read_power_w:    instantaneous board power in watts (fallback, and sampled for the record).
    background:      sample power on a thread every `interval_s`; tests set it False and call
                     `record()` themselves with a fake clock.
    """

    def __init__(
        self,
        read_counter_mj: Callable[[], float | None] | None = None,
        read_power_w: Callable[[], float | None] | None = None,
        clock: Callable[[], float] = time.perf_counter,
        interval_s: float = 0.05,
        background: bool = True,
        lead_s: float = 0.0,
    ) -> None:
        self.read_counter_mj = read_counter_mj
        self.read_power_w = read_power_w
        self.clock = clock
        self.interval_s = interval_s
        self.background = background
        self.lead_s = lead_s
        self._lead_t0: float | None = None
        self.samples: list[tuple[float, float]] = []
        self._t0 = 0.0
        self._counter0: float | None = None
        self._sampler: Sampler | None = None

    @property
    def can_measure(self) -> bool:
        return self.read_counter_mj is not None or self.read_power_w is not None

    def record(self) -> None:
        """Take one power sample now (called by the sampler thread, or by hand)."""
        if self.read_power_w is None:
            return
        t, watts = self.clock(), self.read_power_w()
        if watts is not None:
            self.samples.append((t, float(watts)))

    def start_lead(self) -> None:
        """Start sampling power now, before the window: begin() opens it `lead_s` later at the earliest."""
        self.samples = []
        self._lead_t0 = self.clock()
        self.record()
        self._start_sampler()

    def begin(self) -> None:
        """Open the window: with `lead_s`, after power has been sampled that long (started here if
        start_lead() was not called; a meter without its own thread is given its samples by hand)."""
        if self.lead_s > 0 and self.read_power_w is not None:
            if self._lead_t0 is None:
                self.start_lead()
            while self.background and self.clock() - self._lead_t0 < self.lead_s:  # type: ignore[operator]
                time.sleep(min(0.05, self.lead_s))
        else:
            self.samples = []
        self._counter0 = self.read_counter_mj() if self.read_counter_mj else None
        self._t0 = self.clock()
        self.record()
        self._start_sampler()

    def _start_sampler(self) -> None:
        if self.background and self.read_power_w is not None and self._sampler is None:
            self._sampler = Sampler(self._record_for_sampler, interval_s=self.interval_s, maxlen=1_000_000)
            self._sampler.start()

    def _record_for_sampler(self) -> None:
        self.record()

    def end(self) -> EnergyReading | None:
        """Close the window: the counter's difference, else the integrated power samples, else None."""
        if self._sampler is not None:
            self._sampler.stop()
            self._sampler = None
        t1 = self.clock()
        counter1 = self.read_counter_mj() if self.read_counter_mj else None
        self.record()
        seconds = t1 - self._t0
        note = ""
        reading = None
        if self._counter0 is not None and counter1 is not None:
            delta_mj = counter1 - self._counter0
            if delta_mj > 0:
                window = sum(1 for t, _ in self.samples if t >= self._t0)
                reading = EnergyReading(delta_mj / 1000.0, seconds, "energy counter", window)
            elif delta_mj < 0:
                note = (
                    f"the energy counter went backwards ({self._counter0:.0f} → {counter1:.0f} mJ), "
                    "so its reading was discarded"
                )
            # A counter that never moved measured nothing (a stuck or vGPU counter, or a window
            # shorter than its update period): not 0 J. Integrate the power samples instead.
        # a bad reading is skipped; two threads may append out of order, so the samples are sorted by time
        good = sorted((t, w) for t, w in self.samples if math.isfinite(w) and w >= 0)
        lead = [(t, w) for t, w in good if t < self._t0]
        samples = [(t, w) for t, w in good if t >= self._t0]
        self._lead_t0 = None
        lead_fields = {
            "lead_seconds": self._t0 - lead[0][0] if lead else 0.0,
            "lead_watts": sum(w for _, w in lead) / len(lead) if lead else None,
        }
        if reading is not None:
            return dataclasses.replace(reading, **lead_fields)
        if len(samples) >= 2:
            span = samples[-1][0] - samples[0][0]
            return EnergyReading(
                trapezoid_joules(samples), span, "sampled power", len(samples), note, **lead_fields
            )
        return None
