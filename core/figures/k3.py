"""Figures for lessons 8 (Kimi K3) and 9 (Experts): the real model from core/specs, mini-K3 live.

The numbers come from `core/k3.py` (the real K3 from its config, mini-K3 runs reduced to
small arrays, the router's choices on a text); this module only draws them.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.specs import ATTENTION_KINDS
from core.figures.style import (
    COLORS,
    LABELS,
    SEQUENTIAL,
    bar_pattern,
    base_layout,
    dash_of,
    heatmap,
    label_of,
    legend_below,
    marker_of,
    patched_figure,
)
from core.k3 import MEMORY_KINDS, MemoryAtContext, RunSummary
from core.specs import ModelSpec, attn_res_block_starts
from core.tokenizer import byte_labels, token_label
from core.units import counted, format_bytes, format_context, format_params

GIB = 1024**3


# ---------------------------------------------------------------------------------------------
# Lesson 8: the real K3
# ---------------------------------------------------------------------------------------------


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
        label = ATTENTION_KINDS.get(kind, label_of(kind))
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
            hovertemplate=f"layer %{{customdata}}: {label}<extra></extra>",
        )
    rows = [f"layers {s + 1}–{min(s + size, spec.num_layers)}" for s in starts]
    base_layout(
        fig,
        # short, to fit a phone; the page's caption says that each row is one AttnRes block
        title=f"{spec.name}: {spec.num_layers} layers = {n_linear} KDA + {n_full} MLA",
        x_title="place in its block of layers",
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
        f"{ATTENTION_KINDS.get(kind, label_of(kind))} ({kinds.count(kind)}): "
        f"{kinds.count(kind)} cells, at layers {_runs([i + 1 for i, k in enumerate(kinds) if k == kind])}"
        for kind in dict.fromkeys(kinds)
    ]
    fig.update_layout(
        meta={
            "words": f"{len(starts)} rows, one per Attention Residuals block of {size} layers "
            f"({', '.join(rows)}). " + ". ".join(groups) + "."
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


def memory_at_context_figure(spec: ModelSpec, rows: list[MemoryAtContext]) -> go.Figure:
    """Grouped bars per context length: hybrid (cache + fixed boards, stacked) vs all-attention."""
    x = [f"{format_context(r.context)} tokens" for r in rows]
    boards = [r.hybrid_state / GIB for r in rows]
    bars = (  # (name, colour, group, GiB, stacked on, text above, what the hover calls it)
        (f"K3: fixed state, {spec.num_linear_layers} KDA layers", "kda", "hybrid", boards, None, None, "fixed state"),
        (f"K3: growing MLA cache ({spec.num_full_attention_layers} layers)", "mla", "hybrid",
         [r.hybrid_cache / GIB for r in rows], boards, [format_bytes(r.hybrid_total) for r in rows], "cache"),
        (f"same width, all {spec.num_layers} layers MLA", "predicted", "twin", [r.twin_cache / GIB for r in rows], None,
         [format_bytes(r.twin_cache) for r in rows], "all-MLA cache"),
    )  # fmt: skip
    fig = go.Figure()
    for name, color, group, y, base, text, what in bars:
        extra = {} if text is None else dict(text=text, textposition="outside")
        fig.add_bar(
            x=x,
            y=y,
            name=name,
            marker_color=COLORS[color],
            marker_pattern=bar_pattern(color),  # the boards hatched, so not told apart by colour alone
            offsetgroup=group,
            **({} if base is None else dict(base=base)),
            **extra,
            hovertemplate=f"%{{x}}<br>{what}: %{{y:.2f}} GiB<extra></extra>",
        )
    top = max(max(r.twin_cache, r.hybrid_total) for r in rows) / GIB
    base_layout(
        fig,
        title=f"{spec.name}: memory per conversation",
        x_title="context length",
        y_title="memory per sequence (GiB)",
        height=380,
    )
    fig.update_yaxes(range=[0, top * 1.18])
    fig.update_layout(barmode="group")
    legend_below(fig, y=-0.3, bottom=130, grow=80)
    return fig


# ---------------------------------------------------------------------------------------------
# Lesson 8: mini-K3 stepping
# ---------------------------------------------------------------------------------------------


def _layer_memory_bars(run: RunSummary, step: int) -> list[dict]:
    """Per kind: the bytes each of its layers holds after `step` (1-based) and their labels."""
    memory = run.memory_bytes[step - 1]
    bars = []
    for kind in MEMORY_KINDS:
        idx = run.layers_of(kind)
        bars.append({"y": [int(memory[i]) for i in idx], "text": [format_bytes(memory[i]) for i in idx]})
    return bars


def _layer_memory_title(step: int) -> str:
    return f"Memory per layer after {counted(step, 'token')}"


def layer_memory_step(base: dict, run: RunSummary, step: int) -> go.Figure:
    """`layer_memory_figure` at another step, from that figure's dict (same run)."""
    bars = dict(enumerate(_layer_memory_bars(run, step)))
    return patched_figure(base, bars, {"title": {"text": _layer_memory_title(step)}})


def layer_memory_figure(run: RunSummary, step: int) -> go.Figure:
    """Bars per layer: bytes of memory held after `step` (1-based); y range fixed to the run's end."""
    names = ["KDA boards (one per head)" if k == "kda" else "MLA latent cache" for k in run.kinds]
    bars = _layer_memory_bars(run, step)
    fig = go.Figure()
    for kind, bar in zip(MEMORY_KINDS, bars, strict=True):
        idx = run.layers_of(kind)
        fig.add_bar(
            x=[i + 1 for i in idx],
            y=bar["y"],
            name=f"{LABELS[kind]} ({'fixed boards' if kind == 'kda' else 'grows per token'})",
            marker_color=COLORS[kind],
            marker_pattern=bar_pattern(kind),
            text=bar["text"],
            textposition="outside",
            # upright and kept at full size: flat, or shrunk to the bar's width, a phone dropped the labels
            textangle=-90,
            constraintext="none",
            textfont=dict(size=11),
            cliponaxis=False,
            customdata=[names[i] for i in idx],
            hovertemplate="layer %{x}: %{customdata}<br>%{y:,} bytes<extra></extra>",
        )
    top = float(run.memory_bytes.max())
    base_layout(
        fig,
        title=_layer_memory_title(step),
        x_title="layer",
        y_title="bytes held (fp32)",
        height=360,
    )
    fig.update_yaxes(range=[0, top * 1.4])  # headroom for the upright labels
    fig.update_xaxes(tickmode="linear", dtick=1)
    legend_below(fig, y=-0.3, bottom=130, grow=80)
    return fig


def memory_over_time_step(base: dict, run: RunSummary, step: int) -> go.Figure:
    """`memory_over_time_figure` at another step, from that figure's dict (same run)."""
    steps, boards, cache = run.memory_totals()
    lines = {0: {"x": steps[:step], "y": boards[:step]}, 1: {"x": steps[:step], "y": cache[:step]}}
    return patched_figure(base, lines)


def memory_over_time_figure(run: RunSummary, step: int) -> go.Figure:
    """Total bytes in boards vs in caches as tokens arrive, up to `step`; axes fixed to the whole run."""
    steps, boards, cache = run.memory_totals()
    fig = go.Figure()
    for kind, name, y in (("kda", "KDA boards", boards), ("mla", "MLA caches", cache)):
        fig.add_scatter(
            x=steps[:step],
            y=y[:step],
            name=f"{name} ({len(run.layers_of(kind))} layers)",
            mode="lines+markers",
            line=dict(color=COLORS[kind], width=3, dash=dash_of(kind)),
            marker=dict(symbol=marker_of(kind), size=7, maxdisplayed=12),
        )
    base_layout(
        fig,
        title="Memory held as tokens arrive",  # short, to fit a phone; the page's text says what to see
        x_title="tokens read",
        y_title="bytes held (fp32)",
        height=330,
    )
    fig.update_xaxes(range=[0, len(steps) + 1])
    fig.update_yaxes(range=[0, float(max(boards.max(), cache.max())) * 1.1])
    legend_below(fig, y=-0.3, bottom=130, grow=80)
    return fig


def _attn_res_title(run: RunSummary, step: int) -> str:
    token = token_label(run.tokens_in[step - 1])
    return f"AttnRes mix for byte '{token}'"  # short, to fit a phone; the caption explains rows and columns


def attn_res_step(base: dict, run: RunSummary, step: int) -> go.Figure:
    """`attn_res_figure` at another step, from that figure's dict (same run)."""
    z = np.asarray(run.attn_res[step - 1], dtype=np.float32)  # as style.heatmap stores it
    return patched_figure(base, {0: {"z": z}}, {"title": {"text": _attn_res_title(run, step)}})


def attn_res_figure(run: RunSummary, step: int) -> go.Figure:
    """Heatmap of the AttnRes weights for the token of `step`: sub-layer mixes × depth sources."""
    z = run.attn_res[step - 1]  # (mixes, sources)
    fig = go.Figure(
        heatmap(
            z,
            zmin=0.0,
            zmax=1.0,
            x_labels=run.source_labels,
            y_labels=run.mix_labels,
            colorscale=SEQUENTIAL,
            colorbar_title="weight",
            hover="%{y}<br>source: %{x}<br>weight %{z:.2f}<extra></extra>",
        )
    )
    base_layout(
        fig,
        title=_attn_res_title(run, step),
        x_title="source (block sums)",
        y_title="mix before …",
        height=560,
    )
    fig.update_yaxes(autorange="reversed", showgrid=False)
    fig.update_xaxes(showgrid=False)
    return fig


# ---------------------------------------------------------------------------------------------
# Lesson 9: experts
# ---------------------------------------------------------------------------------------------


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
        "asleep": f"asleep ({num_routed - len(picked)})",
        "shared": f"shared, always on ({num_shared})",
        "picked": f"routed, picked for this token ({len(picked)} of {num_routed})",
    }
    positions = {
        "asleep": (routed_x[~woken], routed_y[~woken]),
        "shared": (shared % cols, shared // cols),
        "picked": (routed_x[woken], routed_y[woken]),
    }
    return [{"x": positions[key][0], "y": positions[key][1], "name": name} for key, name in names.items()]


def expert_grid_step(
    base: dict, num_routed: int, num_shared: int, picked: list[int], title: str
) -> go.Figure:
    """`expert_grid_figure` with other experts picked, from that figure's dict (same layer sizes)."""
    dots = dict(enumerate(_expert_dots(num_routed, num_shared, picked)))
    return patched_figure(base, dots, {"title": {"text": title}})


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


def router_heatmap_figure(weights: np.ndarray, tokens: list[int], layer: int, zmax: float) -> go.Figure:
    """Tokens × experts: the weight each routed expert got for each byte (0 = not picked)."""
    labels = [f"{i}:{label}" for i, label in enumerate(byte_labels(tokens))]
    fig = go.Figure(
        heatmap(
            weights,
            zmin=0.0,
            zmax=zmax,
            x_labels=[str(e) for e in range(weights.shape[1])],
            y_labels=labels,
            colorscale=SEQUENTIAL,
            colorbar_title="weight",
            hover="byte %{y}<br>expert %{x}<br>weight %{z:.2f}<extra></extra>",
        )
    )
    base_layout(
        fig,
        title=f"Layer {layer}: which routed experts each byte woke",
        x_title="routed expert",
        y_title="byte of your text",
        height=min(1200, 140 + 16 * len(tokens)),  # room for a readable label on every byte
    )
    # every byte and every expert labelled: category ticks, one per row and column
    fig.update_yaxes(autorange="reversed", showgrid=False, type="category", dtick=1, tickfont=dict(size=11))
    # upright expert numbers, small enough that 16 fit a phone's width; the colour bar lies above the
    # plot, so the columns get the whole width (beside it, on a phone, the numbers crowded and turned)
    fig.update_xaxes(showgrid=False, type="category", dtick=1, tickangle=0, tickfont=dict(size=10))
    fig.update_traces(
        colorbar=dict(orientation="h", x=0.0, xanchor="left", y=1.0, yanchor="bottom", len=1.0,
                      thickness=12, title=dict(text="weight", side="top")),
    )  # fmt: skip
    fig.update_layout(margin_t=(fig.layout.margin.t or 0) + 40)  # room for the colour bar under the title
    return fig


def expert_load_figure(load: np.ndarray, top_k: int, layer: int) -> go.Figure:
    """Bytes served per routed expert in one layer, with the perfectly even share drawn as a line."""
    even = load.sum() / len(load)
    fig = go.Figure()
    fig.add_bar(
        x=list(range(len(load))),
        y=load,
        marker_color=COLORS["moe"],
        name="bytes served",
        hovertemplate="expert %{x}: %{y} bytes<extra></extra>",
    )
    # the even share is a legend entry, not a label on the line: on a phone a label sat on the bars
    fig.add_scatter(
        x=[-0.5, len(load) - 0.5],
        y=[even, even],
        mode="lines",
        line=dict(color=COLORS["predicted"], dash="dash"),
        name=f"even share ({even:.1f} bytes each)",
        hovertemplate=f"even share: {even:.1f} bytes<extra></extra>",
    )
    base_layout(
        fig,
        title=f"Layer {layer}: load per expert (each byte wakes {top_k})",
        x_title="routed expert",
        y_title="bytes routed to it",
        height=300,
    )
    fig.update_xaxes(tickmode="linear", dtick=1, tick0=0, tickangle=0, tickfont=dict(size=10),
                     range=[-0.5, len(load) - 0.5])  # fmt: skip
    fig.update_yaxes(range=[0, max(float(load.max()), even) * 1.15 + 1])
    legend_below(fig, y=-0.3, bottom=110, grow=50)
    return fig


def params_figure(rows: list[tuple[str, float, float]]) -> go.Figure:
    """Total vs active parameters, one pair of bars per model: rows of (name, total, active). Log scale."""
    fig = go.Figure()
    names = [r[0] for r in rows]
    for column, name, color in (
        (1, "total (must be stored)", "predicted"),
        (2, "active (used per token)", "moe"),
    ):
        fig.add_bar(
            x=names,
            y=[r[column] for r in rows],
            name=name,
            marker_color=COLORS[color],
            text=[format_params(r[column]) for r in rows],
            textposition="outside",
        )
    base_layout(
        fig,
        title="Parameters stored vs used per token",
        x_title="",
        y_title="parameters (log scale)",
        height=340,
    )
    fig.update_yaxes(type="log")
    fig.update_layout(barmode="group")
    return fig


def bytes_per_token_figure(rows: list[tuple[str, float]], title: str) -> go.Figure:
    """Bytes each model reads per token, one bar each; the title says what and at which batch
    (lesson 9: "Weights read per token at batch 1"), so the axis stays short enough for a phone."""
    fig = go.Figure()
    fig.add_bar(
        y=[r[0] for r in rows],
        x=[r[1] / 2**30 for r in rows],
        orientation="h",
        # the first row is the dense what-if, every later one an MoE variant
        marker_color=[COLORS["dense"]] + [COLORS["moe"]] * (len(rows) - 1),
        text=[f"{r[1] / 2**30:,.0f} GiB" for r in rows],
        textposition="auto",
    )
    base_layout(fig, title=title, x_title="per token (GiB)", y_title="", height=160 + 40 * len(rows))
    return fig
