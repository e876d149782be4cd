"""Lesson 10 · Your GPU: measure the memory wall and the power bill on your own card."""

from __future__ import annotations

import uuid

import streamlit as st
import torch

from core.figures.gpu import context_speed_figure, moe_figure, prediction_figure, telemetry_figure
from core.figures.style import format_bytes
from core.gpu import jobs, nvml
from core.gpu.context_bench import ContextResult, predict_context
from core.gpu.energy import EnergyMeter
from core.gpu.export import to_csv, to_json, versions
from core.gpu.models import PRESETS, AttentionDecoder, StateDecoder, preset_for_vram
from core.gpu.moe_bench import MoeResult
from core.gpu.published import published_rows
from core.gpu.report import context_rows, device_rows, moe_rows, yours_rows
from core.gpu.runner import BUSY_MESSAGE, RUNNER, Busy, benchmark_running
from core.gpu.sampler import Sampler
from core.gpu.timing import Bandwidth, time_decode
from core.roofline import CARDS, DEFAULT_CARD
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, show_figure, still_missing

lesson_header(10)
problem(
    "Lessons 2–9 argued from arithmetic: a growing KV cache must be read at every step, a fixed board "
    "need not, and an MoE reads only the experts it wakes. Arithmetic is a promise, not a measurement. "
    "This page runs the same kinds of models **on your machine** and compares what happens with what "
    "the memory traffic predicts."
)

owner = st.session_state.setdefault("gpu_owner", uuid.uuid4().hex)
snapshot = nvml.probe()
cuda = torch.cuda.is_available()
on_gpu = snapshot.available and cuda

# ---------------------------------------------------------------------------------------------- device card
st.subheader("Your device")
if not snapshot.available:
    st.info(
        f"**No NVIDIA GPU here.** {snapshot.reason} The benchmarks below run on this computer's **CPU** "
        "instead: the same models and the same method, smaller sizes, finished in seconds. Power and "
        "energy cannot be read on the CPU, so those columns stay empty."
    )
else:
    if not cuda:
        st.warning(
            "The NVIDIA driver answers, but this PyTorch was built without CUDA, so the benchmarks run on "
            "the CPU. Install a CUDA build of PyTorch to measure the GPU itself."
        )
    peak = snapshot.peak_bandwidth_bytes_per_s
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("GPU", snapshot.name or "unknown")
    c2.metric(
        "Memory (VRAM)",
        "unknown" if snapshot.vram_total_bytes is None else format_bytes(snapshot.vram_total_bytes),
    )
    c3.metric(
        "Peak bandwidth",
        "unknown" if peak is None else f"{peak / 1e9:,.0f} GB/s",
        help="2 × max memory clock × bus width ÷ 8, from the driver: a spec-sheet estimate.",
    )
    c4.metric(
        "Power limit", "unknown" if snapshot.power_limit_w is None else f"{snapshot.power_limit_w:,.0f} W"
    )
measured_bw = st.session_state.get("gpu_bandwidth")
with st.expander(
    "Everything the driver says" if snapshot.available else "What this machine measured",
    expanded=not snapshot.available and measured_bw is not None,
):
    if snapshot.available or measured_bw is not None:
        st.table(device_rows(snapshot, measured_bw), hide_index=True, border="horizontal")
    else:
        st.caption(
            "Nothing to show without an NVIDIA driver; run a benchmark to measure this machine's copy speed."
        )
    if snapshot.available:
        st.caption(
            "*Bandwidth* is how many bytes per second the memory can deliver. The *PCIe link* joins the card to "
            "the rest of the computer; it is 10–60× slower than the card's own memory. Fields the driver will "
            "not report (common on laptop cards) show as 'unknown'."
        )
    else:
        st.caption(
            "*Bandwidth* is how many bytes per second the memory can deliver; the copy speed measured here is "
            "the B in the roofline below."
        )

# ---------------------------------------------------------------------------------------------- telemetry
if snapshot.available:
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
        gpu = nvml.open_gpu()
        if isinstance(gpu, nvml.NvmlGpu):
            old_gpu = st.session_state.get("gpu_tel_handle")
            if old_gpu is not None:
                old_gpu.close()
            sampler = Sampler(gpu.sample, interval_s=1.0, maxlen=300, max_readings=900)  # 15 minutes at most
            sampler.start()
            st.session_state["gpu_sampler"], st.session_state["gpu_tel_handle"] = sampler, gpu
        else:
            st.error(gpu.reason)
    if t2.button(
        "Stop", key="gpu_tel_stop", icon=":material/stop:", disabled=sampler is None or not sampler.running
    ):
        sampler.stop()
        st.session_state.pop("gpu_tel_handle").close()

    def draw_telemetry() -> None:
        samples = sampler.snapshot() if sampler is not None else []
        if not samples:
            st.caption("Press Start to watch the card.")
            return
        last = samples[-1]
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("Power", "unknown" if last.power_w is None else f"{last.power_w:,.0f} W")
        m2.metric("Temperature", "unknown" if last.temperature_c is None else f"{last.temperature_c:.0f} °C")
        m3.metric("SM clock", "unknown" if last.sm_clock_mhz is None else f"{last.sm_clock_mhz:,.0f} MHz")
        reasons = nvml.describe_throttle(last.throttle_mask)
        m4.metric("Clock held back by", ", ".join(reasons) if reasons else "nothing")
        show_figure(telemetry_figure(samples), key="gpu_tel_fig")

    if sampler is not None and sampler.running:
        st.fragment(run_every=1.0)(draw_telemetry)()
    else:
        draw_telemetry()

# ---------------------------------------------------------------------------------------------- benchmarks
st.subheader("Two benchmarks")
st.markdown(
    "Both follow **llama-bench**, the tool local-LLM users trust: fill the memory to a *depth* d (tokens already "
    "read, not timed), take a warm-up step, then time single-token steps — waiting for the device to finish "
    "each one — and repeat; the chart shows the mean ± the spread of the repeats. The models are small random "
    "ones: they move the same bytes a trained model of their shape moves, which is all speed depends on."
)
if on_gpu:
    choices = ["small", "large", "tiny"]
    default = preset_for_vram(snapshot.vram_total_bytes)
else:
    choices, default = ["cpu", "tiny"], "cpu"
s1, s2 = st.columns(2)
preset_name = s1.selectbox(
    "Model size",
    choices,
    index=choices.index(default),
    key="gpu_preset",
    format_func=lambda n: f"{n} — {PRESETS[n].description}",
)
preset = PRESETS[preset_name]
budget_of = {format_bytes(b): b for b in preset.budget_choices} | {"all its memory": None}  # small → all
budget_label = s2.select_slider(
    "Pretend my card has",
    list(budget_of),
    value="all its memory",
    key=f"gpu_budget_{preset.name}",  # each preset has its own choices
    help="Weights and cache must fit in this much; cache rows past it stay in host memory and are "
    "copied over at every step — what a driver's 'system memory fallback' or an offloaded cache does.",
)
budget = budget_of[budget_label]

job = RUNNER.job(owner)
if job is not None and job.done:  # collect a finished run into this reader's state
    if job.error:
        st.session_state["gpu_error"] = job.error
    elif job.result is not None:
        st.session_state["gpu_error"] = None
        st.session_state["gpu_bandwidth"] = job.result["bandwidth"]
        key = "gpu_context" if "context" in job.result else "gpu_moe"
        st.session_state[key] = job.result["context" if key == "gpu_context" else "moe"]
    RUNNER.forget(owner)
    job = None
    st.rerun()

mine_running = job is not None and not job.done
others_running = benchmark_running() and not mine_running
if others_running:
    st.warning(BUSY_MESSAGE + " (One benchmark runs at a time per server, so timings stay honest.)")

b1, b2, _ = st.columns([1, 1, 2])
run_ctx = b1.button(
    "Run: context vs speed",
    key="gpu_run_context",
    type="primary",
    icon=":material/speed:",
    disabled=mine_running,
)
run_moe = b2.button("Run: dense vs experts", key="gpu_run_moe", icon=":material/bolt:", disabled=mine_running)
if run_ctx or run_moe:
    device = "cuda" if on_gpu else "cpu"
    if run_ctx:
        submitted = RUNNER.submit(
            owner,
            "context",
            jobs.context_benchmark,
            preset_name=preset_name,
            budget_bytes=budget,
            device=device,
        )
    else:
        submitted = RUNNER.submit(owner, "moe", jobs.moe_benchmark, preset_name=preset_name, device=device)
    if isinstance(submitted, Busy):
        st.warning(submitted.message)
    else:
        job, mine_running = submitted, True


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


if mine_running:
    st.fragment(run_every=0.5)(draw_progress)()

if st.session_state.get("gpu_error"):
    st.error(f"The benchmark failed: {st.session_state['gpu_error']}")

# ---------------------------------------------------------------------------------------------- context results
st.markdown("#### 1 · Context vs speed")
context_result: ContextResult | None = st.session_state.get("gpu_context")
if context_result is None:
    ref_card = CARDS[DEFAULT_CARD]
    if measured_bw is not None:
        ref_bw, where = measured_bw, "this machine's measured copy speed"
    elif on_gpu and snapshot.peak_bandwidth_bytes_per_s:
        ref_bw = Bandwidth(
            snapshot.peak_bandwidth_bytes_per_s, snapshot.pcie_bandwidth_bytes_per_s or 16e9, "spec"
        )
        where = f"your {snapshot.name}'s spec-sheet bandwidth"
    else:
        ref_bw = Bandwidth(ref_card.bandwidth_bytes_per_s, ref_card.host_link_bytes_per_s, "spec")
        where = f"an {ref_card.name} ({ref_card.bandwidth_bytes_per_s / 1e9:,.0f} GB/s)"
    elem = 2 if on_gpu else 4
    show_figure(
        prediction_figure(
            predict_context(preset, ref_bw, budget, elem),
            budget is not None,
            f"Before you measure: the roofline for the '{preset.name}' models on {where}",
        ),
        key="gpu_prediction",
    )
    st.caption(
        "The *roofline* is the fastest a step can possibly be: bytes it must read ÷ bytes per second the memory "
        "delivers. Full attention reads a cache that grows a row per token, so its line falls; the fixed-state "
        "model reads the same board at any depth, so its line stays flat. Press **Run** to put your measurement "
        "beside it."
    )
else:
    show_figure(
        context_speed_figure(
            context_result,
            f"Measured on {context_result.device} (solid, mean ± 1 std of "
            f"{PRESETS[context_result.preset].repeats} repeats) vs roofline (dashed)",
        ),
        key="gpu_context_fig",
    )
    for s in context_result.series:
        if s.spill_depth is not None:
            st.info(
                f"**{s.model}:** the cache stopped fitting the budget at position {s.spill_position:,}; from depth "
                f"{s.spill_depth:,} on, the rest was copied from host memory at every step — the cliff of the seed "
                "article's 12 GB card."
            )
        if s.oom_depth is not None:
            st.warning(
                f"**{s.model}: out of memory at depth {s.oom_depth:,}.** That is a result, not a failure: it is where "
                "this card's memory ends for this model. Lower the budget slider to stream the overflow from host "
                f"memory instead. ({s.oom_message})"
            )
    if context_result.stopped:
        st.caption("Stopped early: the points measured before Stop are shown.")
    st.table(context_rows(context_result), hide_index=True, border="horizontal")
    st.caption(
        "'% of roofline' is measured speed ÷ predicted speed. Big cards land at 50–90 %; tiny models on a CPU "
        "land far lower, because there the time goes to launching many small operations, not to reading memory."
    )

# ---------------------------------------------------------------------------------------------- MoE results
st.markdown("#### 2 · Dense vs experts")
p = preset
st.markdown(
    f"Two models with the **same number of parameters**: one dense, one *Mixture of Experts* (MoE) whose "
    f"feed-forward part is cut into {p.moe_experts} experts; each token wakes {p.moe_shared} shared experts + "
    f"the {p.moe_top_k} its router picks (Kimi K3: 2 + 16 of 898). Same depth ({p.moe_depth} tokens), both fully "
    "in memory. On an NVIDIA GPU the page also reads the board's energy counter and subtracts the idle power."
)
moe_result: MoeResult | None = st.session_state.get("gpu_moe")
if moe_result is None:
    st.caption("Press **Run: dense vs experts** to measure.")
else:
    show_figure(moe_figure(moe_result), key="gpu_moe_fig")
    st.caption(
        "Solid bars: measured tokens/s, mean ± 1 std of the repeats; hatched bars: the roofline, the fastest "
        "each model could go if every step only had to read its awake weights and cache once. Under each name: "
        "how close the measurement came."
    )
    if moe_result.note:
        st.caption(moe_result.note)
    if moe_result.idle_watts is not None:
        st.caption(f"Idle baseline: {moe_result.idle_watts:,.1f} W, subtracted over each timed window.")
    st.table(moe_rows(moe_result), hide_index=True, border="horizontal")

# ---------------------------------------------------------------------------------------------- export + published
if context_result is not None or moe_result is not None:
    d1, d2, _ = st.columns([1, 1, 2])
    d1.download_button(
        "Download CSV",
        to_csv(context_result, moe_result),
        "your_gpu.csv",
        "text/csv",
        key="gpu_dl_csv",
        icon=":material/download:",
    )
    payload = {
        "device": snapshot.to_dict(),
        "versions": versions(),
        "bandwidth": None if measured_bw is None else vars(measured_bw),
        "context": None if context_result is None else context_result.to_dict(),
        "moe": None if moe_result is None else moe_result.to_dict(),
    }
    d2.download_button(
        "Download JSON",
        to_json(payload),
        "your_gpu.json",
        "application/json",
        key="gpu_dl_json",
        icon=":material/data_object:",
    )
    st.caption(
        "CSV: one row per measured point of both benchmarks. JSON: the same, plus every repeat, the device "
        "and the software versions — enough to compare runs or share them."
    )

st.subheader("Yours beside published numbers")
# one above the other, full width, as static tables whose cells wrap: no cell is cut off
st.markdown("**Yours**")
mine = yours_rows(context_result, moe_result)
if mine:
    st.table(mine, hide_index=True, border="horizontal")
else:
    st.caption("Run a benchmark and your headline numbers appear here.")
st.markdown("**Published** (other tools, models and quantisations: compare the shape, not the tokens/s)")
st.table(published_rows(), hide_index=True, border="horizontal")

notice(
    "At depth 0 the full-attention model and the fixed-state model run at about the same speed. At the deepest "
    "depth, which one slows down, and by roughly how much?",
    "Full attention slows down: every step reads its whole cache, so time per token grows in a straight line "
    "with depth and speed falls like 1 ÷ (weights + cache). The fixed-state model reads the same board at every "
    "depth and stays flat. Published: Llama 8B on an RTX 3090 loses 68 % by 64K tokens; a hybrid with mostly "
    "fixed-state layers loses 29 %.",
    key="gpu_notice_depth",
)
notice(
    "Set a budget so the cache spills. The host link is 10–60× slower than the card's memory. Does the speed "
    "fall gently or off a cliff once the cache stops fitting?",
    "Off a cliff. Every byte past the budget crosses the slow link at every step, so a small spilled fraction "
    "costs as much as a large resident one. Ollama users report 35 → 4.8 tokens/s on a 12 GB card.",
    key="gpu_notice_spill",
)
notice(
    "The MoE wakes a few percent of its experts. Will it draw much less power than the dense model?",
    "Not necessarily: both keep the memory busy, so board power stays in the same band. The MoE wins on "
    "**joules per token** because each token finishes sooner. (An H100 study measured −26 % energy per token "
    "for an MoE against a dense model; very low watts usually mean the GPU is waiting for experts on the CPU.)",
    key="gpu_notice_moe",
)

formula(
    r"\text{tokens/s} \le \frac{B_\text{VRAM}}{W_\text{active} + \text{KV}(d)},\qquad"
    r"t_\text{token} = \frac{\text{bytes in VRAM}}{B_\text{VRAM}} + \frac{\text{spilled bytes}}{B_\text{link}},"
    r"\qquad \text{J/token} = \frac{E_\text{end} - E_\text{start} - P_\text{idle}\,\Delta t}{n}",
    caption="KV(d) = d × layers × 2 × width × bytes per number grows with depth d; a fixed state does not. "
    "E is the card's energy counter (or integrated power samples), P_idle the idle baseline.",
    key="gpu_formula",
)
code(time_decode, AttentionDecoder._mix, StateDecoder._mix, EnergyMeter.end, key="gpu_code")

still_missing(
    "Measured and predicted agree on the shape: a growing cache costs speed in proportion to its size, a cliff "
    "follows when it leaves VRAM, and waking fewer experts saves energy per token. The last lesson puts every "
    "stage of the story side by side."
)
next_lesson(10)
