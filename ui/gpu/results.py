"""The results: context vs speed (or its roofline before a run) with the batch sweep beside it (ui.gpu.batch),
dense vs experts, downloads, and the reader's numbers beside published ones."""

from __future__ import annotations

import streamlit as st

from core.figures.gpu import context_speed_figure, moe_figure, prediction_figure
from core.gpu.device.nvml import DeviceSnapshot
from core.gpu.output.batch_words import times
from core.gpu.output.device_name import shown_device
from core.gpu.output.export import page_payload, to_csv, to_json
from core.gpu.output.report import (
    cache_ceiling_words,
    context_floor_rows,
    context_headline_rows,
    context_rows,
    moe_floor_rows,
    moe_rows,
    moe_way_note,
    state_way_note,
    yours_rows,
)
from core.gpu.presets import PRESETS, Preset
from core.gpu.serving import last_run
from core.gpu.suites.context_bench import ContextResult, predict_context, reference_bandwidth
from core.gpu.suites.moe_bench import MoeResult
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.precision import run_dtype
from core.i18n import _
from core.plan.calibration import shares_words
from core.public import public_mode
from core.specs import SPECS
from core.specs.published import published_table
from ui.charts import show_figure
from ui.gpu.batch import batch_results
from ui.gpu.floors import floors_table
from ui.gpu.words import device_line, reader_line

K3_MOE = SPECS["kimi_k3"].moe  # the real model the toy MoE is set beside


def load_last_run() -> None:
    """Once per session: the last finished run on this machine becomes the default view."""
    if "gpu_stored_run" in st.session_state:
        return
    stored, note = last_run.load()
    st.session_state["gpu_stored_run"] = stored
    st.session_state["gpu_stored_note"] = note
    if stored is not None:
        if stored.context is not None:
            st.session_state.setdefault("gpu_context", stored.context)
            st.session_state.setdefault("gpu_batch", stored.batch)
        if stored.moe is not None:
            st.session_state.setdefault("gpu_moe", stored.moe)


def stored_caption(result: object) -> None:
    """Say that what is shown is the stored last run, with its date and device."""
    stored: last_run.LastRun | None = st.session_state.get("gpu_stored_run")
    if stored is not None and result is not None and any(result is r for r in (stored.context, stored.moe)):
        st.info(
            _(
                "**The last measurement made on this machine:** {date}, on {device}. "
                "**Run again here** with the buttons above to measure now."
            ).format(date=stored.date, device=shown_device(result.device)),
            icon=":material/history:",
        )


def context_results(
    preset: Preset,
    budget_bytes: int | None,
    snapshot: DeviceSnapshot,
    on_gpu: bool,
    measured_bw: Bandwidth | None,
    public: bool = False,
    chart_above: bool = False,
) -> ContextResult | None:
    """The measured speed over depth with its notes and table, or the roofline alone before a run
    (always the roofline alone in public mode, where nothing is measured). `chart_above`: the measured
    chart is already drawn at the top of the page (ui.gpu.this_machine), so it is not drawn twice."""
    st.markdown(_("#### 1 · Context vs speed"))
    result: ContextResult | None = None if public else st.session_state.get("gpu_context")
    if st.session_state.get("gpu_stored_note"):
        st.caption(reader_line(st.session_state["gpu_stored_note"]))
    if public:
        st.caption(
            _(
                "The chart below is a prediction, not a measurement: run the command above at home and "
                "compare its numbers with these lines."
            )
        )
        _prediction(preset, budget_bytes, snapshot, on_gpu, measured_bw)
        return None
    if result is None:
        st.warning(
            _(
                "**No measurement on this machine yet.** The chart below is a prediction, not a measurement: "
                "press **Run: context vs speed** to measure."
            ),
            icon=":material/info:",
        )
        _prediction(preset, budget_bytes, snapshot, on_gpu, measured_bw)
        return None
    stored_caption(result)
    title = _(
        "Measured on {device}: solid lines, mean ± 1 std of {repeats} repeats; the roofline dashed"
    ).format(device=shown_device(result.device), repeats=PRESETS[result.preset].repeats)
    if chart_above:
        st.caption(
            _("The chart of this measurement is at the top of the page, under *Measure this machine*.")
        )
    else:
        show_figure(context_speed_figure(result, title), key="gpu_context_fig")  # the title shows above it
    for s in result.series:
        if s.spill_depth is not None:
            st.info(
                _(
                    "**{model}:** the cache stopped fitting the budget at position {position:,}; from "
                    "depth {depth:,} on, the rest was copied from host memory at every step — the cliff of "
                    "the 12 GB card in the article *From GPT-2 to Kimi K3* (2026)."
                ).format(model=_(s.model), position=s.spill_position, depth=s.spill_depth)
            )
        if s.oom_message and s.oom_message.startswith("not run:"):
            st.warning(
                _("**{model}: depths from {depth:,} on were not run.** The {why}.").format(
                    model=_(s.model),
                    depth=s.oom_depth,
                    why=reader_line(s.oom_message.removeprefix("not run: ")),
                )
            )
        elif s.oom_depth is not None:
            st.warning(
                _(
                    "**{model}: out of memory at depth {depth:,}.** That is a result, not a failure: it is "
                    "where this card's memory ends for this model. Lower the budget slider to stream the overflow "
                    "from host memory instead. ({error})"
                ).format(model=_(s.model), depth=s.oom_depth, error=device_line(s.oom_message))
            )
    if result.stopped:
        st.caption(_("Stopped early: the points measured before Stop are shown."))
    headline_and_more(context_headline_rows(result), context_rows(result))
    st.caption(
        _(
            "'% of roofline' is measured speed ÷ predicted speed. Published llama-bench runs of Llama 8B (Q4_0) on "
            "an RTX 3090 land at {shares} of the planner's "
            "ceiling for that setting (a community report, "
            "Abai/llama.cpp PR-BODY-fattn-dequant-cap.md); tiny models on a CPU "
            "land far lower, because there the time goes to launching many small operations, not to reading "
            "memory."
        ).format(shares=shares_words())
    )
    two_speeds = cache_ceiling_words(result.llc_bytes, result.llc_bytes_per_s, result.bandwidth_bytes_per_s)
    if two_speeds:
        st.caption(two_speeds)
    note = state_way_note(result)
    if note:
        st.caption(note)
    floors_table(context_floor_rows(result), [p for s in result.series for p in s.points])
    batch_results(st.session_state.get("gpu_batch"), budget_bytes is not None)
    return result


def headline_and_more(headline: list[dict[str, str]], full: list[dict[str, str]]) -> None:
    """A table of the columns that fit a phone, and every column of the same rows one click away
    (an expander named after the columns only it has)."""
    st.table(headline, hide_index=True, border="horizontal")
    more = _(", ").join(column for column in (full[0] if full else {}) if column not in headline[0])
    if more:
        with st.expander(_("Every figure per depth: {columns}").format(columns=more)):
            st.table(full, hide_index=True, border="horizontal")


def _prediction(
    preset: Preset,
    budget_bytes: int | None,
    snapshot: DeviceSnapshot,
    on_gpu: bool,
    measured_bw: Bandwidth | None,
) -> None:
    ref_bw, where = reference_bandwidth(snapshot, measured_bw, on_gpu)
    # a card that is not this machine (no measurement here, no spec sheet of this GPU) says so in the title
    elsewhere = measured_bw is None and not (on_gpu and snapshot.peak_bandwidth_bytes_per_s)
    title = (
        _(
            "Before you measure: the roofline for the '{preset}' models on, for example, {where} — not this machine"
        )
        if elsewhere
        else _("Before you measure: the roofline for the '{preset}' models on {where}")
    )
    show_figure(
        prediction_figure(
            predict_context(preset, ref_bw, budget_bytes, elem_bytes=run_dtype(on_gpu).itemsize),
            budget_bytes is not None,
            title.format(preset=preset.name, where=reader_line(where)),
        ),
        key="gpu_prediction",
    )
    st.caption(
        _(
            "The *roofline* is the speed a step would reach if moving its bytes were all it did: bytes it must "
            "move ÷ the copy speed measured here (a copy reads and writes every byte, so a step that mostly reads "
            "can land a few percent above it). Full attention reads a cache that grows a row per token, so its line falls; the "
            "fixed-state model reads boards of the same size at any depth, so its line stays flat. Press **Run** "
            "to put your measurement beside it."
        )
    )
    two_speeds = cache_ceiling_words(ref_bw.llc_bytes, ref_bw.llc_bytes_per_s, ref_bw.device_bytes_per_s)
    if two_speeds:
        st.caption(two_speeds)


def moe_results(preset: Preset, public: bool = False) -> MoeResult | None:
    """Dense vs experts: what is compared, then the measured bars, notes and table (none in public mode)."""
    st.markdown(_("#### 2 · Dense vs experts"))
    p = preset
    st.markdown(
        _(
            "At the `{preset}` sizes chosen above, two models with the **same number of parameters**: one dense, "
            "one *Mixture of Experts* (MoE) whose feed-forward part is cut into {experts} experts; each token wakes "
            "{shared} shared experts + the {top_k} its router picks (Kimi K3: {k3_shared} shared + {k3_top_k} of "
            "{k3_experts} routed). Same depth ({depth} tokens), both fully in memory. On an NVIDIA GPU the page "
            "also reads the card's energy counter and subtracts the idle power."
        ).format(
            preset=p.name,
            experts=p.moe_experts,
            shared=p.moe_shared,
            top_k=p.moe_top_k,
            k3_shared=K3_MOE.shared,
            k3_top_k=K3_MOE.top_k,
            k3_experts=K3_MOE.experts,
            depth=p.moe_depth,
        )
    )
    if public:
        st.caption(_("The command above measures this one too, with energy per token on an NVIDIA GPU."))
        return None
    result: MoeResult | None = st.session_state.get("gpu_moe")
    if result is None:
        st.caption(_("No measurement on this machine yet: press **Run: dense vs experts** to measure."))
        return None
    stored_caption(result)
    # the run shown may be of other sizes than the ones picked now: it names its own
    st.markdown(
        _("**Measured on {device} at the `{preset}` sizes ({experts}, depth {depth:,})**").format(
            device=shown_device(result.device),
            preset=result.preset,
            experts=reader_line(result.experts),
            depth=result.depth,
        )
    )
    show_figure(moe_figure(result), key="gpu_moe_fig")
    share = result.share_of_bytes_ratio
    if share is not None:
        st.markdown(
            _(
                "The MoE ran at {speed} the dense model's speed while moving {bytes} fewer bytes a token: "
                "{share:.0%} of its byte advantage became speed."
            ).format(speed=times(result.speed_ratio), bytes=times(result.bytes_ratio), share=share)
        )
    st.caption(
        _(
            "Solid bars: measured tokens/s, mean ± 1 std of the repeats; hatched bars: the roofline, the fastest "
            "each model could go if every step (one sequence, batch 1) only had to read its awake weights and "
            "cache once. Under each name: how close the measurement came."
        )
    )
    two_speeds = cache_ceiling_words(result.llc_bytes, result.llc_bytes_per_s)
    if two_speeds:
        st.caption(two_speeds)
    if result.note:
        st.caption(reader_line(result.note))
    if result.idle_watts is not None:
        st.caption(
            _("Idle baseline: {watts:,.1f} W, subtracted over each timed window.").format(
                watts=result.idle_watts
            )
        )
    st.table(moe_rows(result), hide_index=True, border="horizontal")
    note = moe_way_note(result)
    if note:
        st.caption(note)
    floors_table(moe_floor_rows(result), result.rows)
    return result


def downloads(
    snapshot: DeviceSnapshot,
    measured_bw: Bandwidth | None,
    context: ContextResult | None,
    moe: MoeResult | None,
) -> None:
    """CSV and JSON of whatever has been measured (nothing before the first run)."""
    if context is None and moe is None:
        return
    batch = st.session_state.get("gpu_batch") if context is not None else None  # the same run's batch sweep
    d1, d2, _spare = st.columns([1, 1, 2])
    d1.download_button(
        _("Download CSV"),
        to_csv(context, moe, batch),
        "your_gpu.csv",
        "text/csv",
        key="gpu_dl_csv",
        icon=":material/download:",
    )
    d2.download_button(
        _("Download JSON"),
        to_json(page_payload(snapshot, measured_bw, context, moe, batch)),
        "your_gpu.json",
        "application/json",
        key="gpu_dl_json",
        icon=":material/data_object:",
    )
    st.caption(
        _(
            "CSV: one row per measured point of both benchmarks. JSON: the same, plus every repeat, the device "
            "and the software versions — enough to compare runs or share them."
        )
    )


def beside_published(context: ContextResult | None, moe: MoeResult | None) -> None:
    """The reader's headline numbers above the published ones, as full-width static tables."""
    st.subheader(_("Yours beside published numbers"))
    # one above the other, full width, as static tables whose cells wrap: no cell is cut off
    st.markdown(_("**Yours**"))
    mine = yours_rows(context, moe)
    if mine:
        st.table(mine, hide_index=True, border="horizontal")
    else:
        st.caption(
            _(
                "This shared server runs no benchmarks: run the command above on your own machine and your "
                "headline numbers appear there."
            )
            if public_mode()
            else _("Run a benchmark and your headline numbers appear here.")
        )
    st.markdown(
        _("**Published** (other tools, models and quantisations: compare the shape, not the tokens/s)")
    )
    st.caption(
        _(
            "**primary**: a paper, an official repository or its docs, or a maintainer's own benchmark. "
            "**community report**: a blog, a personal benchmark or a pull request in someone's fork — "
            "useful, but weaker evidence. Under the table, each row says what was measured and where weights "
            "and cache sat."
        )
    )
    # four columns that wrap, the long sources numbered below: five ran off a phone's screen; the short
    # table names model and card only (with how each was measured it was four screens long on a phone)
    rows, sources = published_table(brief=True)
    st.table(rows, hide_index=True, border="horizontal")
    with st.expander(
        _("How each of the {n} numbers was measured").format(n=len(rows)), icon=":material/straighten:"
    ):
        st.table(published_table()[0], hide_index=True, border="horizontal")
    # markdown, not a caption: a caption's grey dims its links below WCAG's 4.5 : 1 (axe, issue 40)
    st.markdown(
        _("Sources: {sources}").format(
            sources=" · ".join(f"[{i}] {source}" for i, source in enumerate(sources, 1))
        )
    )
