"""ui/stepped.py: a stepped figure is built once per key and patched per step; steps are cached."""

from __future__ import annotations

import plotly.graph_objects as go

from core.figures.figure_dict import patched
from ui.stepped import Stepped, built_once, stepped_figures


def test_base_built_once_per_key_and_each_step_patched_once():
    calls = {"base": 0, "patch": 0, "plain": 0}

    def base() -> go.Figure:
        calls["base"] += 1
        return go.Figure(go.Bar(x=[0, 1, 2], y=[0, 0, 0]))

    def patch(fig: dict, t: int) -> dict:
        calls["patch"] += 1
        return patched(fig, {0: {"y": [t, t, t]}})

    def plain(t: int) -> go.Figure:
        calls["plain"] += 1
        return go.Figure(go.Scatter(x=[t], y=[t]))

    parts = {"bars": Stepped(base=base, patch=patch), "dot": plain}
    first = stepped_figures("test_stepped", ("run", 1), 2, parts)
    # each part comes ready to draw (ui.charts.ReadyChart): the dict sent, its title and its words
    assert first["bars"].spec["data"][0]["y"] == [2, 2, 2] and first["dot"].spec["data"][0]["x"] == [2]
    assert "2" in first["bars"].words
    assert stepped_figures("test_stepped", ("run", 1), 2, parts) is first  # a rerun: one look-up
    stepped_figures("test_stepped", ("run", 1), 3, parts)
    assert calls == {"base": 1, "patch": 2, "plain": 2}
    stepped_figures("test_stepped", ("run", 2), 3, parts)  # another run: a new base
    assert calls["base"] == 2
    shared = Stepped(base=base, patch=patch, base_key="sizes only")
    stepped_figures("test_stepped_shared", ("text", 1), 1, {"bars": shared})
    stepped_figures("test_stepped_shared", ("text", 2), 1, {"bars": shared})
    assert calls["base"] == 3  # one base for both texts


def test_built_once_caches_per_scope_and_key():
    built = []
    for _ in range(3):
        value = built_once("test_once", "k", lambda: built.append(1) or len(built))
    assert value == 1 and built == [1]
    assert built_once("test_once", "other", lambda: "new") == "new"
