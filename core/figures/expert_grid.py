"""Experts' expert grid: every expert of one MoE layer as a dot, shared, picked or asleep."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.figure_dict import patched
from core.figures.style import COLORS, base_layout
from core.i18n import _


def _grid_columns(num_routed: int) -> int:
    """Columns of the expert grid: about twice as wide as tall."""
    return max(2, int(np.ceil(np.sqrt(num_routed * 2))))


def _grid_rows(num_routed: int, num_shared: int) -> int:
    """Rows the grid takes: the shared experts' row(s), one empty row, then the routed experts."""
    cols = _grid_columns(num_routed)
    return _shared_rows(num_shared, cols) + 1 + int(np.ceil(num_routed / cols))


def _shared_rows(num_shared: int, cols: int) -> int:
    """Rows the shared experts take, each one cell apart from the next."""
    return int(np.ceil(2 * num_shared / cols)) if num_shared else 0


def _expert_dots(num_routed: int, num_shared: int, picked: list[int]) -> list[dict]:
    """Grid positions and legend names of the asleep, shared and picked experts (in that order).

    The shared experts sit in a row of their own above the routed ones, one empty cell apart, so
    they read as separate always-on experts (side by side on a phone they merged into one block)."""
    cols = _grid_columns(num_routed)
    shared = np.arange(num_shared) * 2
    routed = np.arange(num_routed)
    top = _shared_rows(num_shared, cols) + 1
    routed_x, routed_y = routed % cols, top + routed // cols
    woken = np.zeros(num_routed, dtype=bool)
    woken[list(picked)] = True
    names = {
        "asleep": _("asleep ({n})").format(n=num_routed - len(picked)),
        "shared": _("shared, always on ({n})").format(n=num_shared),
        "picked": _("routed, picked for this token ({k} of {n})").format(k=len(picked), n=num_routed),
    }
    positions = {
        "asleep": (routed_x[~woken], routed_y[~woken]),
        "shared": (shared % cols, shared // cols),
        "picked": (routed_x[woken], routed_y[woken]),
    }
    return [{"x": positions[key][0], "y": positions[key][1], "name": name} for key, name in names.items()]


def expert_grid_step(base: dict, num_routed: int, num_shared: int, picked: list[int], title: str) -> dict:
    """`expert_grid_figure` with other experts picked, from that figure's dict (same layer sizes)."""
    dots = dict(enumerate(_expert_dots(num_routed, num_shared, picked)))
    return patched(base, dots, {"title": {"text": title}})


def expert_grid_figure(
    num_routed: int, num_shared: int, top_k: int, picked: list[int], title: str
) -> go.Figure:
    """Every expert of one MoE layer as a dot: shared (always on), the k picked, the rest asleep."""
    total = num_routed + num_shared
    # a big layer (K3: 898) keeps small dots on a lattice that fills the chart, so on a phone they
    # stay apart instead of merging into one grey slab under white space; a small one keeps squares
    big = total > 64
    fig = go.Figure()
    styles = {
        "asleep": ("#ced4da", 4 if big else 6),
        "shared": (COLORS["dense"], 11),
        "picked": (COLORS["moe"], 11),
    }
    dots = _expert_dots(num_routed, num_shared, picked)
    for (color, size), dot in zip(styles.values(), dots, strict=True):
        fig.add_scatter(
            x=dot["x"],
            y=dot["y"],
            mode="markers",
            name=dot["name"],
            marker=dict(color=color, size=size, symbol="square"),
            hoverinfo="skip",
        )
    base_layout(fig, title=title, height=max(240, 16 * _grid_rows(num_routed, num_shared) + 110))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, autorange="reversed", scaleanchor=None if big else "x")
    if big:
        fig.update_layout(margin_l=10, margin_r=10)
    return fig
