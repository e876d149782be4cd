"""'Measure this machine': the page's one button — decode tokens/s against context on this computer, beside
the roofline of its measured copy speed — and the roofline worked by hand with the reader's own numbers
(core.gpu.output.worked_example): the copies' spread behind its bandwidth (Engineer depth), and where the time
over the ceiling goes, computed from the empty-cache step.

Without an NVIDIA GPU it times the CPU sizes on the CPU, capped at a minute (core.gpu.serving.jobs.quick_benchmark);
on a GPU it times the card's own sizes on the card (jobs.context_benchmark, the runner's limit). It goes through
the same one-benchmark-per-machine runner and line as every other run (core.gpu.serving.runner) and lands in the
same session slot as "Run: context vs speed", so section 1 below (Engineer depth) shows its table.
"""

from __future__ import annotations

import streamlit as st

from core.figures.gpu import context_speed_figure
from core.figures.gpu_story import depth_story_figure
from core.gpu.output.device_name import shown_device
from core.gpu.output.worked_example import overhead, worked_example
from core.gpu.presets import PRESETS
from core.gpu.serving import jobs
from core.gpu.serving.runner import MAX_RUN_S, RUNNER, Busy
from core.gpu.suites.context_bench import ContextResult
from core.i18n import _
from ui.charts import show_figure
from ui.depth import engineer
from ui.gpu.results import stored_caption
from ui.gpu.runner import RUN_PARAM, busy_with, progress_of, run_button
from ui.gpu.words import reader_line

LABEL = "this machine"  # the runner's label for the one-click run


def this_machine_panel(
    owner: str, runs_off: str | None = None, gpu_preset: str | None = None
) -> ContextResult | None:
    """The button, its progress, then the measured curve and the worked example (the reader's numbers).
    `gpu_preset`: the sizes to time on this machine's NVIDIA GPU; None times the CPU sizes on the CPU."""
    st.subheader(_("Measure this machine"))
    preset = PRESETS[gpu_preset or jobs.QUICK_PRESET]
    st.markdown(
        _(
            "One click times two small models at the `{preset}` sizes on this computer — one with full attention, "
            "whose cache grows with every token, and one with a fixed-size state — and draws each beside its "
            "**roofline**: the fastest it could go if all it did was read its bytes."
        ).format(preset=preset.name)
    )
    if engineer():
        st.caption(_method(preset, gpu_preset))
    if not engineer():  # Engineer reads these in the benchmark panel below
        _status(runs_off)
    label, busy = busy_with(owner)
    pressed = run_button(_("Measure this machine"), "gpu_measure_this", ":material/memory:", busy, runs_off)
    if pressed:
        _submit(owner, gpu_preset)
    if busy and label == LABEL:
        st.fragment(run_every=0.5)(progress_of(owner))()
    result: ContextResult | None = st.session_state.get("gpu_context")
    if result is None:
        st.caption(_("Nothing measured on this machine yet: the chart and your worked example appear here."))
        return None
    stored_caption(result)  # a stored run from an earlier visit says so, with its date
    show_figure(
        depth_story_figure(
            result,
            roofline=True,
            title=_("Measured on {device}, at the '{preset}' sizes").format(
                device=shown_device(result.device), preset=result.preset
            ),
        ),
        key="gpu_this_story_fig",
    )
    st.caption(
        _(
            "Solid = what this machine wrote, dashed = the fastest its memory allows (the roofline); "
            "blue = full attention, teal = the fixed state."
        )
    )
    if engineer():
        show_figure(
            context_speed_figure(
                result,
                _(
                    "Measured on {device} at the '{preset}' sizes: solid lines measured, the roofline dashed"
                ).format(device=shown_device(result.device), preset=result.preset),
            ),
            key="gpu_this_fig",
        )
    _worked(result)
    return result


def _method(preset, gpu_preset: str | None) -> str:
    """For engineers: where the one click runs, at how many depths, the bandwidth its roofline uses, the batch
    sweep that follows and how long it may take."""
    batches = _listed(jobs.batch_plan(preset, bool(gpu_preset)).batches)
    if gpu_preset:
        return _(
            "On this computer's GPU, at {depths} depths; the roofline uses the copy speed this card measures "
            "first. The same click then times both again with {batches} conversations at once (section 1 below "
            "shows that sweep). A few minutes; never more than {minutes:.0f} minutes."
        ).format(depths=len(preset.depths), batches=batches, minutes=MAX_RUN_S / 60)
    return _(
        "No NVIDIA card is needed for the memory wall: this runs on the CPU, at {depths} depths; the roofline uses "
        "the copy speed this machine measures first. The same click then times both again with {batches} "
        "conversations at once (section 1 below shows that sweep). A few seconds; never more than {limit:.0f} s."
    ).format(depths=len(preset.depths), batches=batches, limit=jobs.QUICK_LIMIT_S)


def _status(runs_off: str | None) -> None:
    """Why the button is off, why the last run failed, or why it stopped early — in Story, where there is no
    benchmark panel to say so."""
    if runs_off:
        st.error(reader_line(runs_off), icon=":material/error:")
    if st.session_state.get("gpu_stop_note"):
        st.info(st.session_state["gpu_stop_note"], icon=":material/timer_off:")
    if st.session_state.get("gpu_error"):
        st.error(_("The benchmark failed: {error}").format(error=st.session_state["gpu_error"]))


def _submit(owner: str, gpu_preset: str | None) -> None:
    """Put this reader's one-click run in line: the CPU sizes on the CPU, or the card's sizes on the card."""
    if gpu_preset:
        submitted = RUNNER.submit(
            owner, LABEL, jobs.context_benchmark, preset_name=gpu_preset, budget_bytes=None, device="cuda"
        )
    else:
        submitted = RUNNER.submit(owner, LABEL, jobs.quick_benchmark)
    if isinstance(submitted, Busy):
        st.error(reader_line(submitted.message))
        return
    st.session_state["gpu_submitted"] = LABEL
    st.query_params[RUN_PARAM] = owner  # a reload of this URL takes the run back
    st.rerun()


def _worked(result: ContextResult) -> None:
    """The division with the reader's numbers; at Engineer depth, the spread of the copies behind its
    bandwidth and the same numbers as one line; then where the time over the ceiling goes (computed)."""
    example = worked_example(result)
    if example is None:
        return
    st.markdown(_("**Your worked example: bandwidth ÷ bytes per token = tokens per second**"))
    st.markdown(example.sentence())
    if engineer():  # how the bandwidth was measured, and the same numbers as one line of arithmetic
        spread = example.spread_sentence()
        if spread:
            st.caption(spread)
        st.markdown(
            _("With your numbers: **{division}**; measured: **{measured:,.1f}**.").format(
                division=example.division(), measured=example.measured_tokens_per_s
            )
        )
    split = overhead(result, example)  # where the time over the ceiling goes: Engineer gets the numbers
    if split is not None:
        st.caption(split.sentence() if engineer() else split.short_sentence())


def _listed(numbers: tuple[int, ...]) -> str:
    """(1, 4, 16) → '1, 4 and 16'."""
    words = [str(n) for n in numbers]
    if len(words) < 2:
        return "".join(words)
    return _("{first} and {last}").format(first=_(", ").join(words[:-1]), last=words[-1])
