"""The Step: its controls (Step / Back / Reset / Play) and its figures, built once and patched per step.

`step_controls` keeps the step in the reader's own `st.session_state` and, while playing, moves it on a
timer. A Step click reruns the lesson's stepping part (an `st.fragment` around the step controls and
what moves with them); building and validating a plotly figure costs milliseconds, while a step of
a precomputed run changes only a few arrays. So each stepped picture is built (and validated) once
per run at a reference step and kept as its plain dict (`core.figures.figure_dict.as_dict`), and
every step only swaps in its own values (`core.figures.figure_dict.patched`, through the figure
module's `*_step` function, which returns the patched dict). Each step's figures are kept as
`ui.charts.ReadyChart`s — the dict sent, its title and its words, worked out once from the patched
dict — so a warm rerun or a Back click costs one cache look-up and the JSON encoding. Both layers are `st.cache_resource`, shared
read-only by all readers.

    figures = stepped_figures(
        "gpt2",                      # scope: one per page (keeps pages' entries apart)
        settings,                    # key: everything the pictures depend on besides the step
        t,                           # the step shown
        {
            "grid": Stepped(         # built once per key, patched per step
                base=lambda: recompute_grid_figure(run.traces, n, p, TITLE),
                patch=lambda base, t: recompute_grid_step(base, run.traces, t),
            ),
            "work": lambda t: work_figure(..., shown=t),  # a plain callable: rebuilt per step (cached)
        },
    )
    show_figure(figures["grid"], key="gpt2_grid")   # a ReadyChart

`built_once(scope, key, build)` caches figures that do not step (whole-run charts, the real
model's pictures) the same way; a build that returns `ui.charts.ready_chart(figure)` is drawn with no
work on a rerun. The key must capture everything the callables read: they are
not hashed (their closures may hold a run), only the scope, the key and the step are — and the
reader's language (`core.i18n.language`), since a figure's words are in it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from core.figures.figure_dict import as_dict
from core.i18n import _, language
from ui.charts import ReadyChart, ready_chart


@dataclass(frozen=True)
class Stepped:
    """One stepped picture: `base()` builds the full figure; `patch(base_dict, step)` moves its plain
    dict to a step (a `*_step` function of core/figures: the patched dict).

    base_key: what the base depends on, when that is less than the page's key (e.g. only the
    layer sizes for a grid whose title and picks are patched in); None = the page's key.
    """

    base: Callable[[], go.Figure]
    patch: Callable[[dict, int], dict]
    base_key: Hashable | None = None


Part = Stepped | Callable[[int], dict | go.Figure]


def stepped_figures(scope: str, key: Hashable, step: int, parts: dict[str, Part]) -> dict[str, ReadyChart]:
    """The charts at `step`, made once per (scope, key, step) and shared read-only (see the module doc)."""
    return _at_step(scope, key, int(step), tuple(parts), language(), _parts=parts)


def built_once(scope: str, key: Hashable, build: Callable[[], Any]) -> Any:
    """`build()` once per (scope, key), shared read-only: figures that do not change with the step."""
    return _once(scope, key, language(), _build=build)


# An entry is one step's charts with the dicts `ui.charts.show_figure` sends, up to ~0.3 MB for
# the KV cache page's; 1024 entries bound that, and a step that fell out is patched again.
@st.cache_resource(max_entries=1024, show_spinner=False)
def _at_step(
    scope: str, key: Hashable, step: int, names: tuple[str, ...], lang: str, _parts: dict[str, Part]
) -> dict[str, ReadyChart]:
    out = {}
    for name, part in _parts.items():
        if isinstance(part, Stepped):
            base_key = key if part.base_key is None else part.base_key
            out[name] = ready_chart(part.patch(_base(scope, base_key, name, lang, _build=part.base), step))
        else:
            out[name] = ready_chart(part(step))
    return out


@st.cache_resource(max_entries=256, show_spinner=False)
def _base(scope: str, key: Hashable, name: str, lang: str, _build: Callable[[], go.Figure]) -> dict:
    return as_dict(_build())


@st.cache_resource(max_entries=256, show_spinner=False)
def _once(scope: str, key: Hashable, lang: str, _build: Callable[[], Any]) -> Any:
    return _build()


# -- the Step controls ------------------------------------------------------------------------


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
