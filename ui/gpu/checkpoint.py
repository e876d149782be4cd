"""Your own checkpoint: the context-vs-speed measurement on a real model from the reader's disk.

A picker (the checkpoints core.models.fetch finds, or a typed folder), checked from its config
and file headers before anything loads (core.gpu.suites.checkpoint_bench.describe: one line when it is
not usable); a Run button that goes through the same one-benchmark-per-machine runner and
progress as the preset runs (ui.gpu.runner); then tokens/s vs depth beside the roofline of the
checkpoint's own config, and a table. The picker sits behind a toggle, so a reader who does not
ask for it costs the page no scan of the disk. In public mode: only the command to run at home.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
import streamlit as st
import torch

from core.figures.checkpoint_compare import RunSeries, memory_by_depth, speed_by_depth
from core.figures.style import COLORS, base_layout, legend_below, log_ticks
from core.gpu.output.checkpoint_compare import compare_words
from core.gpu.output.export import to_json
from core.gpu.output.report import cache_ceiling_words, floor_rows, percent, rate, rate_with_spread
from core.gpu.serving import jobs
from core.gpu.serving.runner import RUNNER, Busy
from core.gpu.suites.checkpoint_bench import (
    CheckpointInfo,
    CheckpointResult,
    Settings,
    default_depths,
    describe,
)
from core.gpu.timing.precision import run_dtype
from core.i18n import N_, _
from core.models import fetch
from core.models.hf_tokenizer import CheckpointError
from core.roofline import step_bytes
from core.units import format_bytes
from ui.charts import show_figure
from ui.gpu.floors import floors_table
from ui.gpu.results import headline_and_more
from ui.gpu.runner import RUN_PARAM, busy_with, progress_of, run_button
from ui.gpu.words import device_line, reader_line
from ui.text import plain

TYPED = N_("a folder I type…")
HOME_COMMAND = "python -m core.gpu.bench --checkpoint /path/to/model-folder --out my_checkpoint.json"
LABEL = "checkpoint"  # the runner's label for these runs


def checkpoint_section(
    owner: str | None, on_gpu: bool, runs_off: str | None = None
) -> CheckpointResult | None:
    """The whole section; `owner` None means public mode (the command only, nothing measured)."""
    st.markdown(_("#### 3 · Your own checkpoint"))
    st.markdown(
        _(
            "The same measurement on a **real model from your disk** (GPT-2, Llama, Mistral, Qwen2, Qwen3 or "
            "Qwen3.5 in safetensors): how many tokens per second it writes at each depth, reading its own KV "
            "cache, beside the fastest its size allows. Run a Qwen3 folder (attention in every layer) and a "
            "Qwen3.5 folder (a fixed board in three layers of four) one after the other to see dense against "
            "hybrid on your card."
        )
    )
    if owner is None:
        st.caption(
            _("Nothing is measured on this shared server. On your own machine, from a copy of this course:")
        )
        st.code(HOME_COMMAND, language="bash")
        st.caption(
            _(
                "Llama, Mistral and Qwen2 folders also need Hugging Face transformers: "
                "`pip install -r requirements-checkpoints.txt`."
            )
        )
        return None
    if st.toggle(_("Benchmark a checkpoint of my own"), key="gpu_ckpt_open"):
        _picker(owner, on_gpu, runs_off)
    label, busy = busy_with(owner)
    if busy and label == LABEL:
        st.fragment(run_every=0.5)(progress_of(owner))()
    if st.session_state.get("gpu_ckpt_error"):
        st.error(plain(st.session_state["gpu_ckpt_error"]), icon=":material/error:")
    result: CheckpointResult | None = st.session_state.get("gpu_checkpoint")
    if result is not None:
        _result(result)
        _side_by_side(result)
    return result


def _found() -> list:
    from ui.models.gpt2 import found_checkpoints  # the pages' 30-second scan of the disk, shared

    return found_checkpoints()


@st.cache_resource(show_spinner=False, max_entries=16, ttl=30)
def _described(folder: str) -> CheckpointInfo:
    """`describe` once per folder for 30 s: a rerun of the page (progress, telemetry) reads no
    config or safetensors header again; a refused folder is not kept (errors are not cached)."""
    return describe(folder)


def _picker(owner: str, on_gpu: bool, runs_off: str | None) -> None:
    found = {item.label: str(item.folder) for item in _found()}
    choice = st.selectbox(
        _("Checkpoint"),
        [*found, TYPED],
        format_func=lambda option: _(option) if option == TYPED else option,
        key="gpu_ckpt_pick",
        help=_(
            "Checkpoints this course found (COURSE_GPT2_PATH and GPT-2 downloads), or any folder you name."
        ),
    )
    if choice == TYPED:
        folder = st.text_input(
            _("Folder with config.json and model.safetensors"),
            key="gpu_ckpt_path",
            max_chars=500,
            placeholder="/home/me/models/Qwen3-0.6B",
        ).strip()
        if not folder:
            st.caption(
                _(
                    "Type the path of a model folder on this machine. No model here yet? "
                    "`python -m core.models.fetch gpt2` downloads GPT-2 small ({size})."
                ).format(size=fetch.approx_size(fetch.RELEASES["gpt2"].download_bytes))
            )
            return
    else:
        folder = found[choice]
    try:
        info = _described(folder)
    except CheckpointError as error:
        st.error(plain(error), icon=":material/error:")
        return
    device = torch.device("cuda" if on_gpu else "cpu")
    depths = default_depths(info, Settings(), device)
    elem = run_dtype(on_gpu).itemsize
    boards = (
        _(", {size} of fixed boards").format(size=format_bytes(info.state_bytes(elem)))
        if info.state_bytes(elem)
        else ""
    )
    st.caption(
        _(
            "{name}: {family}, {params:,} parameters, {cache} of KV cache per token{boards}, a window of "
            "{window:,} positions. Depths to time: {depths}."
        ).format(
            name=plain(info.name),
            family=plain(info.family),
            params=info.planned.spec.total_params(),
            cache=format_bytes(info.cache_bytes_per_token(elem)),
            boards=boards,
            window=info.window,
            depths=_(", ").join(f"{d:,}" for d in depths),
        )
    )
    pressed = run_button(
        _("Run: my checkpoint"), "gpu_run_checkpoint", ":material/speed:", busy_with(owner)[1], runs_off
    )
    if not pressed:
        return
    submitted = RUNNER.submit(
        owner, LABEL, jobs.checkpoint_benchmark, folder=str(info.folder), device="cuda" if on_gpu else "cpu"
    )
    if isinstance(submitted, Busy):
        st.error(reader_line(submitted.message))
        return
    st.session_state["gpu_submitted"] = LABEL
    st.session_state["gpu_ckpt_error"] = None
    st.query_params[RUN_PARAM] = owner  # a reload of this URL takes the run back
    st.rerun()


def checkpoint_figure(result: CheckpointResult) -> go.Figure:
    """Measured tokens/s (mean ± std) and the roofline over depth, on a log axis (a tiny model on a
    CPU lands far below its roofline)."""
    depths = [p.depth for p in result.points]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=depths,
            y=[p.tokens_per_s for p in result.points],
            error_y=dict(type="data", array=[p.std_tokens_per_s for p in result.points], visible=True),
            mode="lines+markers",
            name=_("measured (mean ± 1 std)"),
            line=dict(color=COLORS["attention"], width=2.5),
            marker=dict(size=8, symbol="circle"),
            customdata=[[p.percent_of_roofline, p.ms_per_token] for p in result.points],
            hovertemplate=_(
                "depth %{x:,}<br>%{y:,.1f} tokens/s (%{customdata[1]:.2f} ms/token)"
                "<br>%{customdata[0]:.1f} % of the roofline"
            )
            + "<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=depths,
            y=[p.predicted_tokens_per_s for p in result.points],
            mode="lines+markers",
            name=_("roofline: (weights + cache) ÷ bandwidth"),
            line=dict(color=COLORS["predicted"], width=2, dash="dash"),
            marker=dict(size=6, symbol="circle-open"),
            hovertemplate=_("depth %{x:,}<br>at most %{y:,.0f} tokens/s") + "<extra></extra>",
        )
    )
    base_layout(  # the title is a line of text above the chart: it wraps on a phone, a chart title would not
        fig,
        "",
        _("depth d (tokens in the KV cache)"),
        _("tokens per second (log scale)"),
        height=420,
    )
    values = [v for t in fig.data for v in t.y if v and math.isfinite(v) and v > 0]
    if (
        values
    ):  # ticks from the power of ten below the lowest point, so every point has a labelled tick under it
        floor = 10.0 ** math.floor(math.log10(min(values)))
        ticks, labels = log_ticks(floor, 10.0 ** math.ceil(math.log10(max(values))))
        top = math.log10(ticks[-1]) + 0.04  # and the power of ten above the highest
        fig.update_yaxes(type="log", tickvals=ticks, ticktext=labels, range=[math.log10(floor) - 0.04, top])
    fig.update_xaxes(rangemode="tozero")
    return legend_below(fig, y=-0.2, bottom=100)


HEADLINE = (
    N_("depth d"),
    N_("tokens/s (mean ± std)"),
    N_("KV cache"),
    N_("% of roofline"),
)  # four fit a phone


def checkpoint_rows(result: CheckpointResult) -> list[dict[str, str]]:
    """One row per depth, numbers as text with units."""
    depth, speed = _("depth d"), _("tokens/s (mean ± std)")
    rows = [
        {
            depth: f"{p.depth:,}",
            speed: rate_with_spread(p.tokens_per_s, p.std_tokens_per_s),
            _("KV cache"): format_bytes(p.cache_bytes),
            _("bytes per token"): format_bytes(p.bytes_per_token),
            _("roofline tokens/s"): rate(p.predicted_tokens_per_s),
            _("% of roofline"): percent(p.tokens_per_s, p.predicted_tokens_per_s),
        }
        | ({_("fixed boards"): format_bytes(p.state_bytes)} if result.state_bytes else {})
        for p in result.points
    ]
    if result.oom_depth is not None:
        rows.append({depth: f"{result.oom_depth:,}", speed: _("out of memory")})
    return rows


def _checked_note(result: CheckpointResult) -> None:
    """Whether the real tensors hold the bytes the planner counts from config.json."""
    if not result.cache_matches_plan:
        st.warning(
            _(
                "The cache tensors the model filled and the planner's count from config.json disagree (the table "
                "shows the real bytes; the roofline uses the planner's)."
            )
        )
        return
    diff = result.planned_weight_bytes - result.weight_bytes
    if diff == 0:
        st.caption(
            _(
                "Checked: the cache tensors the model really filled hold exactly the bytes the planner computes "
                "from config.json, and so do its weights."
            )
        )
        return
    st.caption(
        _(
            "Checked: the cache tensors the model really filled hold exactly the bytes the planner computes "
            "from config.json, while its weights hold {weights}, {diff} bytes off the planner's count."
        ).format(weights=format_bytes(result.weight_bytes), diff=f"{diff:+,}")
    )


def _result(result: CheckpointResult) -> None:
    st.markdown(
        _("**{name} on {device}: measured vs roofline**").format(
            name=plain(result.name), device=plain(result.device)
        )
    )
    show_figure(checkpoint_figure(result), key="gpu_ckpt_fig")
    numbers = dict(
        loader=plain(reader_line(result.loader)),
        dtype=result.dtype,
        cache=plain(reader_line(result.cache_kind)),
        weights=format_bytes(result.weight_read_bytes),
        per_token=format_bytes(result.cache_bytes_per_token),
        bandwidth=f"{result.bandwidth_bytes_per_s / 1e9:,.1f}",
    )
    st.caption(
        (
            _(
                "Loaded by {loader} in {dtype}; cache: {cache}. Bytes per token = the weights one step reads "
                "({weights}) + the KV cache at depth d ({per_token} per token), both from the checkpoint's "
                "config.json; the roofline is the copy speed measured here ({bandwidth} GB/s) ÷ those bytes (on a "
                "CPU, the cache's speed while a step fits in it: below)."
            )
            if result.llc_bytes
            else _(
                "Loaded by {loader} in {dtype}; cache: {cache}. Bytes per token = the weights one step reads "
                "({weights}) + the KV cache at depth d ({per_token} per token), both from the checkpoint's "
                "config.json; the roofline is the copy speed measured here ({bandwidth} GB/s) ÷ those bytes."
            )
        ).format(**numbers)
    )
    st.caption(_steps_words(result))
    two_speeds = cache_ceiling_words(result.llc_bytes, result.llc_bytes_per_s, result.bandwidth_bytes_per_s)
    if two_speeds:
        st.caption(two_speeds)
    _checked_note(result)
    if result.device.startswith("CPU"):
        st.caption(
            _(
                "On a CPU a small model lands far below its roofline: its time goes to Python and to launching "
                "many small operations, not to reading memory. The bigger the model, the closer it comes."
            )
        )
    if result.oom_depth is not None:
        st.warning(
            _("Out of memory at depth {depth}: {error}").format(
                depth=f"{result.oom_depth:,}", error=plain(device_line(result.oom_message))
            )
        )
    if result.stopped:
        st.caption(_("Stopped early: the depths measured before Stop are shown."))
    rows = checkpoint_rows(result)
    headline = [_(column) for column in HEADLINE]
    headline_and_more([{k: v for k, v in row.items() if k in headline} for row in rows], rows)
    named = ((plain(result.name), f"{p.depth:,}", p) for p in result.points)
    floors_table(floor_rows(named, _("depth d")), result.points)
    st.download_button(
        _("Download JSON"),
        to_json(result.to_dict()),
        "my_checkpoint.json",
        "application/json",
        key="gpu_ckpt_json",
        icon=":material/data_object:",
    )


def _steps_words(result: CheckpointResult) -> str:
    """How the timed steps ran, and the fixed boards a hybrid adds to every step's bytes."""
    if result.step_method == "CUDA graph":
        words = _(
            "Each repetition of timed steps was captured once and replayed as one CUDA graph, as the presets are."
        )
    elif result.graph_note:
        words = _("The timed steps ran one by one (eager): {why}.").format(
            why=plain(reader_line(result.graph_note))
        )
    else:
        words = _("The timed steps ran one by one (eager).")
    if result.state_bytes:  # read and written back: the planner's count (core.roofline.step_bytes)
        words += " " + _(
            "Its Gated DeltaNet layers keep fixed boards of {size} at every depth (convolution windows included), "
            "read and written back every step: the roofline's bytes per token count {moved} for them, as the "
            "planner does."
        ).format(
            size=format_bytes(result.state_bytes), moved=format_bytes(step_bytes(0, 0, result.state_bytes))
        )
    return words


RUNS_KEPT = 4  # earlier runs of this session kept for the side-by-side charts


def _side_by_side(result: CheckpointResult) -> None:
    """Every checkpoint this reader ran on this device (the latest per folder), speed and memory over
    depth: a dense and a hybrid model side by side once both have run."""
    runs: dict[str, CheckpointResult] = st.session_state.setdefault("gpu_ckpt_runs", {})
    runs.pop(result.folder, None)
    runs[result.folder] = result  # the latest last
    while len(runs) > RUNS_KEPT:
        runs.pop(next(iter(runs)))
    same_device = [r for r in runs.values() if r.device == result.device and r.points]
    if len(same_device) < 2:
        return
    series = [
        RunSeries(
            r.name,
            r.state_bytes > 0,
            [p.depth for p in r.points],
            [p.tokens_per_s for p in r.points],
            [p.cache_bytes for p in r.points],
            [p.state_bytes for p in r.points],
        )
        for r in same_device
    ]
    st.markdown(
        _("**Side by side on {device}: the checkpoints you ran**").format(device=plain(result.device))
    )
    show_figure(speed_by_depth(series), key="gpu_ckpt_cmp_speed")
    show_figure(memory_by_depth(series), key="gpu_ckpt_cmp_memory")
    st.caption(compare_words(same_device))
