"""Pictures for Chunks: a timeline cut into chunks, hand-overs counted, speed measured.

Chunkwise-parallel DeltaNet: Yang et al. 2024 (arXiv 2406.06484) App. B; fla
`fla/ops/delta_rule/README.md`. Data in, go.Figure out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.figures.style import COLORS, base_layout, color_of
from core.i18n import N_, _
from core.ops.forms import waits_in_line

CHUNK_SHADES = ("#d0ebff", "#a5d8ff")
STEP_BY_STEP = N_("step by step")  # the label core/ops/forms gives the recurrence (English: it is data)


def shown_form(label: str) -> str:
    """A form's label in the reader's language: "step by step" is words, "C = 16" is the same in both."""
    return _(label)


def _form_colors(labels: Sequence[str]) -> list[str]:
    """The recurrence in the delta rule's colour, chunked forms in the gated rule's."""
    return [color_of("delta") if lab == STEP_BY_STEP else color_of("gated_delta") for lab in labels]


def timeline_figure(T: int, chunk_size: int, title: str = "") -> go.Figure:
    """Two rows of T tokens: step by step (a hand-over after every token) and chunked
    (tokens of a chunk computed together, the board handed over only at chunk edges)."""
    tokens = np.arange(T)
    chunk_of = tokens // chunk_size
    fig = go.Figure()
    step_row, chunk_row = _("step by step"), _("chunks of {size}").format(size=chunk_size)
    rows = {step_row: 1.0, chunk_row: 0.0}

    def token_row(row: str, name: str, marker: dict, hover: str, **extra) -> go.Scatter:
        """One row of T square markers, a token each."""
        square = dict(symbol="square", size=14, **marker)
        y = [rows[row]] * T
        return go.Scatter(
            x=tokens, y=y, mode="markers", name=name, marker=square, hovertemplate=hover, **extra
        )

    fig.add_trace(
        token_row(
            step_row,
            _("token (one at a time)"),
            dict(color=color_of("delta")),
            _("token %{x}: waits for the board the token before left<extra></extra>"),
        )
    )
    chunk_marker = dict(
        color=[CHUNK_SHADES[c % 2] for c in chunk_of], line=dict(color=color_of("gated_delta"), width=1)
    )
    fig.add_trace(
        token_row(
            chunk_row,
            _("token (whole chunk at once)"),
            chunk_marker,
            _("token %{x} is in chunk %{customdata}<extra></extra>"),
            customdata=chunk_of,
        )
    )

    # a hand-over of the board: after every token on the top row, at chunk edges below
    # (set as one list: add_shape re-validates every earlier shape, quadratic in T)
    def mark(t: int, y0: float, y1: float, width: int) -> dict:
        """A hand-over before token t: a short vertical line across a row, from y0 to y1."""
        line = dict(color=COLORS["warning"], width=width)
        return dict(type="line", x0=t - 0.5, x1=t - 0.5, y0=y0, y1=y1, line=line)

    # one mark per wait, the first bringing the starting board: T marks on top, ⌈T/C⌉ below —
    # exactly the counts core.ops.forms.waits_in_line reports beside the picture
    hand_overs = [mark(t, 0.82, 1.18, 1) for t in range(0, T)] + [
        mark(edge, -0.25, 0.25, 3) for edge in range(0, T, chunk_size)
    ]
    fig.update_layout(shapes=hand_overs)
    fig.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="lines",
            name=_("board handed over (a wait in line)"),
            line=dict(color=COLORS["warning"], width=3),
        )
    )
    base_layout(fig, title, _("token #"), "", height=230)
    step_waits, chunk_waits = waits_in_line(T, chunk_size)
    fig.update_layout(  # the chart's words: its squares and marks are a diagram, not data series
        meta={
            "words": _(
                "Top row, step by step: {T} tokens one at a time, the board handed over before each "
                "one — {step_waits} waits in line. Bottom row, chunks of {size}: {chunk_waits} chunks, "
                "each computed at once, the board handed over only at a chunk's edge — {chunk_waits} waits."
            ).format(T=T, step_waits=step_waits, size=chunk_size, chunk_waits=chunk_waits)
        }
    )
    fig.update_yaxes(tickvals=list(rows.values()), ticktext=list(rows), range=[-0.6, 1.6], showgrid=False)
    fig.update_xaxes(range=[-1, T])  # room for the first hand-over, before token 0
    fig.update_xaxes(range=[-1, T], showgrid=False)
    return fig


def waits_figure(waits_per_form: dict[str, int], T: int, title: str = "") -> go.Figure:
    """Sequential hand-overs of the board for T tokens, one bar per form (step by step first)."""
    waits = list(waits_per_form.values())
    fig = go.Figure(
        go.Bar(
            x=[shown_form(label) for label in waits_per_form],
            y=waits,
            text=waits,
            textposition="outside",
            marker_color=_form_colors(list(waits_per_form)),
            hovertemplate=_("%{x}: %{y} hand-overs<extra></extra>"),
        )
    )
    base_layout(fig, title, _("form"), _("waits in line (T = {T})").format(T=T), height=300)
    fig.update_yaxes(range=[0, max(waits) * 1.18])
    return fig


def speed_figure(
    labels: Sequence[str], ms: Sequence[float], hand_overs: Sequence[int], title: str = ""
) -> go.Figure:
    """Measured time of one forward pass per form, on this machine."""
    fig = go.Figure(
        go.Bar(
            x=[shown_form(label) for label in labels],
            y=list(ms),
            marker_color=_form_colors(labels),
            customdata=list(hand_overs),
            text=[f"{m:.1f} ms" for m in ms],
            textposition="outside",
            hovertemplate=_("%{x}: %{y:.2f} ms, %{customdata} hand-overs<extra></extra>"),
        )
    )
    base_layout(fig, title, _("form"), _("ms per pass (median)"), height=320)
    fig.update_yaxes(range=[0, max(ms) * 1.2 if len(ms) else 1])
    return fig
