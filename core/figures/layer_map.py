"""A model's layer map: its layers as a grid of numbered cells, coloured by kind (Kimi K3, a released Qwen3.5)."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from core.figures.specs import ATTENTION_KINDS
from core.figures.style import COLORS, bar_pattern, base_layout, label_of, legend_below
from core.i18n import _, run_on
from core.specs import ModelSpec, attn_res_block_starts

TOP, BOTTOM = 40, 115  # px above the grid (title) and below it (ticks, axis title, a legend of two lines)


def _plot_px(rows: int) -> int:
    """The grid's own height: 30 px a row."""
    return 30 * rows + 20


@dataclass(frozen=True)
class KindLook:
    """How one kind of layer is drawn: its legend name (in the reader's language), colour and hatching."""

    name: str
    color: str
    pattern: dict  # plotly marker.pattern ({} = solid); hatched kinds are told apart without colour


def layer_map(
    kinds: list[str],
    looks: dict[str, KindLook],
    *,
    row_size: int,
    title: str,
    about_rows: str = "",
    x_title: str | None = None,
) -> go.Figure:
    """A model's layers as a grid of numbered cells, `row_size` to a row, coloured and hatched by kind.

    kinds: one per layer, in order (layer 1 nearest the input, as configs count). A single long strip
    blurs on a phone; rows keep every cell a readable square with its layer number, and a schedule such
    as 3 : 1 shows as whole columns. `about_rows`: what a row is, for the text alternative (K3: one
    Attention Residuals block)."""
    if not kinds:
        raise ValueError("kinds must not be empty")
    n = len(kinds)
    starts = list(range(0, n, row_size))
    fig = go.Figure()
    for kind in dict.fromkeys(kinds):
        look = looks[kind]
        layers = [i for i, k in enumerate(kinds) if k == kind]  # 0-based
        fig.add_bar(
            x=[i % row_size + 1 for i in layers],  # place in its row, 1-based
            y=[0.9] * len(layers),
            base=[i // row_size - 0.45 for i in layers],  # its row, centred on the row number
            width=0.9,
            name=f"{look.name} ({len(layers)})",
            marker_color=look.color,
            # hatching sparser than usual so the layer numbers stay legible
            marker_pattern={**look.pattern, "solidity": 0.2} if look.pattern else {},
            text=[str(i + 1) for i in layers],
            textposition="inside",
            insidetextanchor="middle",
            textangle=0,
            textfont=dict(color="white", size=10),
            constraintext="none",  # two digits fit a phone's cell; shrunk to fit, plotly hid them
            customdata=[i + 1 for i in layers],
            hovertemplate=_("layer {layer}: {kind}").format(layer="%{customdata}", kind=look.name)
            + "<extra></extra>",
        )
    rows = [_("layers {first}–{last}").format(first=s + 1, last=min(s + row_size, n)) for s in starts]
    base_layout(
        fig,
        title=title,
        x_title=x_title or _("place in its row of layers"),
        y_title="",
        height=TOP + _plot_px(len(starts)) + BOTTOM,
    )
    fig.update_layout(barmode="overlay", bargap=0.0)
    fig.update_xaxes(
        tickmode="linear",
        dtick=1,
        range=[0.5, min(row_size, n) + 0.5],
        showgrid=False,
        tickangle=0,
        tickfont=dict(size=10),
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(len(starts))),
        ticktext=rows,
        range=[len(starts) - 0.5, -0.5],  # first row on top
        showgrid=False,
        zeroline=False,
    )
    # the text alternative (core.figures.describe) reads the grid as layers, not as bars on a row axis
    groups = [
        _("{kind} ({n}): {n} cells, at layers {layers}.").format(
            kind=looks[kind].name,
            n=kinds.count(kind),
            layers=_runs([i + 1 for i, k in enumerate(kinds) if k == kind]),
        )
        for kind in dict.fromkeys(kinds)
    ]
    fig.update_layout(meta={"words": run_on(about_rows, *groups)})
    # the legend a fixed 50 px under the plot (below the axis title), however many rows the map has
    legend_below(fig, y=-50 / _plot_px(len(starts)), bottom=BOTTOM, grow=0)
    return fig


def k3_layer_map(spec: ModelSpec) -> go.Figure:
    """Kimi K3's layers (from core/specs), one row per Attention Residuals block, by attention kind."""
    kinds = spec.layer_kinds()
    size = spec.attn_res_block_size or 12
    starts = attn_res_block_starts(spec.num_layers, size)
    looks = {
        kind: KindLook(_(ATTENTION_KINDS.get(kind, label_of(kind))), COLORS[kind], bar_pattern(kind))
        for kind in dict.fromkeys(kinds)
    }
    rows = [
        _("layers {first}–{last}").format(first=s + 1, last=min(s + size, spec.num_layers)) for s in starts
    ]
    return layer_map(
        kinds,
        looks,
        row_size=size,
        # short, to fit a phone; the page's caption says that each row is one AttnRes block
        title=_("{model}: {layers} layers = {kda} KDA + {mla} MLA").format(
            model=spec.name,
            layers=spec.num_layers,
            kda=spec.num_linear_layers,
            mla=spec.num_full_attention_layers,
        ),
        x_title=_("place in its block of layers"),
        about_rows=_("{n} rows, one per Attention Residuals block of {size} layers ({rows}).").format(
            n=len(starts), size=size, rows=_(", ").join(rows)
        ),
    )


def _runs(numbers: list[int]) -> str:
    """[1, 2, 3, 5, 6, 7, 9] → '1–3, 5–7, 9': sorted numbers as runs, the way a reader says them."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
