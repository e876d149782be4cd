"""'Measure this machine': the one-click CPU measurement that opens the page where there is no NVIDIA
GPU — decode tokens/s against context on this computer, beside the roofline of its measured copy
speed — and the roofline worked by hand with the reader's own numbers (core.gpu.output.worked_example).

It goes through the same one-benchmark-per-machine runner and line as every other run
(core.gpu.serving.runner), is capped at a minute (core.gpu.serving.jobs.quick_benchmark), and lands in the same
session slot as "Run: context vs speed", so section 1 below shows its table.
"""

from __future__ import annotations

import streamlit as st

from core.figures.gpu import context_speed_figure
from core.gpu.output.worked_example import worked_example
from core.gpu.presets import PRESETS
from core.gpu.serving import jobs
from core.gpu.serving.runner import RUNNER, Busy
from core.gpu.suites.context_bench import ContextResult
from core.i18n import _
from ui.gpu.results import stored_caption
from ui.gpu.runner import RUN_PARAM, busy_with, progress_of
from ui.gpu.words import reader_line
from ui.lesson import show_figure

LABEL = "this machine"  # the runner's label for the one-click run


def this_machine_panel(owner: str, runs_off: str | None = None) -> ContextResult | None:
    """The button, its progress, then the measured curve and the worked example (the reader's numbers)."""
    st.subheader(_("Measure this machine"))
    st.markdown(
        _(
            "No NVIDIA card is needed for the memory wall. One click times two small models on this computer's "
            "CPU — one with full attention, whose cache grows with every token, and one with a fixed-size state — "
            "at {depths} depths, and draws each beside its **roofline**: the "
            "fastest a step can be when all it does is read its bytes at the copy speed this machine measures "
            "first; then both again with {batches} conversations at once. A few seconds; never "
            "more than {limit:.0f} s."
        ).format(
            depths=len(PRESETS[jobs.QUICK_PRESET].depths),
            batches=_listed(jobs.CPU_BATCHES),
            limit=jobs.QUICK_LIMIT_S,
        )
    )
    label, busy = busy_with(owner)
    pressed = st.button(
        _("Measure this machine"),
        key="gpu_measure_this",
        type="primary",
        icon=":material/memory:",
        disabled=bool(busy or runs_off),
    )
    if pressed:
        submitted = RUNNER.submit(owner, LABEL, jobs.quick_benchmark)
        if isinstance(submitted, Busy):
            st.error(reader_line(submitted.message))
        else:
            st.session_state["gpu_submitted"] = LABEL
            st.query_params[RUN_PARAM] = owner  # a reload of this URL takes the run back
            st.rerun()
    if busy and label == LABEL:
        st.fragment(run_every=0.5)(progress_of(owner))()
    result: ContextResult | None = st.session_state.get("gpu_context")
    if result is None:
        st.caption(_("Nothing measured on this machine yet: the chart and your worked example appear here."))
        return None
    stored_caption(result)  # a stored run from an earlier visit says so, with its date
    show_figure(
        context_speed_figure(
            result,
            _("Measured on {device}: solid lines measured, the roofline dashed").format(device=result.device),
        ),
        key="gpu_this_fig",
    )
    _worked(result)
    return result


def _worked(result: ContextResult) -> None:
    example = worked_example(result)
    if example is None:
        return
    st.markdown(_("**Your worked example: bandwidth ÷ bytes per token = tokens per second**"))
    st.markdown(example.sentence())
    st.markdown(
        _("With your numbers: **{division}**; measured: **{measured:,.1f}**.").format(
            division=example.division(), measured=example.measured_tokens_per_s
        )
    )
    st.caption(
        _(
            "The rest of the time goes to work that is not reading memory — on a CPU mostly Python and the "
            "launch of many small operations — which is why a small model lands below its ceiling."
        )
    )


def _listed(numbers: tuple[int, ...]) -> str:
    """(1, 4, 16) → '1, 4 and 16'."""
    words = [str(n) for n in numbers]
    if len(words) < 2:
        return "".join(words)
    return _("{first} and {last}").format(first=_(", ").join(words[:-1]), last=words[-1])
