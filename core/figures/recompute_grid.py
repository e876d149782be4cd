"""Which positions the model ran at each step (the GPT-2 and KV cache pages): the recompute grid and its counts.

Rows are generation steps (a dozen framed at a time), columns positions in the text; without a
cache each row re-runs every position to its left, with one each row runs only the new one. The
figure is built once per run (`recompute_grid_figure`) and moved to a step as a plain dict
(`recompute_grid_step`, core/figures/figure_dict.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.figures.figure_dict import patched
from core.figures.style import COLORS, base_layout
from core.i18n import _
from core.trace import Trace

# Cell states of the recompute picture.
NOT_RUN, RECOMPUTED, NEW = 0.0, 1.0, 2.0
_WORK_SCALE = [
    [0.0, "#f1f3f5"],
    [0.33, "#f1f3f5"],
    [0.33, "#91a7ff"],
    [0.66, "#91a7ff"],
    [0.66, COLORS["attention"]],
    [1.0, COLORS["attention"]],
]


def computed_positions(trace: Trace) -> range:
    """The positions the model ran at this step (the whole prefix, or only the new ones)."""
    return range(trace.position - trace.positions_computed + 1, trace.position + 1)


def work_grid(traces: list[Trace], shown: int) -> np.ndarray:
    """(shown, positions) uint8 grid of the steps taken so far: NEW for the position read for the
    first time, RECOMPUTED for positions run again, NOT_RUN elsewhere. One byte a cell, and only
    the rows stepped travel to the browser (the figure's y axis spans the whole run)."""
    n_positions = traces[-1].position + 1 if traces else 0
    grid = np.full((min(shown, len(traces)), n_positions), NOT_RUN, dtype=np.uint8)
    seen = 0  # positions read at least once before this step
    for row, trace in enumerate(traces[:shown]):
        for pos in computed_positions(trace):
            grid[row, pos] = RECOMPUTED if pos < seen else NEW
        seen = max(seen, trace.position + 1)
    return grid


GRID_STEPS = 12  # the grid's frame: a dozen steps, so every cell is big enough to read


@dataclass(frozen=True)
class GridFrame:
    """The steps the recompute picture frames (1-based, inclusive) and how many of them are filled.

    Until the reader passes step 12 the frame is steps 1–12, filling downwards; then it follows the
    newest step (the last dozen). Step 0, a page's untouched default, frames the first dozen of the
    finished run, all filled: the whole triangle (or diagonal) of a dozen steps at once.
    """

    first: int
    last: int
    filled: int  # rows first … filled have run; 0 before anything ran

    @classmethod
    def at(cls, total: int, shown: int) -> GridFrame:
        if total <= 0:
            return cls(1, 0, 0)
        if shown <= 0:
            last = min(GRID_STEPS, total)
            return cls(1, last, last)
        last = min(total, max(shown, GRID_STEPS))
        return cls(max(1, last - GRID_STEPS + 1), last, min(shown, total))

    @property
    def steps(self) -> str:
        if self.first == self.last:
            return _("step {first}").format(first=self.first)
        return _("steps {first}–{last}").format(first=self.first, last=self.last)


@dataclass(frozen=True)
class GridCounts:
    """What the filled rows of a frame ran: positions read for the first time and positions run again."""

    frame: GridFrame
    new: int
    recomputed: int

    @property
    def total(self) -> int:
        return self.new + self.recomputed


def grid_counts(traces: list[Trace], shown: int) -> GridCounts:
    """Counted from the steps' own records, for the sentence under the picture."""
    frame = GridFrame.at(len(traces), shown)
    grid = work_grid(traces, frame.filled)[frame.first - 1 :]
    return GridCounts(frame, int((grid == NEW).sum()), int((grid == RECOMPUTED).sum()))


def _grid_view(traces: list[Trace], shown: int, title: str) -> tuple[dict, dict]:
    """The step-dependent part of the recompute picture: the heatmap's rows (z, y, x) and the
    axes' ranges and the title naming the steps framed. Only the framed, filled rows travel."""
    frame = GridFrame.at(len(traces), shown)
    n_positions = traces[frame.last - 1].position + 1 if frame.last else 0
    if frame.filled >= frame.first:
        z = work_grid(traces, frame.filled)[frame.first - 1 :, :n_positions]
        y = np.arange(frame.first, frame.filled + 1)
    else:  # nothing run yet: one blank row
        z, y = np.full((1, n_positions), np.nan, dtype=np.float32), np.array([frame.first])
    rows = {"z": z, "y": y, "x": np.arange(n_positions)}
    layout = {
        "title": {
            "text": _("{title} ({steps} of {total})").format(
                title=_(title), steps=frame.steps, total=len(traces)
            )
            if title
            else ""
        },
        # the frame is fixed while it holds the steps shown, so the grid fills downwards
        "yaxis": {"range": [frame.last + 0.5, frame.first - 0.5]},
        "xaxis": {"range": [-0.5, n_positions - 0.5]},
    }
    return rows, layout


def recompute_grid_figure(
    traces: list[Trace], shown: int, prompt_length: int, title: str = "", unit: str = "byte"
) -> go.Figure:
    """Rows = generation step (a dozen at a time, `GridFrame`), columns = position in the text; a cell
    is coloured when the model ran that position at that step. Without a cache each row re-runs
    every position to its left, so the rows form a triangle (a trapezoid after a long prompt); with
    one, the prompt's row and then one cell per row, a diagonal."""
    rows, layout = _grid_view(traces, shown, title)
    trace = go.Heatmap(
        **rows,
        zmin=0,
        zmax=2,
        colorscale=_WORK_SCALE,
        hovertemplate=_("step %{y}, position %{x}<br>%{z}: 0 = not run, 1 = recomputed, 2 = new")
        + "<extra></extra>",
        colorbar=dict(
            tickvals=[1 / 3, 1, 5 / 3],
            ticktext=[_("not run"), _("recomputed"), _("new")],
            thickness=12,
        ),
        xgap=1,
        ygap=1,
    )
    fig = go.Figure(trace)
    if prompt_length > 0:
        fig.add_vline(x=prompt_length - 0.5, line=dict(color=COLORS["dense"], dash="dot", width=1))
        fig.add_annotation(
            x=prompt_length - 0.5,
            y=1,
            yref="paper",
            text=_("end of prompt"),
            showarrow=False,
            xanchor="left",
            yanchor="bottom",
            font=dict(size=11, color=COLORS["dense"]),
        )
    base_layout(
        fig,
        layout["title"]["text"],
        _("position in the text ({unit} index)").format(unit=_(unit)),
        _("generation step"),
        height=380,
    )
    fig.update_yaxes(range=layout["yaxis"]["range"], autorange=False, showgrid=False, dtick=1)
    fig.update_xaxes(range=layout["xaxis"]["range"], showgrid=False)
    return fig


def recompute_grid_step(base: dict, traces: list[Trace], shown: int, title: str = "") -> dict:
    """`recompute_grid_figure` at another step, from that figure's dict (same run and title)."""
    rows, layout = _grid_view(traces, shown, title)
    return patched(base, {0: rows}, layout)
