"""This project's own GPU run, drawn from its committed JSON (core.gpu.output.committed_run): context vs speed
and dense vs experts as measured on a real card, with the sentences computed from the same numbers.

Story shows two pictures, each with a plain caption and the sentences that read it (attention slows with
depth while the fixed state stays flat; dense against MoE, speed and power, and why the MoE is not as fast
as its bytes promise). Engineer adds the full charts (eager lines, rooflines, % of roofline, energy per
token; operations per step beside bytes for a run that counted them), and the sentences with every figure
in place of Story's plainer ones (ui.depth.in_depth), after each picture; the MoE's "why" is read at both
depths.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.figures.gpu import (
    context_speed_figure,
    moe_energy_figure,
    moe_figure,
)
from core.figures.gpu_story import depth_story_figure, moe_story_figure
from core.gpu.output.committed_run import (
    NO_RUN,
    depth_sentence,
    depth_story_sentence,
    load,
    moe_power_sentence,
    moe_power_story,
    moe_why_sentence,
)
from core.gpu.output.report import context_floor_rows, moe_floor_rows
from core.gpu.output.roofline_words import denominator_words
from core.i18n import _
from ui.charts import show_figure
from ui.depth import engineer, in_depth
from ui.gpu.floors import floors_table
from ui.gpu.words import reader_line


def committed_run_panel(predict: Callable[[], None] | None = None) -> None:
    """Both benchmarks of the newest committed run, each picture named with its card, date and sizes;
    `predict` draws the page's predict-before-you-look question just before the first picture."""
    run = load()
    st.subheader(_("Measured by this project on a real GPU"))
    if run is None:
        st.caption(_(NO_RUN))
        if predict is not None:
            predict()
        return
    st.markdown(
        _("Two tests {label}: not your numbers, but the memory wall on a data-centre card.").format(
            label=run.label
        )
    )
    if engineer():
        st.caption(_("The run's file, committed with the course: {source}.").format(source=run.source))
    if predict is not None:
        predict()
    _depth(run)
    _moe(run)


def _depth(run) -> None:
    st.markdown(
        _("**1 · Speed as the text in memory grows, at the `{preset}` sizes**").format(
            preset=run.context.preset
        )
    )
    show_figure(depth_story_figure(run.context), key="gpu_committed_depth_fig")
    st.caption(
        _(
            "Speed as more text sits in memory: blue = full attention (its cache grows), teal = the fixed state "
            "(the same size at any length)."
        )
    )
    if engineer():
        show_figure(
            context_speed_figure(
                run.context,
                _("Context vs speed, {label}: solid lines measured, the roofline dashed").format(
                    label=run.label
                ),
            ),
            key="gpu_committed_context_fig",
        )
        st.caption(denominator_words(run.context))  # what the roofline divides by: a point may pass it
        floors_table(context_floor_rows(run.context), [p for s in run.context.series for p in s.points])
    in_depth(depth_story_sentence(run), depth_sentence(run))  # Engineer: the same numbers, every figure


def _moe(run) -> None:
    st.markdown(
        _("**2 · Dense against experts, at the `{preset}` sizes ({experts}, depth {depth:,})**").format(
            preset=run.moe.preset, experts=reader_line(run.moe.experts), depth=run.moe.depth
        )
    )
    show_figure(moe_story_figure(run.moe), key="gpu_committed_moe_story_fig")
    st.caption(
        _(
            "Left: speed; right: the card's average power. Grey = the dense model (reads all its weights), "
            "orange = the MoE (reads only the experts it wakes)."
        )
    )
    st.markdown(moe_why_sentence(run))
    if engineer():
        st.markdown(
            _("**Dense vs experts, {label} ({experts}, depth {depth:,})**").format(
                label=run.label, experts=reader_line(run.moe.experts), depth=run.moe.depth
            )
        )
        show_figure(moe_figure(run.moe, energy=False), key="gpu_committed_moe_fig")
        show_figure(
            moe_energy_figure(run.moe), key="gpu_committed_energy_fig"
        )  # apart: three panels are too narrow on a phone
        floors_table(moe_floor_rows(run.moe), run.moe.rows)  # runs that counted operations per step
    in_depth(moe_power_story(run), moe_power_sentence(run))  # Engineer: with the speed, bytes and why
