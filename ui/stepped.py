"""Build a stepped figure once, patch it per step: the caching idiom of every stepping lesson.

A Step click reruns the lesson's stepping part (an `st.fragment` around the step controls and
what moves with them); building and validating a plotly figure costs tens of milliseconds, while a
step of a precomputed run changes only a few arrays. So each stepped picture is built (and
validated) once per run at a reference step, kept as a dict, and every step only swaps in its own
values (`core.figures.style.patched_figure`, through the figure module's `*_step` function). Both
layers are `st.cache_resource`, shared read-only by all readers: a warm rerun or a Back click
costs one cache look-up, and `ui.lesson.show_figure` keeps the dict it sends on the figure, so a
figure already shown once costs only its JSON encoding.

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
    show_figure(figures["grid"], key="gpt2_grid")

`built_once(scope, key, build)` caches figures that do not step (whole-run charts, the real
model's pictures) the same way. The key must capture everything the callables read: they are
not hashed (their closures may hold a run), only the scope, the key and the step are.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
import streamlit as st


@dataclass(frozen=True)
class Stepped:
    """One stepped picture: `base()` builds the full figure; `patch(base_dict, step)` moves it to a step.

    base_key: what the base depends on, when that is less than the page's key (e.g. only the
    layer sizes for a grid whose title and picks are patched in); None = the page's key.
    """

    base: Callable[[], go.Figure]
    patch: Callable[[dict, int], go.Figure]
    base_key: Hashable | None = None


Part = Stepped | Callable[[int], go.Figure]


def stepped_figures(scope: str, key: Hashable, step: int, parts: dict[str, Part]) -> dict[str, go.Figure]:
    """The figures at `step`, built once per (scope, key, step) and shared read-only (see the module doc)."""
    return _at_step(scope, key, int(step), tuple(parts), _parts=parts)


def built_once(scope: str, key: Hashable, build: Callable[[], Any]) -> Any:
    """`build()` once per (scope, key), shared read-only: figures that do not change with the step."""
    return _once(scope, key, _build=build)


# An entry is one step's figures with the dicts `ui.lesson.show_figure` sends (kept on each figure),
# up to ~0.3 MB for lesson 2's; 1024 entries bound that, and a step that fell out is patched again.
@st.cache_resource(max_entries=1024, show_spinner=False)
def _at_step(scope: str, key: Hashable, step: int, names: tuple[str, ...], _parts: dict[str, Part]) -> dict:
    out = {}
    for name, part in _parts.items():
        if isinstance(part, Stepped):
            base_key = key if part.base_key is None else part.base_key
            out[name] = part.patch(_base(scope, base_key, name, _build=part.base), step)
        else:
            out[name] = part(step)
    return out


@st.cache_resource(max_entries=256, show_spinner=False)
def _base(scope: str, key: Hashable, name: str, _build: Callable[[], go.Figure]) -> dict:
    return _build().to_dict()


@st.cache_resource(max_entries=256, show_spinner=False)
def _once(scope: str, key: Hashable, _build: Callable[[], Any]) -> Any:
    return _build()
