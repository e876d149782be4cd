"""The benchmark runner: model size and VRAM budget, Run buttons, a place in line, progress with Stop.

One benchmark runs per server (core.gpu.serving.runner); a reader who presses Run while another runs
joins the line and sees their place. The reader's run token sits in the URL (`?gpu_run=…`)
while they have a run, so a reload takes the run back instead of losing it. In public mode
(core/public.py) there are no Run buttons, only the command to run at home.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

import streamlit as st

from core.gpu.decode.models import preset_summary
from core.gpu.device.nvml import DeviceSnapshot
from core.gpu.presets import PRESETS, WHOLE_CARD, Preset, budget_options, preset_choices
from core.gpu.serving import jobs, last_run
from core.gpu.serving.jobs import JobResult
from core.gpu.serving.public import home_command
from core.gpu.serving.runner import MAX_RUN_S, OWNER_TTL_S, RUNNER, Busy, benchmark_running
from core.gpu.timing.precision import run_dtype
from core.i18n import N_, _, language, ngettext
from ui.depth import engineer, engineer_section
from ui.gpu.words import reader_line

RUN_PARAM = "gpu_run"
RUN_LABELS = (N_("context"), N_("moe"), N_("checkpoint"), N_("this machine"))  # the runner's labels, as shown
_TOKEN = re.compile(r"[0-9a-f]{32}")
METHOD = N_(
    "Both follow **llama-bench**, the tool local-LLM users trust: fill the memory to a *depth* d (tokens "
    "already read, not timed), take a warm-up step, then time single-token steps — waiting for the device "
    "to finish each one — and repeat; the chart shows the mean ± the spread of the repeats. The models are "
    "small random ones: they move the same bytes a trained model of their shape moves, which is all speed "
    "depends on."
)
METHOD_ON_GPU = N_(  # depth for engineers, in an expander under METHOD
    "On an NVIDIA GPU each repetition is also replayed as one CUDA graph, as llama.cpp and vLLM run their "
    "decode, so the chart shows the memory wall rather than Python's launch overhead; the eager figure is drawn "
    "beside it. Where a step can run more than one way there — the experts copied out or read where they lie, "
    "the fixed-state update as a dozen small operations or one fused kernel — a short trial keeps the fastest, "
    "as engines pick theirs; the notes under the results say which ran."
)


def method() -> None:
    """How both benchmarks measure: plain words, then the GPU specifics behind an engineers' expander."""
    st.markdown(_(METHOD))
    if engineer_section(_("How a GPU run is timed (for engineers)")):
        st.markdown(_(METHOD_ON_GPU))


@dataclass(frozen=True)
class Choice:
    """What the reader picked: a preset, and a pretend VRAM budget in bytes (None: the whole card)."""

    preset: Preset
    budget_bytes: int | None


def run_token() -> str:
    """This reader's owner token: the one in the URL when it names a run this server knows (a reload),
    else the session's own."""
    token = st.query_params.get(RUN_PARAM)
    if token and _TOKEN.fullmatch(token) and RUNNER.knows(token):
        st.session_state["gpu_owner"] = token
    elif token:
        del st.query_params[RUN_PARAM]  # a finished or unknown run: nothing to take back
    return st.session_state.setdefault("gpu_owner", uuid.uuid4().hex)


def benchmark_panel(
    owner: str, snapshot: DeviceSnapshot, on_gpu: bool, runs_off: str | None = None
) -> Choice:
    """The method in words, the two pickers, the Run buttons (none while `runs_off` says why), the
    reader's place in line and their running job."""
    st.subheader(_("Two benchmarks"))
    method()
    choice = _pickers(snapshot, on_gpu)
    collect(owner)
    job = RUNNER.job(owner)
    mine_running = job is not None and not job.done
    waiting = RUNNER.position(owner) is not None
    if runs_off:
        st.error(reader_line(runs_off), icon=":material/error:")
    elif benchmark_running() and not (mine_running or waiting):
        st.warning(
            _(
                "Another benchmark is running on this server right now (one at a time, so timings stay honest). "
                "Press Run to join the line: your run starts by itself when its turn comes."
            )
        )
    if not runs_off:
        mine_running, waiting = _run_buttons(owner, choice, on_gpu, mine_running, waiting)
    # the checkpoint and the one-click run show their progress by their own sections
    if (mine_running or waiting) and busy_with(owner)[0] not in ("checkpoint", "this machine"):
        st.fragment(run_every=0.5)(progress_of(owner))()
    st.caption(
        _(
            "One run takes at most {minutes:.0f} minutes, and stops about {seconds:.0f} s after you "
            "leave this page; either way it keeps what it measured."
        ).format(minutes=MAX_RUN_S / 60, seconds=OWNER_TTL_S)
    )
    if st.session_state.get("gpu_stop_note"):
        st.info(st.session_state["gpu_stop_note"], icon=":material/timer_off:")
    if st.session_state.get("gpu_error"):
        st.error(_("The benchmark failed: {error}").format(error=st.session_state["gpu_error"]))
    return choice


def collect(owner: str) -> None:
    """Say this reader is still here, and take their finished run (if any) into their session. Every page
    run calls it — Story has no benchmark panel, but its one button runs through the same runner."""
    RUNNER.seen(owner)
    _collect_finished(owner)


def busy_with(owner: str) -> tuple[str, bool]:
    """(the label of this reader's run — running, or the last one they asked for —, whether it runs or waits),
    so each section draws the progress of its own runs."""
    job = RUNNER.job(owner)
    running = job is not None and not job.done
    label = job.label if running else st.session_state.get("gpu_submitted", "context")
    return label, running or RUNNER.position(owner) is not None


def public_panel(snapshot: DeviceSnapshot) -> Choice:
    """Public mode: the method, the pickers and the command that measures the reader's own GPU."""
    st.subheader(_("Two benchmarks, on your own machine"))
    st.info(
        _(
            "**Nothing is measured on this shared server.** A benchmark here would measure the server, not "
            "your GPU, and make every other reader wait. Run the two tests on your own machine, from a "
            "copy of this course:"
        ),
        icon=":material/home:",
    )
    if engineer():  # the method and the choices; the command below follows them
        method()
        choice = _pickers(snapshot, on_gpu=True)
    else:
        choices, default = preset_choices(True, snapshot.vram_total_bytes)
        choice = Choice(PRESETS[default], None)
    st.code(home_command(choice.preset.name, choice.budget_bytes), language="bash")
    if engineer():
        st.caption(
            _(
                "It needs only PyTorch (a CUDA build for an NVIDIA GPU) and, for power readings, nvidia-ml-py. "
                "It prints a summary and writes every number to the JSON file. `./run.sh` starts this whole "
                "course on your machine, where this page measures with buttons instead."
            )
        )
    return choice


def _pickers(snapshot: DeviceSnapshot, on_gpu: bool) -> Choice:
    choices, default = preset_choices(on_gpu, snapshot.vram_total_bytes)
    s1, s2 = st.columns(2)
    preset_name = s1.selectbox(
        _("Model size"),
        choices,
        index=choices.index(default),
        key="gpu_preset",
        # the name only: a long option is cut off in the box on a phone; the description follows below
        help=_("The size of the two small models the benchmarks build."),
    )
    preset = PRESETS[preset_name]
    s1.caption(f"**{preset.name}:** {reader_line(preset_summary(preset, run_dtype(on_gpu)))}")
    budget_of = {_(label): size for label, size in budget_options(preset).items()}  # sizes stay as they are
    budget_label = s2.select_slider(
        _("Pretend my card has"),
        list(budget_of),
        value=_(WHOLE_CARD),
        # each preset has its own choices, and each language its own words for the whole card
        key=f"gpu_budget_{preset.name}" + ("" if language() == "en" else f"_{language()}"),
        help=_(
            "Weights and cache must fit in this much; cache rows past it stay in host memory and are "
            "copied over at every step — what a driver's 'system memory fallback' or an offloaded cache does."
        ),
    )
    return Choice(preset, budget_of[budget_label])


def _collect_finished(owner: str) -> None:
    """Move a finished run's result (or error) into this reader's session, then rerun to show it."""
    job = RUNNER.job(owner)
    if job is None or not job.done:
        return
    st.session_state["gpu_stop_note"] = (
        _("The run stopped early because {reason}; what it measured until then is shown.").format(
            reason=reader_line(job.stop_reason)
        )
        if job.stop_reason
        else None
    )
    if job.error and job.label == "checkpoint":  # shown by its own section, in one line
        st.session_state["gpu_ckpt_error"] = job.error.removeprefix("CheckpointError: ")
    elif job.error:
        st.session_state["gpu_error"] = job.error
    elif job.result is not None:
        result: JobResult = job.result
        st.session_state["gpu_error"] = None
        st.session_state["gpu_bandwidth"] = result.bandwidth
        if result.context is not None:
            st.session_state["gpu_context"] = result.context
            st.session_state["gpu_batch"] = result.batch  # the batch sweep of this run, or none
        if result.moe is not None:
            st.session_state["gpu_moe"] = result.moe
        if result.checkpoint is not None:
            st.session_state["gpu_checkpoint"] = result.checkpoint
            st.session_state["gpu_ckpt_error"] = None
        else:
            st.session_state["gpu_stored_run"] = None  # what is shown now was measured in this session
            if not (result.context and result.context.stopped) and not (result.moe and result.moe.stopped):
                last_run.save(result.context, result.moe, result.batch)
    RUNNER.forget(owner)
    if st.query_params.get(RUN_PARAM) == owner:
        del st.query_params[RUN_PARAM]
    st.rerun()


def _run_buttons(
    owner: str, choice: Choice, on_gpu: bool, mine_running: bool, waiting: bool
) -> tuple[bool, bool]:
    """Submit a run when a button is pressed (then redraw); says whether this reader has one running, or waiting."""
    b1, b2, _spare = st.columns([1, 1, 2])
    busy = mine_running or waiting
    run_ctx = run_button(_("Run: context vs speed"), "gpu_run_context", ":material/speed:", busy, where=b1)
    run_moe = b2.button(_("Run: dense vs experts"), key="gpu_run_moe", icon=":material/bolt:", disabled=busy)
    if not (run_ctx or run_moe):
        return mine_running, waiting
    device = "cuda" if on_gpu else "cpu"
    name = choice.preset.name
    if run_ctx:
        submitted = RUNNER.submit(
            owner,
            "context",
            jobs.context_benchmark,
            preset_name=name,
            budget_bytes=choice.budget_bytes,
            device=device,
        )
    else:
        submitted = RUNNER.submit(owner, "moe", jobs.moe_benchmark, preset_name=name, device=device)
    if isinstance(submitted, Busy):
        st.error(reader_line(submitted.message))
        return mine_running, waiting
    st.session_state["gpu_submitted"] = "context" if run_ctx else "moe"
    st.query_params[RUN_PARAM] = owner  # a reload of this URL takes the run back
    st.rerun()  # redraw with the buttons off and the progress (or the place in line) showing


def run_button(text: str, key: str, icon: str, busy: bool, runs_off: str | None = None, where=st) -> bool:
    """A benchmark's primary Run button (in `where`, a column or the page): off while this reader's run goes
    or waits, and while runs are off on this machine; True when pressed."""
    return where.button(text, key=key, type="primary", icon=icon, disabled=bool(busy or runs_off))


def progress_of(owner: str):
    def draw_progress() -> None:
        RUNNER.seen(owner)  # still here: the run goes on, the place in line is kept
        place = RUNNER.position(owner)
        if place is not None:
            st.info(
                ngettext(
                    "**You are number {place} in line** (one run before yours, counting the one running now). "
                    "Your run starts by itself; keep this page open.",
                    "**You are number {place} in line** ({place} runs before yours, counting the one running now). "
                    "Your run starts by itself; keep this page open.",
                    place,
                ).format(place=place),
                icon=":material/hourglass_top:",
            )
            if st.button(_("Leave the line"), key="gpu_leave_line", icon=":material/logout:"):
                RUNNER.leave_line(owner)
                st.rerun(scope="app")
            return
        current = RUNNER.job(owner)
        if current is None:
            return
        if current.done:
            st.rerun(scope="app")
        st.progress(
            current.fraction,
            text=_("{run}: {status}").format(run=_(current.label), status=reader_line(current.message)),
        )
        if st.button(_("Stop"), key="gpu_stop", icon=":material/stop_circle:"):
            current.stop.set()
            st.caption(_("Stopping after the current measurement…"))

    return draw_progress
