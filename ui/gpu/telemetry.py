"""Live telemetry: GPU power, temperature, clocks and load, once a second with Start/Stop.

Every reader watches the one shared sampler of core.gpu.device.telemetry.HUB: Start joins it, Stop
leaves it, and each redraw says the reader is still there (a closed tab stops saying so, and
the sampler stops by itself when nobody is left).
"""

from __future__ import annotations

import streamlit as st

from core.figures.gpu import telemetry_figure
from core.gpu.device import nvml
from core.gpu.device.telemetry import HUB
from core.gpu.output.report import or_unknown
from core.i18n import _
from ui.charts import show_figure
from ui.gpu.words import reader_line


def telemetry_panel(viewer: str) -> None:
    """Start/Stop buttons over the shared sampler; redrawn every second while this reader watches."""
    st.subheader(_("Live telemetry"))
    st.caption(
        _(
            "Power drawn by the whole card, how busy the GPU is, and memory in use, read from the driver once a "
            "second (for up to {minutes:.0f} minutes; every reader of this server sees the same readings)."
        ).format(minutes=HUB.max_readings * HUB.interval_s / 60)
    )
    watching = HUB.watching(viewer)
    t1, t2, _spare = st.columns([1, 1, 4])
    if t1.button(_("Start"), key="gpu_tel_start", icon=":material/play_arrow:", disabled=watching):
        refused = HUB.start(viewer)
        if refused:
            st.error(reader_line(refused))
        watching = HUB.watching(viewer)
    if t2.button(_("Stop"), key="gpu_tel_stop", icon=":material/stop:", disabled=not watching):
        HUB.leave(viewer)
        watching = False

    def draw_telemetry() -> None:
        HUB.seen(viewer)
        _draw(HUB.samples() if HUB.watching(viewer) else [])

    if watching:
        st.fragment(run_every=HUB.interval_s)(draw_telemetry)()
    else:
        draw_telemetry()


def _draw(samples: list[nvml.TelemetrySample]) -> None:
    if not samples:
        st.caption(_("Press Start to watch the card."))
        return
    last = samples[-1]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(_("Power"), _(or_unknown(last.power_w, "{:,.0f} W")))
    m2.metric(_("Temperature"), _(or_unknown(last.temperature_c, "{:.0f} °C")))
    m3.metric(_("SM clock"), _(or_unknown(last.sm_clock_mhz, "{:,.0f} MHz")))
    reasons = [_(reason) for reason in nvml.describe_throttle(last.throttle_mask)]
    m4.metric(_("Clock held back by"), _(", ").join(reasons) if reasons else _("nothing"))
    show_figure(telemetry_figure(samples), key="gpu_tel_fig")
