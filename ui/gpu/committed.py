"""This project's own GPU run, drawn from its committed JSON (core.gpu.output.committed_run): context vs speed
and dense vs experts as measured on a real card, with the sentences computed from the same numbers."""

from __future__ import annotations

import streamlit as st

from core.figures.gpu import context_speed_figure, moe_energy_figure, moe_figure
from core.gpu.output.committed_run import NO_RUN, depth_sentence, load, moe_power_sentence
from core.i18n import _
from ui.gpu.words import reader_line
from ui.lesson import show_figure


def committed_run_panel() -> None:
    """Both benchmarks of the newest committed run, each chart named with its card and date."""
    run = load()
    st.subheader(_("Measured by this project on a real GPU"))
    if run is None:
        st.caption(_(NO_RUN))
        return
    st.markdown(
        _(
            "The same two benchmarks, at the `{preset}` sizes, {label} and committed with the "
            "course ({source}). These are not your numbers: they show what the memory wall looks like on a "
            "data-centre card."
        ).format(preset=run.context.preset, label=run.label, source=run.source)
    )
    show_figure(
        context_speed_figure(
            run.context,
            _("Context vs speed, {label}: solid lines measured, the roofline dashed").format(label=run.label),
        ),
        key="gpu_committed_context_fig",
    )
    st.markdown(depth_sentence(run))
    st.markdown(
        _("**Dense vs experts, {label} ({experts}, depth {depth:,})**").format(
            label=run.label, experts=reader_line(run.moe.experts), depth=run.moe.depth
        )
    )
    show_figure(moe_figure(run.moe, energy=False), key="gpu_committed_moe_fig")
    show_figure(
        moe_energy_figure(run.moe), key="gpu_committed_energy_fig"
    )  # apart: three panels are too narrow on a phone
    st.markdown(moe_power_sentence(run))
