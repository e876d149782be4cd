"""Build a stepped figure once, patch it per step: the caching idiom of every stepping lesson.

A Step click reruns the lesson's stepping part (an `st.fragment` around the step controls and
what moves with them); building and validating a plotly figure costs milliseconds, while a step of
a precomputed run changes only a few arrays. So each stepped picture is built (and validated) once
per run at a reference step and kept as its plain dict (`core.figures.figure_dict.as_dict`), and
every step only swaps in its own values (`core.figures.figure_dict.patched`, through the figure
module's `*_step` function). Each step's figures are kept as `ui.lesson.ReadyChart`s — the dict
sent, its title and its words, worked out once from the patched dict — so a warm rerun or a Back
click costs one cache look-up and the JSON encoding. Both layers are `st.cache_resource`, shared
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
model's pictures) the same way. The key must capture everything the callables read: they are
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
from core.i18n import language
from ui.lesson import ReadyChart, ready_chart


@dataclass(frozen=True)
class Stepped:
    """One stepped picture: `base()` builds the full figure; `patch(base_dict, step)` moves its plain
    dict to a step (a dict; a go.Figure from the `*_step` functions not yet moved to dicts).

    base_key: what the base depends on, when that is less than the page's key (e.g. only the
    layer sizes for a grid whose title and picks are patched in); None = the page's key.
    """

    base: Callable[[], go.Figure]
    patch: Callable[[dict, int], dict | go.Figure]
    base_key: Hashable | None = None


Part = Stepped | Callable[[int], dict | go.Figure]


def stepped_figures(scope: str, key: Hashable, step: int, parts: dict[str, Part]) -> dict[str, ReadyChart]:
    """The charts at `step`, made once per (scope, key, step) and shared read-only (see the module doc)."""
    return _at_step(scope, key, int(step), tuple(parts), language(), _parts=parts)


def built_once(scope: str, key: Hashable, build: Callable[[], Any]) -> Any:
    """`build()` once per (scope, key), shared read-only: figures that do not change with the step."""
    return _once(scope, key, language(), _build=build)


# An entry is one step's charts with the dicts `ui.lesson.show_figure` sends, up to ~0.3 MB for
# lesson 2's; 1024 entries bound that, and a step that fell out is patched again.
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
