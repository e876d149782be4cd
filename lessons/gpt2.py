"""GPT-2, plain: every new token (a byte, for the shipped model) re-reads the whole text."""

from __future__ import annotations

import streamlit as st

from core.figures.generation import ms_per_token_figure, ms_per_token_step, work_figure, work_step
from core.figures.recompute_grid import grid_counts, recompute_grid_figure, recompute_grid_step
from core.generation import GenerationRun, Session, run_generation
from core.i18n import N_, _
from core.models.gpt2 import GPT2
from core.models.gpt2_cache import RunSeries, positions_computed_formula
from core.specs import SPECS
from core.units import counted, format_count
from ui.charts import charts_side_by_side, show_figure
from ui.depth import engineer, in_depth
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing
from ui.models.gpt2 import (
    LiveGPT2,
    RunSettings,
    choose_model,
    describe_real,
    generation_settings,
    say_if_the_window_filled,
    show_tokens,
    show_top_next,
)
from ui.run_captions import grid_caption
from ui.stepped import Stepped, step_controls, stepped_figures

DEFAULT_PROMPT = "One day, Mia went to the "


GRID_TITLE = N_("Which positions the model ran at each step")  # translated where the figure shows it


def timing_note(repeats: int) -> str:
    """How each step was timed (`LiveGPT2.run_options`): once, its own time shown beside the running median."""
    if repeats == 1:
        return _("each step run once")
    return _("each step run {repeats} times, fastest kept").format(repeats=repeats)


@st.cache_data(show_spinner=False, max_entries=32)
def precompute(settings: RunSettings, _live: LiveGPT2) -> GenerationRun:
    """The run without a cache, once per settings (`_live` is the model `settings.model` names: it is
    not hashed)."""
    run = run_generation(
        _live.model,
        list(settings.prompt),
        settings.new_tokens,
        use_cache=False,
        sampling=settings.sampling,
        **_live.run_options,
    )
    return run.without_logits()  # the top-5 per step is kept in run.top


def step_figures(
    live: LiveGPT2, settings: RunSettings, step: int, run: GenerationRun, series: RunSeries
) -> dict:
    """The pictures at `step` (0: the finished run, the grid framing its first dozen steps): each
    built once per run (at its last step) and patched per step; the time chart at Engineer depth only."""
    p, n = len(run.prompt_ids), len(run.traces)
    steps, work, lengths, ms = series.steps, series.cumulative_work, series.text_lengths, series.wall_ms
    grid = Stepped(
        base=lambda: recompute_grid_figure(run.traces, n, p, GRID_TITLE, unit=live.unit),
        patch=lambda base, step: recompute_grid_step(base, run.traces, step, GRID_TITLE),
    )

    def formula_counts() -> list[int]:
        return [positions_computed_formula(p, s, use_cache=False) for s in steps]

    parts = {
        "grid": grid,
        "work": Stepped(
            base=lambda: work_figure(steps, work, formula_counts(), shown=n),
            patch=lambda base, step: work_step(base, steps, work, shown=step or n),
        ),
    }
    if engineer():  # the measured time per step: built only where it is shown
        parts["ms"] = Stepped(
            base=lambda: ms_per_token_figure(lengths, ms, shown=n, unit=live.unit),
            patch=lambda base, step: ms_per_token_step(base, lengths, ms, shown=step or n),
        )
    return stepped_figures("gpt2", settings, step, parts)


lesson_header("gpt2")
new_words("transformer", "vector", "residual", "seed", engineer_keys=("checkpoint",), here="gpt2")
problem(
    _(
        "A language model writes one piece of text at a time: it reads everything so far and guesses "
        "what comes next. A *transformer* (the design of GPT-2 and of nearly every model since: a stack of "
        "identical blocks, each repeating the same kind of work) **without a cache** does that the naive way: to "
        "write the next piece it "
        "reads **the whole text again from the start**, redoing all the work it had just done. This lesson "
        "switches the cache off to show that cost."
    )
)

live = choose_model("gpt2")
model, unit = live.model, live.unit_word
cfg = model.config

if live.real:
    describe_real(live)
else:
    st.markdown(
        _(
            "Below is a real GPT-2-shaped model, shrunk to fit a laptop: {layers} *blocks* instead of "
            "{gpt2_layers} (a block is one repeated unit: each byte looks back at the earlier ones, "
            "then a small network reworks what it found; the block adds its result onto the byte's running "
            "*vector*, a list of numbers that stands for it, called the *residual*), "
            "{params:,} numbers (*parameters*) instead of {gpt2_params}. "
            "It reads **bytes** — one letter of plain English is one byte, a Japanese character three, an emoji "
            "four — and was trained briefly on a small made-up text, so expect English-ish words, not wisdom. It "
            "can look at most {window} bytes back: that is its *context window*. When the text fills it, "
            "generation simply stops."
        ).format(
            layers=cfg.n_layer,
            gpt2_layers=SPECS["gpt2"].num_layers,
            params=model.num_params(),
            gpt2_params=format_count(SPECS["gpt2"].published_params),
            window=cfg.block_size,
        )
    )
    if engineer():
        st.caption(
            _(
                "Trained for about 29 minutes on one CPU thread (1,722 s; assets/gpt2/MODEL_CARD.md) on a small "
                "made-up corpus. At a full window it does not slide: the oldest bytes are never dropped."
            )
        )

in_depth(
    _(
        "GPT-2's own code already kept a cache (the next lesson); this page switches it off to show what that "
        "saves."
    ),
    _(
        "A note on history: GPT-2 itself did not generate this way. OpenAI's 2019 sampling code already kept "
        "past keys and values (`past` / `presents` in openai/gpt-2 `src/sample.py`) — the KV cache of the next "
        "lesson. The article this course retells says “GPT-2 recomputed everything”; that is a teaching "
        "simplification for what any transformer does without a cache."
    ),
    show=st.caption,
)

settings = generation_settings("gpt2", DEFAULT_PROMPT, live)
with st.spinner(_("Generating (recomputing the whole text at every step)…")):
    run = precompute(settings, _live=live)
say_if_the_window_filled(run, live)
series = RunSeries(run.traces)

st.subheader(_("Step through it"))


@st.fragment
def stepper(live: LiveGPT2, settings: RunSettings, run: GenerationRun, series: RunSeries) -> None:
    """Step controls and everything that moves with them: a Step click reruns only this part."""
    unit, p = live.unit_word, len(run.prompt_ids)
    step = step_controls("gpt2_t", len(run.traces), unit=unit, before_start=_("the finished run"))
    t = step or len(run.traces)  # before the first Step: the finished run, every step timed

    written = live.tokenizer.decode(run.prompt_ids + run.new_ids[:t])
    st.code(written or " ", language=None, wrap_lines=True)
    st.caption(
        _("Your prompt is the first {count}; each Step adds one {unit} chosen by the model.").format(
            count=counted(p, live.unit), unit=unit
        )
    )
    show_tokens(live, run.prompt_ids + run.new_ids[:t])
    if t and engineer():  # the model's guesses: a second idea, for engineers
        show_top_next(live, run.top[t - 1], key="gpt2_top5")

    m1, m2, m3, m4 = st.columns(4)
    if t == 0:
        m1.metric(_("Positions run this step"), "—")
        m2.metric(_("Total positions run"), 0)
        m3.metric(_("Time for this step"), "—")
    else:
        m1.metric(
            _("Positions run this step"),
            series.positions_computed[t - 1],
            help=_("The model ran every {unit} of the text through all its layers again.").format(unit=unit),
        )
        m2.metric(
            _("Total positions run"),
            f"{series.cumulative_work[t - 1]:,}",
            help=_("Counted from the model's own step records."),
        )
        m3.metric(
            _("Time for this step"), f"{series.wall_ms[t - 1]:.1f} ms", help=_("Measured on this server.")
        )
    expected = positions_computed_formula(p, t, use_cache=False)
    run_so_far = series.cumulative_work[t - 1] if t else 0
    m4.metric(
        _("Formula says"),
        f"{expected:,}",
        delta=_("matches the count") if expected == run_so_far else _("MISMATCH"),
        delta_color="normal" if expected == run_so_far else "inverse",
    )

    figures = step_figures(live, settings, step, run, series)
    show_figure(figures["grid"], key="gpt2_grid")
    st.caption(grid_caption(grid_counts(run.traces, step), p, live.unit, cached=False))

    work = (_("**Work piles up** — total positions run so far"), figures["work"], "gpt2_work")
    if engineer():
        speed = (
            _("**Each step gets slower** — measured time per {unit}").format(unit=unit),
            figures["ms"],
            "gpt2_ms",
        )
        charts_side_by_side(work, speed)
    else:
        charts_side_by_side(work)
    st.caption(
        _(
            "Dots: the positions the model has run so far, counted; line: what the formula predicts. It bends "
            "upwards because each step runs one more {unit} than the step before."
        ).format(unit=unit)
    )


stepper(live, settings, run, series)
if engineer():
    st.caption(
        _(
            "Times are wall-clock milliseconds measured when this generation was first computed on the server "
            "({timing}), which other work shares. Faint dots are single steps "
            "(a dot far above the line is another program taking the CPU for a moment); the line is the running "
            "median of 7 steps. `python -m bench.generation` measures it carefully."
        ).format(timing=timing_note(live.run_options["timing_repeats"]))
    )

notice(
    _(
        "Start from a 1-{unit} prompt: after 50 steps the model has run 1 + 2 + … + 50 = 1,275 positions. "
        "After 100 steps: about twice as many, or more?"
    ).format(unit=unit),
    _(
        "About **four times** as many. Step n re-reads n {unit}s, so the total is 1 + 2 + … + n = n(n+1)/2: "
        "double the steps and the work roughly quadruples (5,050 after 100 steps against 1,275 after 50). A longer "
        "prompt skips the first steps, which is why the counters above use the formula below with p."
    ).format(unit=unit),
    key="gpt2_notice_total",
)
notice(
    _("Between two steps, which numbers inside the model actually change for the old {unit}s?").format(
        unit=unit
    ),
    _(
        "None. {Unit} 3 can only look at {unit}s 0–3, so its keys, values and outputs are the same "
        "at every step. All the light-blue work in the picture produces numbers the model already had — the waste "
        "the next lesson removes."
    ).format(Unit=unit.capitalize(), unit=unit),
    key="gpt2_notice_same",
)

formula(
    rf"\text{{work after the text reaches }} n \text{{ {live.unit}s}} = \sum_{{k=1}}^{{n}} k = \frac{{n(n+1)}}{{2}}"
    rf"\quad\text{{(from a prompt of }} p \text{{ {live.unit}s: }} \tfrac{{n(n+1)}}{{2}} - \tfrac{{(p-1)p}}{{2}}\text{{)}}",
    caption=_(
        "Each step runs every {unit} of the text through every layer: cost per step grows like n, total cost like n²."
    ).format(unit=unit),
    key="gpt2_formula",
)
code(Session.step, GPT2.forward_with_attention, positions_computed_formula, key="gpt2_code")

still_missing(
    _(
        "Old {unit}s are computed again and again although their numbers never change. Keeping them — "
        "their **keys and values** — would make every step cost one {unit}'s work. That is the KV cache."
    ).format(unit=unit)
)
next_lesson("gpt2")
