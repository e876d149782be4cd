"""Your GPU: measure the memory wall and the power bill on your own card.

Story (the default depth): one button, "Measure this machine" (ui/gpu/this_machine.py: this card at its own
sizes, or this CPU), the worked example in the reader's own numbers, then this project's committed H200 run as
two pictures with sentences computed from its JSON (ui/gpu/committed.py). Engineer adds, inline: the device
card, live telemetry, both benchmarks with their pickers, tables and batch sweep, downloads, the reader's own
checkpoint, the full charts of the committed run, the published numbers and the notices that cite them.

A composition of panels (ui/gpu/); the decisions behind them live in core/gpu/. In public mode
(core/public.py) the page measures nothing on the server: the command to run at home, this project's
run, and for engineers the roofline and the published numbers.
"""

from __future__ import annotations

import uuid

import streamlit as st
import torch

from core import glossary
from core.gpu.decode.kv_cache import KVCache
from core.gpu.decode.models import AttentionDecoder, StateDecoder
from core.gpu.device import nvml
from core.gpu.device.energy import EnergyMeter
from core.gpu.device.health import HEALTH
from core.gpu.output.committed_run import depth_question, depth_sentence, load, moe_power_words
from core.gpu.presets import preset_choices
from core.gpu.timing.decode_timer import time_decode
from core.i18n import N_, _
from core.public import public_mode
from core.roofline import host_link_slowdowns
from core.specs.published import depth_loss, depth_run, measured_speeds
from core.units import format_context
from ui.course import lesson_ref, lesson_span
from ui.deeper import planner_batch_link
from ui.depth import engineer, engineer_section
from ui.glossary import gloss, new_words
from ui.gpu.checkpoint import checkpoint_section
from ui.gpu.committed import committed_run_panel
from ui.gpu.device_card import device_card
from ui.gpu.results import beside_published, context_results, downloads, load_last_run, moe_results
from ui.gpu.runner import benchmark_panel, collect, public_panel, run_token
from ui.gpu.telemetry import telemetry_panel
from ui.gpu.this_machine import this_machine_panel
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing


def depth_notice() -> None:
    """Predict before the first picture: the committed run's depth-0 speeds, then which model is slower at the
    deepest depth (the answer: the run's own sentence, and for engineers a published report beside it)."""
    committed = load()  # this project's own GPU run (docs/gpu-runs/): the premise and the answer follow it
    notice(
        depth_question(committed)
        if committed
        else _(
            "Full attention reads a cache that grows with depth; the fixed state does not. At the deepest depth, "
            "which one is slower, and by roughly how much?"
        ),
        (f"{depth_sentence(committed)} " if committed else "")
        + _(
            "Full attention slows down: every step reads its whole cache, so time per token grows in a straight line "
            "with depth and speed falls like 1 ÷ (weights + cache) at batch 1, the one conversation these benchmarks "
            "run. The fixed-state model reads boards of the same size at every depth and stays flat."
        )
        + (" " + _published_depth_loss() if engineer() else ""),
        key="gpu_notice_depth",
    )


def _published_depth_loss() -> str:
    return _(
        "A community report (llama-bench, in pull-request text in the Abai/llama.cpp fork): "
        "Llama 8B on an RTX 3090 loses {llama_loss:.0%} by {deepest} tokens; a hybrid with mostly "
        "fixed-state layers loses {hybrid_loss:.0%}."
    ).format(
        llama_loss=depth_loss("Llama 8B"),
        deepest=format_context(max(measured_speeds(depth_run("Llama 8B")))),
        hybrid_loss=depth_loss("Qwen3.5"),
    )


lesson_header("your_gpu")
new_words(
    "decode",
    engineer_keys=("nvml", "tg128", "num_ctx", "cuda_graph", "vllm", "quantisation"),
    here="your_gpu",
)
problem(
    _(
        "{lessons} argued from arithmetic: a growing KV cache must be read in full at every step, a fixed state "
        "stays the same size however long the text, and an MoE reads only the experts it wakes. Arithmetic is a "
        "promise, not a measurement: this page measures."
    ).format(lessons=lesson_span("kv_cache", "experts").capitalize())
)
if engineer():
    st.markdown(
        _(
            "This page runs the same kinds of models and compares what happens with what the memory traffic "
            "predicts. It measures **the computer that runs this course**: your own when you start it yourself "
            "(`./run.sh`); a shared public server measures nothing and gives you the command to run at home."
        )
    )

public = public_mode()
if public:  # a shared server: its GPU is not the reader's, and nothing is measured on it
    snapshot = nvml.NoGpu(N_("Public mode: this server measures nothing.")).snapshot()
    choice = public_panel(snapshot)
    committed_run_panel(predict=depth_notice)  # predict, then the pictures of this project's run
    if engineer():
        context = context_results(choice.preset, choice.budget_bytes, snapshot, True, None, public=True)
        moe = moe_results(choice.preset, public=True)
        checkpoint_section(None, on_gpu=True)
else:
    owner = run_token()
    snapshot = nvml.probe()
    HEALTH.observe(snapshot)
    cuda = torch.cuda.is_available()
    on_gpu = snapshot.available and cuda
    measured_bw = st.session_state.get("gpu_bandwidth")

    load_last_run()
    collect(owner)  # a finished run comes into this session (Story has no benchmark panel to do it)
    # the one button: this card at its own sizes, or (no NVIDIA GPU) this CPU; then this project's GPU run
    gpu_preset = preset_choices(True, snapshot.vram_total_bytes)[1] if on_gpu else None
    this_machine_panel(owner, HEALTH.runs_off, gpu_preset)
    committed_run_panel(predict=depth_notice)  # predict, then the pictures of this project's run
    if engineer_section(_("This machine in full: the device, both benchmarks and a checkpoint")):
        device_card(snapshot, cuda, measured_bw, HEALTH.runs_off)
        if snapshot.available:
            telemetry_panel(st.session_state.setdefault("gpu_viewer", uuid.uuid4().hex))
        choice = benchmark_panel(owner, snapshot, on_gpu, HEALTH.runs_off)
        context = context_results(
            choice.preset, choice.budget_bytes, snapshot, on_gpu, measured_bw, chart_above=True
        )
        moe = moe_results(choice.preset)
        downloads(snapshot, measured_bw, context, moe)
        checkpoint_section(owner, on_gpu, HEALTH.runs_off)
if engineer():  # other people's benchmarks: Engineer depth only
    beside_published(context, moe)
    with st.expander(_("How to read the published table"), icon=":material/help:"):
        # a legend for the llama-bench / Ollama terms, from the one glossary (core/glossary.py)
        st.markdown(
            "\n".join(
                f"- {gloss(glossary.get(key), 'your_gpu')}" for key in ("tg128", "q4_0", "ngl", "num_ctx")
            )
            + "\n- "
            + _(
                "**depth d** (0 / 16K / …) — the tokens already in the context when the timed tokens are written."
            )
            + "\n- "
            + _("**q8_0 KV cache** — the KV cache stored in 8 bits instead of 16.")
            + "\n- "
            + _(
                "**tokens/s** — tokens per second while writing; the llama.cpp and Ollama rows write one "
                "conversation at a time (batch 1)."
            )
        )

if engineer():  # the budget slider the first asks about is an Engineer control
    slow, slower = host_link_slowdowns()
    notice(
        _(
            "Set a budget so the cache spills. The host link is {slow:.0f}–{slower:.0f}× slower than the card's "
            "memory (across {lesson}'s cards). Does the speed "
            "fall gently or off a cliff once the cache stops fitting?"
        ).format(slow=slow, slower=slower, lesson=lesson_ref("kv_cache")),
        _(
            "Off a cliff. Every byte past the budget crosses the slow link at every step, so a small spilled "
            "fraction costs as much as a large resident one. Ollama users report 35 → 4.8 tokens/s on a 12 GB card "
            "(a community guide on insiderllm.com; it is in the published table below)."
        ),
        key="gpu_notice_spill",
    )
    notice(  # Story reads the same answer under the second picture
        _("The MoE wakes a few percent of its experts. Will it draw much less power than the dense model?"),
        moe_power_words()
        + " "
        + _(
            "(On an H100, arXiv 2508.16700 measured −25.8 % "
            "energy per 1,000 tokens for GPT-OSS-20B, an MoE, against the dense Qwen3-32B; very low watts usually "
            "mean the GPU is waiting for experts on the CPU.)"
        ),
        key="gpu_notice_moe",
    )

formula(
    r"\text{tokens/s} \le \frac{B_\text{VRAM}}{W_\text{active} + \text{KV}(d)},\qquad"
    r"t_\text{token} = \frac{\text{bytes in VRAM}}{B_\text{VRAM}} + \frac{\text{spilled bytes}}{B_\text{link}},"
    r"\qquad \text{J/token} = \frac{E_\text{end} - E_\text{start} - P_\text{idle}\,\Delta t}{n}",
    caption=_(
        "KV(d) = d × layers × 2 × width × bytes per number grows with depth d; a fixed state does not. "
        "E is the card's energy counter read through NVML, the NVIDIA driver's monitoring library (or integrated "
        "power samples), P_idle the idle baseline."
    ),
    key="gpu_formula",
)
code(time_decode, AttentionDecoder._mix, KVCache.attend, StateDecoder._mix, EnergyMeter.end, key="gpu_code")

still_missing(
    _(
        "A measurement here confirms or refutes the arithmetic: a growing cache costs speed in proportion to its "
        "size, and waking fewer experts saves energy per token. Next, {planner} sizes a real deployment from any "
        "config.json; {what_changed} then puts every stage side by side."
    ).format(planner=lesson_ref("planner"), what_changed=lesson_ref("what_changed"))
)
if engineer():  # the batch sweep it follows is an Engineer section
    planner_batch_link()
next_lesson("your_gpu")
