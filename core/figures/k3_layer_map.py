"""Kimi K3's layer map: the real K3's layers (from core/specs) as a grid, one row per AttnRes block."""

from __future__ import annotations

import plotly.graph_objects as go

from core.figures.specs import ATTENTION_KINDS
from core.figures.style import COLORS, bar_pattern, base_layout, label_of, legend_below
from core.i18n import _
from core.specs import ModelSpec, attn_res_block_starts


def k3_layer_map(spec: ModelSpec) -> go.Figure:
    """K3's layers as a grid, one row per Attention Residuals block, coloured (and hatched) by kind.

    A single 93-cell strip blurs on a phone; rows of one block each (12 layers) keep every cell a
    readable square with its layer number, and the 3 : 1 schedule shows as whole columns of MLA."""
    kinds = spec.layer_kinds()
    size = spec.attn_res_block_size or 12
    starts = attn_res_block_starts(spec.num_layers, size)
    n_full, n_linear = spec.num_full_attention_layers, spec.num_linear_layers
    fig = go.Figure()
    for kind in dict.fromkeys(kinds):
        layers = [i for i, k in enumerate(kinds) if k == kind]  # 0-based
        label = _(ATTENTION_KINDS.get(kind, label_of(kind)))
        fig.add_bar(
            x=[i % size + 1 for i in layers],  # position inside its block, 1-based
            y=[0.9] * len(layers),
            base=[i // size - 0.45 for i in layers],  # its block's row, centred on the row number
            width=0.9,
            name=f"{label} ({len(layers)})",
            marker_color=COLORS[kind],
            # fixed boards hatched (told apart without colour), sparser than usual so the numbers stay legible
            marker_pattern={**bar_pattern(kind), "solidity": 0.2} if bar_pattern(kind) else {},
            text=[str(i + 1) for i in layers],
            textposition="inside",
            insidetextanchor="middle",
            textangle=0,
            textfont=dict(color="white", size=10),
            constraintext="none",  # two digits fit a phone's cell; shrunk to fit, plotly hid them
            customdata=[i + 1 for i in layers],
            hovertemplate=_("layer {layer}: {kind}").format(layer="%{customdata}", kind=label)
            + "<extra></extra>",
        )
    rows = [
        _("layers {first}–{last}").format(first=s + 1, last=min(s + size, spec.num_layers)) for s in starts
    ]
    base_layout(
        fig,
        # short, to fit a phone; the page's caption says that each row is one AttnRes block
        title=_("{model}: {layers} layers = {kda} KDA + {mla} MLA").format(
            model=spec.name, layers=spec.num_layers, kda=n_linear, mla=n_full
        ),
        x_title=_("place in its block of layers"),
        y_title="",
        height=70 + 30 * len(starts) + 80,
    )
    fig.update_layout(barmode="overlay", bargap=0.0)
    fig.update_xaxes(
        tickmode="linear",
        dtick=1,
        range=[0.5, size + 0.5],
        showgrid=False,
        tickangle=0,
        tickfont=dict(size=10),
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(len(starts))),
        ticktext=rows,
        range=[len(starts) - 0.5, -0.5],  # first block on top
        showgrid=False,
        zeroline=False,
    )
    # the text alternative (core.figures.describe) reads the grid as layers, not as bars on a row axis
    groups = [
        _("{kind} ({n}): {n} cells, at layers {layers}.").format(
            kind=_(ATTENTION_KINDS.get(kind, label_of(kind))),
            n=kinds.count(kind),
            layers=_runs([i + 1 for i, k in enumerate(kinds) if k == kind]),
        )
        for kind in dict.fromkeys(kinds)
    ]
    fig.update_layout(
        meta={
            "words": _("{n} rows, one per Attention Residuals block of {size} layers ({rows}).").format(
                n=len(starts), size=size, rows=_(", ").join(rows)
            )
            + " "
            + " ".join(groups)
        }
    )
    legend_below(fig, y=-0.18, bottom=90, grow=0)
    return fig


def _runs(numbers: list[int]) -> str:
    """[1, 2, 3, 5, 6, 7, 9] → '1–3, 5–7, 9': sorted numbers as runs, the way a reader says them."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
