"""Live telemetry: board power, temperature, clocks and load, sampled once a second with Start/Stop."""

from __future__ import annotations

import streamlit as st

from core.figures.gpu import telemetry_figure
from core.gpu import nvml
from core.gpu.report import or_unknown
from core.gpu.sampler import Sampler
from ui.lesson import show_figure

INTERVAL_S = 1.0
MAX_READINGS = 900  # 15 minutes at most


def telemetry_panel() -> None:
    """Start/Stop buttons over a background sampler kept in the session; redrawn every second while it runs."""
    st.subheader("Live telemetry")
    st.caption(
        "Board power, how busy the GPU is, and memory in use, read from the driver once a second "
        "(for up to 15 minutes)."
    )
    sampler: Sampler | None = st.session_state.get("gpu_sampler")
    t1, t2, _ = st.columns([1, 1, 4])
    if t1.button(
        "Start",
        key="gpu_tel_start",
        icon=":material/play_arrow:",
        disabled=sampler is not None and sampler.running,
    ):
        started = _start()
        sampler = started if started is not None else sampler
    if t2.button(
        "Stop", key="gpu_tel_stop", icon=":material/stop:", disabled=sampler is None or not sampler.running
    ):
        sampler.stop()
        st.session_state.pop("gpu_tel_handle").close()

    def draw_telemetry() -> None:
        _draw(sampler)

    if sampler is not None and sampler.running:
        st.fragment(run_every=INTERVAL_S)(draw_telemetry)()
    else:
        draw_telemetry()


def _start() -> Sampler | None:
    """Open the GPU and start sampling it (closing a handle left from before); None if NVML refuses."""
    gpu = nvml.open_cuda_gpu()  # the card the benchmarks run on, on a multi-GPU box too
    if not isinstance(gpu, nvml.NvmlGpu):
        st.error(gpu.reason)
        return None
    old_gpu = st.session_state.get("gpu_tel_handle")
    if old_gpu is not None:
        old_gpu.close()
    sampler = Sampler(gpu.sample, interval_s=INTERVAL_S, maxlen=300, max_readings=MAX_READINGS)
    sampler.start()
    st.session_state["gpu_sampler"], st.session_state["gpu_tel_handle"] = sampler, gpu
    return sampler


def _draw(sampler: Sampler | None) -> None:
    samples = sampler.snapshot() if sampler is not None else []
    if not samples:
        st.caption("Press Start to watch the card.")
        return
    last = samples[-1]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Power", or_unknown(last.power_w, "{:,.0f} W"))
    m2.metric("Temperature", or_unknown(last.temperature_c, "{:.0f} °C"))
    m3.metric("SM clock", or_unknown(last.sm_clock_mhz, "{:,.0f} MHz"))
    reasons = nvml.describe_throttle(last.throttle_mask)
    m4.metric("Clock held back by", ", ".join(reasons) if reasons else "nothing")
    show_figure(telemetry_figure(samples), key="gpu_tel_fig")
