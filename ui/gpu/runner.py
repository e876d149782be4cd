"""The benchmark runner: model size and VRAM budget, Run buttons, progress with Stop, one run per server."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.gpu import jobs, last_run
from core.gpu.jobs import JobResult
from core.gpu.nvml import DeviceSnapshot
from core.gpu.presets import PRESETS, WHOLE_CARD, Preset, budget_options, preset_choices
from core.gpu.runner import BUSY_MESSAGE, RUNNER, Busy, benchmark_running


@dataclass(frozen=True)
class Choice:
    """What the reader picked: a preset, and a pretend VRAM budget in bytes (None: the whole card)."""

    preset: Preset
    budget_bytes: int | None


def benchmark_panel(owner: str, snapshot: DeviceSnapshot, on_gpu: bool) -> Choice:
    """The method in words, the two pickers, the Run buttons and the reader's running job."""
    st.subheader("Two benchmarks")
    st.markdown(
        "Both follow **llama-bench**, the tool local-LLM users trust: fill the memory to a *depth* d (tokens "
        "already read, not timed), take a warm-up step, then time single-token steps — waiting for the device "
        "to finish each one — and repeat; the chart shows the mean ± the spread of the repeats. The models are "
        "small random ones: they move the same bytes a trained model of their shape moves, which is all speed "
        "depends on. On an NVIDIA GPU each repetition is also replayed as one CUDA graph, as llama.cpp and vLLM "
        "run their decode, so the chart shows the memory wall rather than Python's launch overhead; the eager "
        "figure is drawn beside it."
    )
    choice = _pickers(snapshot, on_gpu)
    _collect_finished(owner)
    job = RUNNER.job(owner)
    mine_running = job is not None and not job.done
    if benchmark_running() and not mine_running:
        st.warning(BUSY_MESSAGE + " (One benchmark runs at a time per server, so timings stay honest.)")
    mine_running = _run_buttons(owner, choice, on_gpu, mine_running)
    if mine_running:
        st.fragment(run_every=0.5)(_progress_of(owner))()
    if st.session_state.get("gpu_error"):
        st.error(f"The benchmark failed: {st.session_state['gpu_error']}")
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
    s1.caption(f"**{preset.name}:** {preset.description}")
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
    if job.error:
        st.session_state["gpu_error"] = job.error
    elif job.result is not None:
        result: JobResult = job.result
        st.session_state["gpu_error"] = None
        st.session_state["gpu_bandwidth"] = result.bandwidth
        if result.context is not None:
            st.session_state["gpu_context"] = result.context
        if result.moe is not None:
            st.session_state["gpu_moe"] = result.moe
        st.session_state["gpu_stored_run"] = None  # what is shown now was measured in this session
        if not (result.context and result.context.stopped) and not (result.moe and result.moe.stopped):
            last_run.save(result.context, result.moe)
    RUNNER.forget(owner)
    st.rerun()


def _run_buttons(owner: str, choice: Choice, on_gpu: bool, mine_running: bool) -> bool:
    """Submit a run when a button is pressed; says whether this reader now has one running."""
    b1, b2, _ = st.columns([1, 1, 2])
    run_ctx = b1.button(
        "Run: context vs speed",
        key="gpu_run_context",
        type="primary",
        icon=":material/speed:",
        disabled=mine_running,
    )
    run_moe = b2.button(
        "Run: dense vs experts", key="gpu_run_moe", icon=":material/bolt:", disabled=mine_running
    )
    if not (run_ctx or run_moe):
        return mine_running
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
        st.warning(submitted.message)
        return mine_running
    return True


def _progress_of(owner: str):
    def draw_progress() -> None:
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
