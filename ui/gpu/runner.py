"""The benchmark runner: model size and VRAM budget, Run buttons, a place in line, progress with Stop.

One benchmark runs per server (core.gpu.runner); a reader who presses Run while another runs
joins the line and sees their place. The reader's run token sits in the URL (`?gpu_run=…`)
while they have a run, so a reload takes the run back instead of losing it. In public mode
(core.gpu.public) there are no Run buttons, only the command to run at home.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

import streamlit as st

from core.gpu import jobs, last_run
from core.gpu.jobs import JobResult
from core.gpu.models import preset_summary
from core.gpu.nvml import DeviceSnapshot
from core.gpu.presets import PRESETS, WHOLE_CARD, Preset, budget_options, preset_choices
from core.gpu.public import home_command
from core.gpu.runner import MAX_RUN_S, OWNER_TTL_S, RUNNER, Busy, benchmark_running
from core.gpu.timing import run_dtype

RUN_PARAM = "gpu_run"
_TOKEN = re.compile(r"[0-9a-f]{32}")
METHOD = (
    "Both follow **llama-bench**, the tool local-LLM users trust: fill the memory to a *depth* d (tokens "
    "already read, not timed), take a warm-up step, then time single-token steps — waiting for the device "
    "to finish each one — and repeat; the chart shows the mean ± the spread of the repeats. The models are "
    "small random ones: they move the same bytes a trained model of their shape moves, which is all speed "
    "depends on."
)
METHOD_ON_GPU = (  # depth for engineers, in an expander under METHOD
    "On an NVIDIA GPU each repetition is also replayed as one CUDA graph, as llama.cpp and vLLM run their "
    "decode, so the chart shows the memory wall rather than Python's launch overhead; the eager figure is drawn "
    "beside it. Where a step can run more than one way there — the experts copied out or read where they lie, "
    "the fixed-state update as a dozen small operations or one fused kernel — a short trial keeps the fastest, "
    "as engines pick theirs; the notes under the results say which ran."
)


def method() -> None:
    """How both benchmarks measure: plain words, then the GPU specifics behind an engineers' expander."""
    st.markdown(METHOD)
    with st.expander("How a GPU run is timed (for engineers)", icon=":material/engineering:"):
        st.markdown(METHOD_ON_GPU)


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
    st.subheader("Two benchmarks")
    method()
    choice = _pickers(snapshot, on_gpu)
    RUNNER.seen(owner)
    _collect_finished(owner)
    job = RUNNER.job(owner)
    mine_running = job is not None and not job.done
    waiting = RUNNER.position(owner) is not None
    if runs_off:
        st.error(runs_off, icon=":material/error:")
    elif benchmark_running() and not (mine_running or waiting):
        st.warning(
            "Another benchmark is running on this server right now (one at a time, so timings stay honest). "
            "Press Run to join the line: your run starts by itself when its turn comes."
        )
    if not runs_off:
        mine_running, waiting = _run_buttons(owner, choice, on_gpu, mine_running, waiting)
    # the checkpoint and the one-click run show their progress by their own sections
    if (mine_running or waiting) and busy_with(owner)[0] not in ("checkpoint", "this machine"):
        st.fragment(run_every=0.5)(progress_of(owner))()
    st.caption(
        f"One run takes at most {MAX_RUN_S / 60:.0f} minutes, and stops about {OWNER_TTL_S:.0f} s after you "
        "leave this page; either way it keeps what it measured."
    )
    if st.session_state.get("gpu_stop_note"):
        st.info(st.session_state["gpu_stop_note"], icon=":material/timer_off:")
    if st.session_state.get("gpu_error"):
        st.error(f"The benchmark failed: {st.session_state['gpu_error']}")
    return choice


def busy_with(owner: str) -> tuple[str, bool]:
    """(the label of this reader's run — running, or the last one they asked for —, whether it runs or waits),
    so each section draws the progress of its own runs."""
    job = RUNNER.job(owner)
    running = job is not None and not job.done
    label = job.label if running else st.session_state.get("gpu_submitted", "context")
    return label, running or RUNNER.position(owner) is not None


def public_panel(snapshot: DeviceSnapshot) -> Choice:
    """Public mode: the method, the pickers and the command that measures the reader's own GPU."""
    st.subheader("Two benchmarks, on your own machine")
    method()
    choice = _pickers(snapshot, on_gpu=True)
    st.info(
        "**Nothing is measured on this shared server.** A benchmark here would measure the server, not "
        "your GPU, and make every other reader wait. Run the same benchmarks on your own machine, from a "
        "copy of this course, with the choices above:",
        icon=":material/home:",
    )
    st.code(home_command(choice.preset.name, choice.budget_bytes), language="bash")
    st.caption(
        "It needs only PyTorch (a CUDA build for an NVIDIA GPU) and, for power readings, nvidia-ml-py. "
        "It prints a summary and writes every number to the JSON file. `./run.sh` starts this whole "
        "course on your machine, where this page measures with buttons instead."
    )
    return choice


def _pickers(snapshot: DeviceSnapshot, on_gpu: bool) -> Choice:
    choices, default = preset_choices(on_gpu, snapshot.vram_total_bytes)
    s1, s2 = st.columns(2)
    preset_name = s1.selectbox(
        "Model size",
        choices,
        index=choices.index(default),
        key="gpu_preset",
        # the name only: a long option is cut off in the box on a phone; the description follows below
        help="The size of the two small models the benchmarks build.",
    )
    preset = PRESETS[preset_name]
    s1.caption(f"**{preset.name}:** {preset_summary(preset, run_dtype(on_gpu))}")
    budget_of = budget_options(preset)
    budget_label = s2.select_slider(
        "Pretend my card has",
        list(budget_of),
        value=WHOLE_CARD,
        key=f"gpu_budget_{preset.name}",  # each preset has its own choices
        help="Weights and cache must fit in this much; cache rows past it stay in host memory and are "
        "copied over at every step — what a driver's 'system memory fallback' or an offloaded cache does.",
    )
    return Choice(preset, budget_of[budget_label])


def _collect_finished(owner: str) -> None:
    """Move a finished run's result (or error) into this reader's session, then rerun to show it."""
    job = RUNNER.job(owner)
    if job is None or not job.done:
        return
    st.session_state["gpu_stop_note"] = (
        f"The run stopped early because {job.stop_reason}; what it measured until then is shown."
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
    b1, b2, _ = st.columns([1, 1, 2])
    busy = mine_running or waiting
    run_ctx = b1.button(
        "Run: context vs speed", key="gpu_run_context", type="primary", icon=":material/speed:", disabled=busy
    )
    run_moe = b2.button("Run: dense vs experts", key="gpu_run_moe", icon=":material/bolt:", disabled=busy)
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
        st.error(submitted.message)
        return mine_running, waiting
    st.session_state["gpu_submitted"] = "context" if run_ctx else "moe"
    st.query_params[RUN_PARAM] = owner  # a reload of this URL takes the run back
    st.rerun()  # redraw with the buttons off and the progress (or the place in line) showing


def progress_of(owner: str):
    def draw_progress() -> None:
        RUNNER.seen(owner)  # still here: the run goes on, the place in line is kept
        place = RUNNER.position(owner)
        if place is not None:
            ahead = "one run" if place == 1 else f"{place} runs"
            st.info(
                f"**You are number {place} in line** ({ahead} before yours, counting the one running now). "
                "Your run starts by itself; keep this page open.",
                icon=":material/hourglass_top:",
            )
            if st.button("Leave the line", key="gpu_leave_line", icon=":material/logout:"):
                RUNNER.leave_line(owner)
                st.rerun(scope="app")
            return
        current = RUNNER.job(owner)
        if current is None:
            return
        if current.done:
            st.rerun(scope="app")
        st.progress(current.fraction, text=f"{current.label}: {current.message}")
        if st.button("Stop", key="gpu_stop", icon=":material/stop_circle:"):
            current.stop.set()
            st.caption("Stopping after the current measurement…")

    return draw_progress
