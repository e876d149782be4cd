"""The lesson frame every page follows, and the few widgets every lesson shares.

Frame (docs/architecture.md, Lesson frame): the problem the last stage left → the live model → what to
notice → the formula and the code → what is still missing → the next lesson.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from core.figures.describe import chart_title, describe
from core.figures.figure_dict import as_dict, encoded, slim, untitled
from core.i18n import _
from ui import live_chart
from ui.course import lesson, next_available
from ui.depth import engineer, reader_depth
from ui.i18n import reader_language
from ui.text import plain


def lesson_header(slug: str) -> None:
    """Title and one-line subtitle of the lesson `slug`, from the course outline, in the reader's
    language (set here too, for a page opened on its own, outside the router)."""
    reader_language()
    reader_depth()
    item = lesson(slug)
    st.title(item.label)
    st.caption(item.subtitle)
    if item.takeaway:  # the lesson's point before anything else, for a reader who reads no further
        with st.container(border=True, key="in_one_sentence"):
            st.markdown(
                _("**:material/lightbulb: In one sentence.** {takeaway}").format(takeaway=item.takeaway)
            )


def problem(md: str) -> None:
    """The problem the previous stage left, in two or three plain sentences."""
    with st.container(border=True):
        st.markdown(_("**:material/report: The problem the last stage left**"))
        st.markdown(md)


def notice(question: str, answer: str, key: str) -> None:
    """A 'predict before you click' prompt: the question in view, the answer behind a reveal."""
    with st.container(border=True):
        st.markdown(
            _("**:material/psychology_alt: Predict before you click.** {question}").format(question=question)
        )
        if st.toggle(_("Show the answer"), key=f"{key}_reveal"):
            st.markdown(answer)


def formula(latex: str, caption: str = "", key: str = "formula") -> None:
    """The maths behind the picture, hidden until the reader asks for it."""
    if st.toggle(_("Show the formula"), key=key):
        st.latex(latex)
        if caption:
            st.caption(caption)


def code(*objects, key: str = "code") -> None:
    """The real source of the core functions the page runs (not a copy: read at run time); Engineer
    depth only (ui/depth.py)."""
    if engineer() and st.toggle(_("Show the code"), key=key):
        for obj in objects:
            module = getattr(obj, "__module__", "")
            st.caption(f"`{module}.{obj.__qualname__}`")
            st.code(inspect.getsource(obj), language="python")


def still_missing(md: str) -> None:
    """What this stage still cannot do — the bridge to the next lesson."""
    with st.container(border=True):
        st.markdown(_("**:material/arrow_forward: What is still missing**"))
        st.markdown(md)


def link_to(slug: str, label: str) -> None:
    """A link to the lesson `slug`; plain text when the page runs outside the router."""
    target = lesson(slug)  # an unknown slug fails here, also outside the router
    try:
        st.page_link(target.file, label=label, icon=":material/east:")
    except Exception:  # the page was opened on its own (tests, `streamlit run lessons/…`)
        st.markdown(f"**→ {label}**")


def next_lesson(slug: str) -> None:
    """A link to the next lesson after `slug` that exists, or the end of the course."""
    item = next_available(slug)
    if item is None:
        st.markdown(_("**That is the end of the course.** Go back to the map to revisit any stage."))
        return
    link_to(
        item.slug, _("Next: {lesson}").format(lesson=item.label)
    )  # short: a link label is cut, not wrapped, on a phone
    st.caption(item.subtitle)


def show_figure(fig: ReadyChart | dict | go.Figure, key: str) -> None:
    """Draw a plotly figure exactly as built (no theme: fixed colour ranges stay fixed), with its text
    alternative under it: the chart in words, computed from its own data (`core.figures.describe`),
    behind a "Describe this chart" expander that a screen reader and a keyboard can open.

    `fig` is a figure's dict (core/figures/figure_dict.py: `as_dict` of a built figure, or a step
    patched from one; it is not validated again), a `go.Figure` (builders not yet moved to dicts),
    or a `ReadyChart` made once and shared through a cache (`ui.stepped`), which costs a Step click
    only its JSON encoding.

    The chart's title is shown as text above it, not drawn by plotly: text wraps, and a plotly
    title is cut at the chart's edge (on a phone the planner's "… on 1 × RTX 4090 24GB — does not
    fit" lost its verdict)."""
    chart = ready_chart(fig)
    if chart.title:
        st.markdown(f"**{plain(chart.title)}**")
    live_chart.plotly_figure(chart.spec, key)  # patched in place on the next Step (ui/live_chart.py)
    with st.expander(_("Describe this chart"), icon=":material/description:"):
        st.markdown(chart.words)


@dataclass(frozen=True)
class ReadyChart:
    """A chart ready to draw: the dict sent to the browser (arrays encoded, template slimmed, title
    moved out), its title and its words (markdown-safe), all worked out from one figure dict."""

    spec: dict
    title: str
    words: str


def ready_chart(fig: ReadyChart | dict | go.Figure) -> ReadyChart:
    """The chart as drawn, its words read from the dict before its arrays are encoded. A go.Figure's
    chart is made once and kept on it: a figure handed to `show_figure` is final (figures shared
    through caches are read-only)."""
    if isinstance(fig, ReadyChart):
        return fig
    kept = getattr(fig, "_course_chart", None) if isinstance(fig, go.Figure) else None
    if kept is not None:
        return kept
    shown = untitled(as_dict(fig))
    chart = ReadyChart(encoded(slim(shown)), chart_title(shown), _escape_markdown(describe(shown)))
    if isinstance(fig, go.Figure):
        object.__setattr__(fig, "_course_chart", chart)
    return chart


def charts_side_by_side(*panels: tuple[str, ReadyChart | dict | go.Figure, str]) -> None:
    """Charts in equal columns, each (heading in markdown, or "" for none; figure; key)."""
    for column, (heading, fig, key) in zip(st.columns(len(panels)), panels, strict=True):
        with column:
            if heading:
                st.markdown(heading)
            show_figure(fig, key=key)


def data_table(rows: list[dict] | dict[str, list], key: str | None = None, pin: int = 1, **options) -> None:
    """A sortable table whose first `pin` columns stay put while the rest scrolls sideways: on a
    phone a wide table scrolls inside its frame (WCAG 1.4.10 exempts data tables), and the pinned
    columns keep each row's name in view. `options` go to `st.dataframe` (width, height)."""
    columns = list(rows if isinstance(rows, dict) else (rows[0] if rows else {}))
    pinned = {name: st.column_config.Column(pinned=True) for name in columns[:pin]}
    st.dataframe(rows, hide_index=True, key=key, column_config=pinned or None, **options)


def _escape_markdown(words: str) -> str:
    """Plain words shown as markdown: no emphasis, links, HTML or LaTeX from chart titles (which can
    quote reader text, such as a pasted config's name): `ui.text.plain`."""
    return plain(words)


def prompt_input(key: str, default: str, max_chars: int = 400, label: str = "") -> str:
    """The reader's own text: any characters are fine (emoji, Japanese …); they become bytes."""
    return st.text_input(
        label or _("Your text"),
        value=default,
        max_chars=max_chars,
        key=key,
        help=_("Anything you like: the tiny models read raw UTF-8 bytes, so emoji and any script work."),
    )


def _advance(key: str, total: int, delta: int, start: int = 0) -> None:
    st.session_state[key] = min(total, max(start, st.session_state.get(key, start) + delta))


def _reset(key: str, start: int = 0) -> None:
    st.session_state[key] = start
    st.session_state[f"{key}_playing"] = False


def _toggle_play(key: str, total: int, start: int = 0) -> None:
    playing = not st.session_state.get(f"{key}_playing", False)
    if playing and st.session_state.get(key, start) >= total:
        st.session_state[key] = start  # Play at the end starts over
    st.session_state[f"{key}_playing"] = playing


def step_controls(
    key: str,
    total: int,
    unit: str = "",
    interval_s: float = 0.8,
    *,
    start: int = 0,
    before_start: str | None = None,
) -> int:
    """Step / Back / Reset / Play for a precomputed run of `total` steps; returns the current step.

    State lives in st.session_state[key], so each reader steps on their own. Play
    advances one step per `interval_s` through a timed fragment that reruns the page.
    `start` is where a reader begins and Reset returns (1 where there is nothing to show before
    the first step). `before_start` names what a page shows at step 0 when that is not an empty
    start (e.g. "the whole run"): the status then says so, not "byte 0 of 53".
    """
    unit = unit or _("token")  # callers pass their unit translated: _("byte")
    total = max(0, int(total))
    start = min(max(0, int(start)), total)
    st.session_state.setdefault(key, start)
    st.session_state.setdefault(f"{key}_playing", False)
    st.session_state[key] = min(max(st.session_state[key], start), total)
    playing = st.session_state[f"{key}_playing"]

    cols = st.columns([1, 1, 1, 1, 1.6], vertical_alignment="center")
    # (label, key suffix, icon, on_click, args); Step is the primary action
    buttons = (
        (_("Step"), "step", ":material/skip_next:", _advance, (key, total, 1, start)),
        (_("Back"), "back", ":material/skip_previous:", _advance, (key, total, -1, start)),
        (_("Reset"), "reset", ":material/restart_alt:", _reset, (key, start)),
        (
            _("Pause") if playing else _("Play"),
            "play",
            ":material/pause:" if playing else ":material/play_arrow:",
            _toggle_play,
            (key, total, start),
        ),
    )
    for col, (label, suffix, icon, action, args) in zip(cols, buttons, strict=False):
        col.button(
            label,
            key=f"{key}_{suffix}",
            icon=icon,
            on_click=action,
            args=args,
            width="stretch",
            type="primary" if suffix == "step" else "secondary",
        )
    t = st.session_state[key]
    if t == 0 and before_start and total > 0:
        status = _("**{before_start}** — Step replays from {unit} 1 of {total}").format(
            before_start=before_start, unit=unit, total=total
        )
    elif t >= total > 0:
        status = _("**{unit} {t} of {total} — the end; press Reset to start again**").format(
            unit=unit, t=t, total=total
        )
    else:
        status = _("**{unit} {t} of {total}**").format(unit=unit, t=t, total=total)
    cols[4].markdown(status)
    if playing:
        _play_ticker(key, total, interval_s)
    return t


def _play_ticker(key: str, total: int, interval_s: float) -> None:
    """While playing, a timer fragment moves one step and reruns the page each tick."""
    armed = f"{key}_tick_armed"
    st.session_state[armed] = False  # this is a full run: the next fragment call is inline

    @st.fragment(run_every=interval_s)
    def ticker() -> None:
        if st.session_state.get(armed):
            if st.session_state[key] >= total:
                st.session_state[f"{key}_playing"] = False
            else:
                st.session_state[key] += 1
            st.rerun()
        st.session_state[armed] = True

    ticker()
