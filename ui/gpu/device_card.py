"""The device card: what the driver says about the reader's GPU, or that there is none."""

from __future__ import annotations

import streamlit as st

from core.gpu.device.nvml import DeviceSnapshot
from core.gpu.output.report import device_rows, or_unknown
from core.gpu.timing.bandwidth import Bandwidth
from core.i18n import _
from core.roofline import host_link_slowdowns
from core.units import format_bytes
from ui.gpu.words import reader_line


def link_words(snapshot: DeviceSnapshot) -> str:
    """How much slower the host link is than this card's memory: this card's own ratio when the
    driver reports both, else the range over the course's cards (core.roofline)."""
    peak, link = snapshot.peak_bandwidth_bytes_per_s, snapshot.pcie_bandwidth_bytes_per_s
    if peak and link:
        return _("on this card it is {times:.0f}× slower than the card's own memory.").format(
            times=peak / link
        )
    slow, slower = host_link_slowdowns()
    return _(
        "on the cards of the course it is {slow:.0f}–{slower:.0f}× slower than the card's own memory."
    ).format(slow=slow, slower=slower)


def device_card(
    snapshot: DeviceSnapshot, cuda: bool, measured_bw: Bandwidth | None, lost: str | None = None
) -> None:
    """Headline metrics from NVML, a CPU notice without a driver (or why the GPU is lost), and every
    field in an expander."""
    st.subheader(_("Your device"))
    if lost and not snapshot.available:
        st.error(_("**The GPU is gone.** {why}").format(why=reader_line(lost)), icon=":material/error:")
    elif not snapshot.available:
        st.info(
            _(
                "**No NVIDIA GPU here.** {reason} The benchmarks below run on this computer's **CPU** "
                "instead: the same models and the same method, smaller sizes, finished in seconds. Power and "
                "energy cannot be read on the CPU, so those columns stay empty."
            ).format(reason=reader_line(snapshot.reason))
        )
    else:
        if not cuda:
            st.warning(
                _(
                    "The NVIDIA driver answers, but this PyTorch was built without CUDA, so the benchmarks run "
                    "on the CPU. Install a CUDA build of PyTorch to measure the GPU itself."
                )
            )
        peak = snapshot.peak_bandwidth_bytes_per_s
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("GPU", snapshot.name or _("unknown"))
        c2.metric(
            _("Memory (VRAM)"),
            _("unknown") if snapshot.vram_total_bytes is None else format_bytes(snapshot.vram_total_bytes),
        )
        c3.metric(
            _("Peak bandwidth"),
            _(or_unknown(None if peak is None else peak / 1e9, "{:,.0f} GB/s")),
            help=_("2 × max memory clock × bus width ÷ 8, from the driver: a spec-sheet estimate."),
        )
        c4.metric(_("Power limit"), _(or_unknown(snapshot.power_limit_w, "{:,.0f} W")))
    with st.expander(
        _("Everything the driver says") if snapshot.available else _("What this machine measured"),
        expanded=not snapshot.available and measured_bw is not None,
    ):
        if snapshot.available or measured_bw is not None:
            st.table(device_rows(snapshot, measured_bw), hide_index=True, border="horizontal")
        else:
            st.caption(
                _(
                    "Nothing to show without an NVIDIA driver; run a benchmark to measure this machine's copy speed."
                )
            )
        if snapshot.available:
            st.caption(
                _(
                    "*Bandwidth* is how many bytes per second the memory can deliver. The *PCIe link* joins the "
                    "card to the rest of the computer; {link} Fields the driver "
                    "will not report (common on laptop cards) show as 'unknown'."
                ).format(link=link_words(snapshot))
            )
        else:
            st.caption(
                _(
                    "*Bandwidth* is how many bytes per second the memory can deliver; the copy speed measured here "
                    "is the B in the roofline below."
                )
            )
