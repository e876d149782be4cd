"""Energy meter: the counter path and the sampled-power path agree; a counter going backwards is
discarded where it is read, never raised; a counter that never moves gives no reading, never 0 J."""

from __future__ import annotations

import numpy as np
import pytest

from core.gpu.device import nvml
from core.gpu.device.energy import EnergyMeter, trapezoid_joules
from tests.core.gpu.fake_nvml import FakeNvml

# A synthetic power trace, piecewise linear in time: idle, ramp, plateau, drop (seconds, watts).
KNOTS_T = np.array([0.0, 1.0, 1.5, 4.0, 4.2, 6.0])
KNOTS_W = np.array([40.0, 40.0, 220.0, 230.0, 60.0, 55.0])


def power(t: float) -> float:
    return float(np.interp(t, KNOTS_T, KNOTS_W))


def energy_mj(t: float) -> float:
    """Exact ∫₀ᵗ P dt in millijoules (closed form of the piecewise-linear trace)."""
    ts = np.concatenate([KNOTS_T[KNOTS_T < t], [t]])
    ws = np.interp(ts, KNOTS_T, KNOTS_W)
    return 5.0e6 + 1000.0 * float(np.sum(0.5 * (ws[1:] + ws[:-1]) * np.diff(ts)))


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_window(meter: EnergyMeter, clock: FakeClock, times) -> None:
    clock.now = times[0]
    meter.begin()
    for t in times[1:-1]:
        clock.now = t
        meter.record()
    clock.now = times[-1]


def test_trapezoid_is_exact_on_a_linear_ramp():
    assert trapezoid_joules([(0.0, 0.0), (2.0, 100.0)]) == pytest.approx(100.0)
    assert trapezoid_joules([]) == 0.0
    with pytest.raises(ValueError):
        trapezoid_joules([(1.0, 5.0), (0.0, 5.0)])


def test_counter_and_integration_give_the_same_joules():
    times = list(KNOTS_T)  # sampling at the knots → trapezoid is exact
    clock = FakeClock()
    by_counter = EnergyMeter(
        lambda: energy_mj(clock.now), lambda: power(clock.now), clock=clock, background=False
    )
    run_window(by_counter, clock, times)
    a = by_counter.end()
    clock2 = FakeClock()
    by_power = EnergyMeter(None, lambda: power(clock2.now), clock=clock2, background=False)
    run_window(by_power, clock2, times)
    b = by_power.end()
    assert a.method == "energy counter" and b.method == "sampled power"
    expected = (energy_mj(6.0) - energy_mj(0.0)) / 1000.0
    assert a.joules == pytest.approx(expected, rel=1e-12)
    assert b.joules == pytest.approx(expected, rel=1e-12)
    assert a.seconds == b.seconds == 6.0
    assert a.avg_watts == pytest.approx(expected / 6.0)


def test_dense_sampling_of_a_curved_trace_converges_to_the_counter():
    clock = FakeClock()
    watts = lambda t: 150.0 + 50.0 * np.sin(t)  # noqa: E731
    counter = lambda t: 1000.0 * (150.0 * t - 50.0 * np.cos(t) + 50.0)  # noqa: E731
    times = list(np.linspace(0.0, 5.0, 501))
    by_power = EnergyMeter(None, lambda: watts(clock.now), clock=clock, background=False)
    run_window(by_power, clock, times)
    integrated = by_power.end().joules
    assert integrated == pytest.approx((counter(5.0) - counter(0.0)) / 1000.0, rel=1e-4)


def test_through_a_fake_gpu_both_paths_agree():
    """The same trace read through NVML calls (mW and integer mJ, as the driver reports them)."""
    clock = FakeClock()
    fake = FakeNvml(power_w=power, energy_mj=energy_mj, clock=clock)
    gpu = nvml.open_gpu(fake)
    with_counter = EnergyMeter(gpu.energy_mj, gpu.power_w, clock=clock, background=False)
    run_window(with_counter, clock, list(KNOTS_T))
    a = with_counter.end()
    clock.now = 0.0
    sampled = EnergyMeter(None, gpu.power_w, clock=clock, background=False)
    run_window(sampled, clock, list(KNOTS_T))
    b = sampled.end()
    assert a.joules == pytest.approx(b.joules, abs=2e-3)  # integer-mJ rounding at the two ends


def test_counter_going_backwards_is_discarded_not_raised():
    readings = iter([9_000.0, 4_000.0])
    meter = EnergyMeter(lambda: next(readings), None, background=False)
    meter.begin()
    assert meter.end() is None  # nothing else to read: no reading, and no exception
    clock = FakeClock()
    readings = iter([9_000.0, 4_000.0])
    with_power = EnergyMeter(lambda: next(readings), lambda: 50.0, clock=clock, background=False)
    run_window(with_power, clock, [0.0, 1.0, 2.0])
    reading = with_power.end()
    assert reading.method == "sampled power" and reading.joules == pytest.approx(100.0)
    assert "went backwards" in reading.note


def test_a_bad_power_sample_is_skipped():
    clock = FakeClock()
    watts = iter([50.0, float("nan"), -3.0, 50.0])
    meter = EnergyMeter(None, lambda: next(watts), clock=clock, background=False)
    run_window(meter, clock, [0.0, 1.0, 2.0, 3.0])
    reading = meter.end()
    assert reading.joules == pytest.approx(150.0) and reading.n_samples == 2
    late = EnergyMeter(None, lambda: 10.0, clock=clock, background=False)
    run_window(late, clock, [0.0, 2.0])
    late.samples.insert(1, (1.5, 10.0))  # the sampler thread appended after the main thread's reading
    late.samples.append((0.5, 10.0))
    assert late.end().joules == pytest.approx(20.0)  # sorted by time, not raised


def test_idle_baseline_is_subtracted():
    clock = FakeClock()
    meter = EnergyMeter(None, lambda: 100.0, clock=clock, background=False)
    run_window(meter, clock, [0.0, 1.0, 2.0])
    reading = meter.end()
    assert reading.joules == pytest.approx(200.0)
    assert reading.net_joules(30.0) == pytest.approx(140.0)
    assert reading.net_joules(None) == pytest.approx(200.0)
    assert reading.net_joules(500.0) == 0.0


def test_nothing_to_read_gives_none():
    meter = EnergyMeter(None, None, background=False)
    assert not meter.can_measure
    meter.begin()
    assert meter.end() is None


def test_background_sampling_thread():
    meter = EnergyMeter(None, lambda: 50.0, interval_s=0.005)
    meter.begin()
    import time

    time.sleep(0.1)
    reading = meter.end()
    assert reading.method == "sampled power" and reading.n_samples >= 3
    assert reading.avg_watts == pytest.approx(50.0)


def test_power_is_sampled_from_a_second_before_the_window_through_a_fake_gpu():
    """NVML power on Hopper is a 1 s average: a meter with a lead samples from 1 s before its window,
    reports that lead (seconds, watts) apart, and integrates only the window — here a card at 40 W
    that jumps to 220 W as the window opens."""
    clock = FakeClock()
    fake = FakeNvml(
        power_w=lambda t: 40.0 if t < 2.0 else 220.0, energy_mj=lambda t: 1e6 + 1000.0 * t, clock=clock
    )
    gpu = nvml.open_gpu(fake)
    meter = EnergyMeter(None, gpu.power_w, clock=clock, background=False, lead_s=1.0)
    clock.now = 1.0
    meter.start_lead()
    clock.now = 1.5
    meter.record()
    clock.now = 2.0
    meter.begin()  # the lead is 1 s long: the window opens now
    for t in (3.0, 4.0):
        clock.now = t
        meter.record()
    reading = meter.end()
    assert reading.method == "sampled power"
    assert reading.lead_seconds == pytest.approx(1.0) and reading.lead_watts == pytest.approx(40.0)
    assert reading.seconds == pytest.approx(2.0) and reading.joules == pytest.approx(440.0)  # lead left out
    assert reading.n_samples == 4  # at the window's open, 3 s, 4 s and its close


def test_a_counter_reading_also_reports_its_lead():
    clock = FakeClock()
    meter = EnergyMeter(lambda: 1000.0 * clock.now, lambda: 100.0, clock=clock, background=False, lead_s=1.0)
    meter.start_lead()
    clock.now = 1.0
    meter.begin()
    clock.now = 3.0
    reading = meter.end()
    assert reading.method == "energy counter" and reading.joules == pytest.approx(2.0)
    assert reading.lead_seconds == pytest.approx(1.0) and reading.lead_watts == pytest.approx(100.0)


def test_a_background_meter_waits_for_its_lead_before_the_window_opens():
    import time

    meter = EnergyMeter(None, lambda: 50.0, interval_s=0.01, lead_s=0.2)
    t0 = time.perf_counter()
    meter.begin()
    assert time.perf_counter() - t0 >= 0.2
    reading = meter.end()
    assert reading.lead_seconds >= 0.2 and reading.lead_watts == pytest.approx(50.0)


def test_a_counter_that_never_moves_is_not_zero_joules():
    clock = FakeClock()
    meter = EnergyMeter(lambda: 5e6, lambda: 80.0, clock=clock, background=False)
    meter.begin()
    for t in (1.0, 2.0):
        clock.now = t
        meter.record()
    clock.now = 3.0
    reading = meter.end()
    assert reading.method == "sampled power" and reading.joules == pytest.approx(240.0)
    stuck = EnergyMeter(lambda: 5e6, None, clock=clock, background=False)
    stuck.begin()
    clock.now = 10.0
    assert stuck.end() is None  # nothing else to read: no reading, never 0 J
