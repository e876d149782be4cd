"""Chunks: cut the text into chunks, work inside each at once, hand the board over at the edges."""

from __future__ import annotations

import streamlit as st
import torch

from core.figures import chunks as fc
from core.figures.style import label_of
from core.i18n import _, language, stated_date
from core.mechanisms import rule_keys
from core.ops import delta_rule, forms
from core.ops import timing_record as chunk_timing
from core.units import format_small
from ui.charts import ReadyChart, ready_chart, show_figure
from ui.deeper import go_deeper_chunks
from ui.depth import engineer
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing
from ui.primer_link import primer_pointer

CHUNK_SIZES = (1, 2, 4, 8, 16, 32, 64)
SPEED_CHUNKS = (4, 8, 16, 32, 64)
DTYPES = {"fp32": torch.float32, "fp64": torch.float64}


@st.cache_data(show_spinner=False)
def check(rule: str, T: int, d: int, C: int, dtype: str) -> forms.ChunkCheck:
    return forms.chunk_check(rule, T, d, C, dtype=DTYPES[dtype])


@st.cache_resource(show_spinner=False, max_entries=512)
def timeline_view(T: int, C: int, lang: str) -> ReadyChart:
    """The chunked timeline, built once per (T, C) and language: a figure with a shape per hand-over is
    slow to build."""
    return ready_chart(fc.timeline_figure(T, C, title=_("{T} tokens, chunks of {C}").format(T=T, C=C)))


@st.cache_resource(show_spinner=False, max_entries=128)
def waits_view(T: int, lang: str) -> ReadyChart:
    """Hand-overs per form for T tokens, built once per T and language."""
    return ready_chart(fc.waits_figure(forms.waits_per_form(T, [c for c in CHUNK_SIZES if c > 1]), T))


def run_sizes(measured_here: bool, shipped: chunk_timing.ShippedTiming | None) -> None:
    """The sizes behind the speed bars, and the machine a stored recording was made on (Engineer)."""
    st.caption(
        _(
            "Both forms ran with keys and values of size 32 and 2 heads; each bar is the median of the repeats."
        )
    )
    if not measured_here and shipped is not None:
        st.caption(
            _("The stored recording was made on {machine}, {repeats} repeats.").format(
                machine=chunk_timing.shown_machine(shipped.machine), repeats=shipped.repeats
            )
        )


lesson_header("chunks")
new_words("wy", engineer_keys=("recurrence", "kernel"), here="chunks")
problem(
    _(
        "DeltaNet's erase-then-write fixed the blurring of a rewritten key, but each write needs the board the "
        "previous write left behind. Token 100 waits for token 99, which waits for token 98 … A GPU can do "
        "thousands of multiplications at once, and here it spends its time waiting in line. That matters "
        "whenever the whole text is known at once: in training, and when the model reads your prompt. "
        "Writing a reply still goes one token at a time."
    )
)
st.markdown(
    _(
        "The fix: cut the text into **chunks** of C tokens. Inside a chunk, work out all C updates "
        "together with a few matrix multiplications — the maths of *what the chunk as a whole does to "
        "the board* can be written in closed form (the WY representation). Between chunks, hand the "
        "board over once. The line of waiting shrinks from T steps to T/C."
    )
)
primer_pointer("matrix products")

st.header(_("1 · The timeline, cut into chunks"))
c1, c2 = st.columns(2)
T = c1.slider(_("tokens T"), 8, 64, 32, key="ch_T")
C = c2.select_slider(_("chunk size C"), options=CHUNK_SIZES, value=8, key="ch_C")
show_figure(timeline_view(T, C, language()), key="ch_timeline")
st.caption(
    _(
        "Top row: one token at a time; bottom row: whole chunks at once. Each red line is a hand-over of the "
        "board — a wait in line."
    )
)
steps, waits = forms.waits_in_line(T, C)
m1, m2 = st.columns(2)
m1.metric(_("waits in line, step by step"), f"{steps}")
m2.metric(
    _("waits in line, chunks of {C}").format(C=C), f"{waits}", delta=f"{waits - steps}", delta_color="inverse"
)
if engineer():  # the same count for every chunk size at once: a second picture of one idea
    show_figure(waits_view(T, language()), key="ch_waits")
    st.caption(
        _(
            "Each red mark is a hand-over: the next piece of work cannot start before the board arrives (the first "
            "mark brings the starting board), so the marks in each row equal the counts above. "
            "Inside a chunk there are no hand-overs — the work there is ordinary matrix multiplication, "
            "which a GPU does in parallel. The price is more arithmetic per chunk (it grows with C)."
        )
    )

st.header(_("2 · Same answer? Check it live"))
st.markdown(
    _(
        "A shortcut is only allowed if it computes *exactly* the same thing. Below, random inputs go "
        "through both forms: step by step, and in chunks."
    )
)
if engineer():
    st.markdown(
        _(
            "Both forms are the course's own code in `core/ops`: the step-by-step recurrence and the chunked "
            "algorithm (**Show the code** below)."
        )
    )
c1, c2, c3, c4 = st.columns(4)
rule = c1.selectbox(_("rule"), rule_keys(), index=1, format_func=label_of, key="ch_rule")
T_check = c2.slider(_("tokens"), 1, 200, 100, key="ch_T_check")
C_check = c3.select_slider(_("chunk size"), options=CHUNK_SIZES, value=16, key="ch_C_check")
dtype = c4.radio(_("precision"), list(DTYPES), key="ch_dtype", horizontal=True)
try:
    result = check(rule, T_check, 16, C_check, dtype)
except Exception as err:  # shown, not raised: the page keeps working
    st.error(_("The check could not run: {error}").format(error=err))
else:
    tol = result.tolerance
    m1, m2 = st.columns(2)
    m1.metric(_("largest output difference"), format_small(result.max_output_difference))
    m2.metric(_("largest board difference"), format_small(result.max_state_difference))
    (st.success if result.agrees else st.error)(
        (
            _(
                "{rule}, {T} tokens (2 heads, key and value size 16), chunks of {C}, {dtype}: "
                "chunked equals step-by-step to within {tol} — the rest is float rounding."
            )
            if result.agrees
            else _(
                "{rule}, {T} tokens (2 heads, key and value size 16), chunks of {C}, {dtype}: "
                "the two forms differ by more than {tol}."
            )
        ).format(rule=label_of(rule), T=T_check, C=C_check, dtype=dtype, tol=format_small(tol))
    )

st.header(_("3 · Is it faster here?"))
st.markdown(
    _(
        "Time both forms on the machine running this page (on one CPU thread, so other work on the "
        "machine disturbs the numbers less). The "
        "step-by-step form makes T small updates in a row; the chunked form fewer, bigger ones."
    )
)
c1, c2, c3 = st.columns(3)
rule_speed = c1.selectbox(_("rule"), rule_keys(), index=1, format_func=label_of, key="ch_speed_rule")
T_speed = c2.select_slider(_("tokens"), options=(64, 128, 256, 512), value=128, key="ch_speed_T")
repeats = c3.slider(_("repeats"), 1, 5, 3, key="ch_repeats")
results = st.session_state.setdefault("ch_results", {})
setting = (rule_speed, T_speed, repeats)
if st.button(_("Measure"), key="ch_measure", icon=":material/timer:", type="primary"):
    bar = st.progress(0.0, text=_("warming up …"))
    timings = []
    total = len(SPEED_CHUNKS) + 1
    for i, timing in enumerate(forms.time_forms(rule_speed, T_speed, 32, SPEED_CHUNKS, repeats=repeats)):
        timings.append(timing)
        bar.progress(
            (i + 1) / total,
            text=_("{label}: {value}").format(label=fc.shown_form(timing.label), value=f"{timing.ms:.1f} ms"),
        )
    bar.empty()
    results[setting] = timings
shipped = chunk_timing.load()
shipped_date = stated_date(shipped.date) if shipped is not None else ""
if setting in results:
    timings, rule_shown, T_shown, where = results[setting], rule_speed, T_speed, _("Measured here just now")
elif shipped is not None:  # before any Measure: the measurement that ships with the course
    timings, rule_shown, T_shown = shipped.timings, shipped.rule, shipped.T
    where = _("A stored recording, not a measurement of this machine: measured on {date}").format(
        date=shipped_date
    )
else:
    timings = None
if timings:
    show_figure(
        fc.speed_figure(
            [x.label for x in timings],
            [x.ms for x in timings],
            [x.hand_overs for x in timings],
            # short enough for a phone; says whether the bars are a stored recording or measured here
            title=(
                _("{rule}, {T} tokens") if setting in results else _("{rule}, {T} tokens (recorded {date})")
            ).format(rule=label_of(rule_shown), T=T_shown, date=shipped_date),
        ),
        key="ch_speed",
    )
    base, best, ratio = forms.speedup(timings)
    st.caption(
        _(
            "{where}: step by step {base_ms:.1f} ms; fastest chunked form {best} at {best_ms:.1f} ms "
            "({ratio:.1f}× faster). Shorter bar = faster; numbers vary with the machine and with whatever else it "
            "is doing."
        ).format(where=where, base_ms=base.ms, best=fc.shown_form(best.label), best_ms=best.ms, ratio=ratio)
        + (
            ""
            if setting in results
            else _(" Press **Measure** to measure again here, with the settings above.")
        )
    )
    if engineer():
        st.caption(
            _(
                "At the course's small sizes on one CPU thread, most of that gap is the fixed cost of starting "
                "each of the {T} step-by-step updates, not arithmetic: the chunked form does more multiply-adds, in "
                "fewer and larger operations. On a GPU, fused kernels shrink that fixed cost for both forms."
            ).format(T=T_shown)
        )
        run_sizes(setting in results, shipped)
else:
    st.caption(_("Press **Measure** to time the forms (a few seconds)."))

notice(
    _("With T = 64 tokens and chunks of 64, how many hand-overs are left?"),
    _(
        "One: the whole text is one chunk. The sequential part is gone, but the chunk's own work is a "
        "64 × 64 problem, and the arithmetic inside a chunk grows with C. Real kernels pick C by measuring "
        "(fla's Triton kernels use chunks of 64); the chart in section 3 lets you see the trade-off on this "
        "machine."
    )
    if engineer()
    else _(
        "One: the whole text is one chunk. The sequential part is gone, but the chunk's own work is a "
        "64 × 64 problem, and the arithmetic inside a chunk grows with C. Real programs pick C by measuring; "
        "the chart in section 3 lets you see the trade-off on this machine."
    ),
    key="ch_q1",
)
notice(
    _("Does the chunk size change what the model outputs?"),
    _(
        "No — only the order of the arithmetic. The live check above shows the difference is rounding "
        "(around 1e-6 in fp32, 1e-15 in fp64)."
    ),
    key="ch_q2",
)
formula(
    r"T_{\text{ut}} = \big(I + \mathrm{strictLower}(\mathrm{diag}(\beta) K K^\top)\big)^{-1}\mathrm{diag}(\beta),\quad"
    r"W = T_{\text{ut}} K,\; U = T_{\text{ut}} V \\"
    r"\tilde V = U - W S,\quad O = Q S + (Q K^\top \odot M)\,\tilde V,\quad S \leftarrow S + K^\top \tilde V",
    caption=_(
        "Per chunk of C tokens with incoming board S (fla layout). The UT transform turns C "
        "erase-then-write steps into one triangular solve; only the last line is sequential across "
        "chunks (DeltaNet paper App. B, arXiv 2406.06484; fla `fla/ops/delta_rule/README.md`)."
    ),
    key="ch_formula",
)
code(delta_rule.chunk, key="ch_code")
go_deeper_chunks()
still_missing(
    _(
        "DeltaNet can now rewrite entries and train fast. But it can only fix entries one key at a time: "
        "when the conversation moves to a new topic, the old topic stays on the board until each of its "
        "keys happens to be overwritten. It cannot forget in bulk."
    )
)
next_lesson("chunks")
