"""The lesson frame every page follows, and the few widgets every lesson shares.

Frame (docs/architecture.md, Lesson frame): the problem the last stage left → the live model → what to
notice → the formula and the code → what is still missing → the next lesson.
"""

from __future__ import annotations

import inspect

import plotly.graph_objects as go
import streamlit as st

from core.figures.describe import chart_title, describe
from core.figures.style import TITLE_MARGIN
from ui.course import lesson, next_available
from ui.text import plain

PLOTLY_CONFIG = {"displayModeBar": False, "responsive": True}


def lesson_header(slug: str) -> None:
    """Title and one-line subtitle of the lesson `slug`, from the course outline."""
    item = lesson(slug)
    st.title(item.label)
    st.caption(item.subtitle)
    if item.takeaway:  # the lesson's point before anything else, for a reader who reads no further
        with st.container(border=True, key="in_one_sentence"):
            st.markdown(f"**:material/lightbulb: In one sentence.** {item.takeaway}")


def problem(md: str) -> None:
    """The problem the previous stage left, in two or three plain sentences."""
    with st.container(border=True):
        st.markdown("**:material/report: The problem the last stage left**")
        st.markdown(md)


def notice(question: str, answer: str, key: str) -> None:
    """A 'predict before you click' prompt: the question in view, the answer behind a reveal."""
    with st.container(border=True):
        st.markdown(f"**:material/psychology_alt: Predict before you click.** {question}")
        if st.toggle("Show the answer", key=f"{key}_reveal"):
            st.markdown(answer)


def formula(latex: str, caption: str = "", key: str = "formula") -> None:
    """The maths behind the picture, hidden until the reader asks for it."""
    if st.toggle("Show the formula", key=key):
        st.latex(latex)
        if caption:
            st.caption(caption)


def code(*objects, key: str = "code") -> None:
    """The real source of the core functions the page runs (not a copy: read at run time)."""
    if st.toggle("Show the code", key=key):
        for obj in objects:
            module = getattr(obj, "__module__", "")
            st.caption(f"`{module}.{obj.__qualname__}`")
            st.code(inspect.getsource(obj), language="python")


def still_missing(md: str) -> None:
    """What this stage still cannot do — the bridge to the next lesson."""
    with st.container(border=True):
        st.markdown("**:material/arrow_forward: What is still missing**")
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
        st.markdown("**That is the end of the course.** Go back to the map to revisit any stage.")
        return
    link_to(item.slug, f"Next: {item.label}")  # short: a link label is cut, not wrapped, on a phone
    st.caption(item.subtitle)


def show_figure(fig: go.Figure | dict, key: str) -> None:
    """Draw a plotly figure exactly as built (theme=None keeps fixed colour ranges), with its text
    alternative under it: the chart in words, computed from its own data (`core.figures.describe`),
    behind a "Describe this chart" expander that a screen reader and a keyboard can open.

    A figure's wire dict and its words are worked out once per figure object and kept on it, so a
    figure shared through a cache (`ui.stepped`) costs a Step click only its JSON encoding.

    The chart's title is shown as text above it, not drawn by plotly: text wraps, and a plotly
    title is cut at the chart's edge (on a phone the planner's "… on 1 × RTX 4090 24GB — does not
    fit" lost its verdict)."""
    spec, title, words = _prepared(fig)
    if title:
        st.markdown(f"**{plain(title)}**")
    st.plotly_chart(_ReadyFigure(spec), key=key, theme=None, width="stretch", config=PLOTLY_CONFIG)
    with st.expander("Describe this chart", icon=":material/description:"):
        st.markdown(words)


def charts_side_by_side(*panels: tuple[str, go.Figure | dict, str]) -> None:
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


class _ReadyFigure(go.Figure):
    """A figure whose dict is already made: `st.plotly_chart` asks a plotly figure for `to_dict()`
    (a deep copy with every array turned to base64) and a plain dict would be validated again, so
    this hands over the dict made once in `_prepared`. Read-only; only `to_dict` is usable."""

    def __init__(self, spec: dict) -> None:  # no go.Figure.__init__: nothing to validate or copy
        object.__setattr__(self, "_ready_spec", spec)

    def to_dict(self) -> dict:
        return self._ready_spec


def _prepared(fig: go.Figure | dict) -> tuple[dict, str, str]:
    """(the figure as sent, its title in plain words, its words), made once per figure object and
    kept on it: a figure handed to `show_figure` is final (figures shared through caches are read-only)."""
    ready = getattr(fig, "_course_ready", None) if isinstance(fig, go.Figure) else None
    if ready is not None:
        return ready
    spec = slim_spec(fig.to_dict() if isinstance(fig, go.Figure) else go.Figure(fig).to_dict())
    shown = untitled(spec)
    ready = (shown, chart_title(shown), _escape_markdown(describe(shown)))
    if isinstance(fig, go.Figure):
        object.__setattr__(fig, "_course_ready", ready)
    return ready


def untitled(spec: dict) -> dict:
    """The figure dict without its title (shown as text above the chart), the top margin that held
    it given back to the plot (plotly still widens a margin a legend needs); the title is kept in
    `layout.meta` so the chart's words (`core.figures.describe`) still name it."""
    layout = spec.get("layout", {})
    title = layout.get("title")
    if not (isinstance(title, dict) and title.get("text")):
        return spec
    margin = dict(layout.get("margin", {}))
    margin["t"] = max(20, margin.get("t", TITLE_MARGIN) - (TITLE_MARGIN - 20))
    meta = layout.get("meta") if isinstance(layout.get("meta"), dict) else {}
    moved = {"title": {**title, "text": ""}, "margin": margin, "meta": {**meta, "title": title["text"]}}
    return {**spec, "layout": {**layout, **moved}}


def slim_spec(spec: dict) -> dict:
    """The figure dict without the parts of its template no trace can use: the template carries
    defaults for every trace type (~2 kB), plotly.js reads only those of the types drawn."""
    template = spec.get("layout", {}).get("template")
    if isinstance(template, dict) and isinstance(template.get("data"), dict):
        kinds = {trace.get("type", "scatter") for trace in spec.get("data", ())}
        data = {kind: styles for kind, styles in template["data"].items() if kind in kinds}
        spec = {**spec, "layout": {**spec["layout"], "template": {**template, "data": data}}}
    return spec


def _escape_markdown(words: str) -> str:
    """Plain words shown as markdown: no emphasis, links, HTML or LaTeX from chart titles (which can
    quote reader text, such as a pasted config's name): `ui.text.plain`."""
    return plain(words)


def prompt_input(key: str, default: str, max_chars: int = 400, label: str = "Your text") -> str:
    """The reader's own text: any characters are fine (emoji, Japanese …); they become bytes."""
    return st.text_input(
        label,
        value=default,
        max_chars=max_chars,
        key=key,
        help="Anything you like: the tiny models read raw UTF-8 bytes, so emoji and any script work.",
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
    unit: str = "token",
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
    total = max(0, int(total))
    start = min(max(0, int(start)), total)
    st.session_state.setdefault(key, start)
    st.session_state.setdefault(f"{key}_playing", False)
    st.session_state[key] = min(max(st.session_state[key], start), total)
    playing = st.session_state[f"{key}_playing"]

    cols = st.columns([1, 1, 1, 1, 1.6], vertical_alignment="center")
    # (label, key suffix, icon, on_click, args); Step is the primary action
    buttons = (
        ("Step", "step", ":material/skip_next:", _advance, (key, total, 1, start)),
        ("Back", "back", ":material/skip_previous:", _advance, (key, total, -1, start)),
        ("Reset", "reset", ":material/restart_alt:", _reset, (key, start)),
        (
            "Pause" if playing else "Play",
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
        status = f"**{before_start}** — Step replays from {unit} 1 of {total}"
    else:
        end = " — the end; press Reset to start again" if t >= total > 0 else ""
        status = f"**{unit} {t} of {total}{end}**"
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
