"""Pictures of generation with and without a KV cache (lessons 1–2).

Data in (lists and numpy arrays taken from `core.trace.Trace` records), plotly
figure out. Sizes are fixed by the whole precomputed run, not the current step,
so that stepping fills a frame instead of rescaling it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.figures.style import COLORS, DIVERGING, SEQUENTIAL, base_layout, heatmap, patched_figure
from core.tokenizer import token_label
from core.trace import Trace
from core.units import format_bytes

Label = Callable[[int], str]  # token id → short readable name (core.tokenizer.token_label for bytes)

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
KIB = 1024  # the cache chart's unit, as the page's figures (format_bytes) say it


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
        return f"step {self.first}" if self.first == self.last else f"steps {self.first}–{self.last}"


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
        "title": {"text": f"{title} ({frame.steps} of {len(traces)})" if title else ""},
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
        hovertemplate="step %{y}, position %{x}<br>%{z}: 0 = not run, 1 = recomputed, 2 = new<extra></extra>",
        colorbar=dict(
            tickvals=[1 / 3, 1, 5 / 3],
            ticktext=["not run", "recomputed", "new"],
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
            text="end of prompt",
            showarrow=False,
            xanchor="left",
            yanchor="bottom",
            font=dict(size=11, color=COLORS["dense"]),
        )
    base_layout(
        fig, layout["title"]["text"], f"position in the text ({unit} index)", "generation step", height=380
    )
    fig.update_yaxes(range=layout["yaxis"]["range"], autorange=False, showgrid=False, dtick=1)
    fig.update_xaxes(range=layout["xaxis"]["range"], showgrid=False)
    return fig


def recompute_grid_step(base: dict, traces: list[Trace], shown: int, title: str = "") -> go.Figure:
    """`recompute_grid_figure` at another step, from that figure's dict (same run and title)."""
    rows, layout = _grid_view(traces, shown, title)
    return patched_figure(base, {0: rows}, layout)


def _line_and_dots(line: tuple, dots: tuple) -> go.Figure:
    """A figure with a predicted line (x, y, name, line style) and the counted values as dots (x, y, name, colour)."""
    fig = go.Figure()
    x, y, name, style = line
    fig.add_scatter(x=x, y=y, mode="lines", name=name, line=style)
    x, y, name, color = dots
    fig.add_scatter(x=x, y=y, mode="markers", name=name, marker=dict(color=color, size=6))
    return fig


def work_figure(
    steps: list[int], measured: list[int], formula: list[int], cached: list[int] | None = None, shown: int = 0
) -> go.Figure:
    """Cumulative positions run through the model after each step: counted from the traces
    (markers) against the closed formula (line); optionally the cached model beside it."""
    fig = _line_and_dots(
        (steps, formula, "formula n(n+1)/2 − (p−1)p/2", dict(color=COLORS["predicted"], width=2)),
        (steps[:shown], measured[:shown], "counted from the model's steps", COLORS["warning"]),
    )
    if cached is not None:
        fig.add_scatter(
            x=steps[:shown],
            y=cached[:shown],
            mode="lines+markers",
            name="with a KV cache",
            line=dict(color=COLORS["attention"]),
            marker=dict(size=4),
        )
    base_layout(fig, "", "generation step", "positions computed so far (total)", height=320)
    fig.update_xaxes(range=[0, max(steps, default=1) + 1])
    fig.update_yaxes(range=[0, max(formula + measured, default=1) * 1.05])
    return fig


def work_step(
    base: dict, steps: list[int], measured: list[int], cached: list[int] | None = None, shown: int = 0
) -> go.Figure:
    """`work_figure` at another step, from that figure's dict (only the counted dots move)."""
    traces = {1: {"x": steps[:shown], "y": measured[:shown]}}
    if cached is not None:
        traces[2] = {"x": steps[:shown], "y": cached[:shown]}
    return patched_figure(base, traces)


def running_median(values: list[float], window: int = 7) -> list[float]:
    """Median of each value and its neighbours: keeps the trend, drops one-off spikes
    (another program taking the CPU for a moment)."""
    data = np.asarray(values, dtype=float)
    half = window // 2
    return [float(np.median(data[max(0, i - half) : i + half + 1])) for i in range(len(data))]


def ms_per_token_figure(
    text_lengths: list[int],
    uncached_ms: list[float],
    cached_ms: list[float] | None = None,
    shown: int = 0,
    unit: str = "byte",
) -> go.Figure:
    """Measured wall time of each step against the length of the text it read (in `unit`s: bytes
    for the tiny model, tokens for a checkpoint): every step as a faint marker, the running median
    as the line. The y axis is fixed by the medians, so a rare spike may leave the top of the chart
    (its value is in the hover)."""
    fig = go.Figure()
    # (name, times, colour, dash, marker): red/blue also differ by dash and marker, not colour alone
    runs = [("no cache", uncached_ms, COLORS["warning"], "solid", "x")]
    if cached_ms is not None:
        runs.append(("with KV cache", cached_ms, COLORS["attention"], "dash", "circle"))
    top = 1.0
    for name, ms, color, dash, symbol in runs:
        median = running_median(ms)
        top = max(top, max(median, default=1.0))
        fig.add_scatter(
            x=text_lengths[:shown],
            y=ms[:shown],
            mode="markers",
            name=f"{name}: each step",
            marker=dict(color=color, size=5, opacity=0.35, symbol=symbol),
            hovertemplate=f"%{{x}} {unit}s: %{{y:.2f}} ms<extra></extra>",
        )
        fig.add_scatter(
            x=text_lengths[:shown],
            y=median[:shown],
            mode="lines",
            name=f"{name}: running median",
            line=dict(color=color, width=3, dash=dash),
            hovertemplate=f"%{{x}} {unit}s: median %{{y:.2f}} ms<extra></extra>",
        )
    base_layout(fig, "", f"length of the text read ({unit}s)", "time for this step (ms)", height=320)
    fig.update_xaxes(range=[0, max(text_lengths, default=1) + 1])
    fig.update_yaxes(range=[0, top * 1.6])
    return fig


def ms_per_token_step(
    base: dict,
    text_lengths: list[int],
    uncached_ms: list[float],
    cached_ms: list[float] | None = None,
    shown: int = 0,
) -> go.Figure:
    """`ms_per_token_figure` at another step, from that figure's dict (the axes stay; the dots and
    running medians are cut at `shown`)."""
    runs = [uncached_ms] + ([cached_ms] if cached_ms is not None else [])
    traces = {}
    for i, ms in enumerate(runs):
        traces[2 * i] = {"x": text_lengths[:shown], "y": ms[:shown]}
        traces[2 * i + 1] = {"x": text_lengths[:shown], "y": running_median(ms)[:shown]}
    return patched_figure(base, traces)


def _cache_rows(
    keys: np.ndarray,
    values: np.ndarray,
    head: int,
    rows: int,
    token_ids: list[int],
    label: Label = token_label,
) -> tuple[tuple[np.ndarray, np.ndarray], dict, list[dict]]:
    """The step-dependent part of the cache heatmaps: K and V of `head`, the first `rows` rows
    (each (max(rows, 1), Dh) float32), the y ticks labelling the rows held so far, and an outline
    around the newest row in both panels (what a step adds)."""
    max_rows = keys.shape[1]
    every = max(1, max_rows // 16)  # tick spacing fixed by the axis, not by the rows shown
    ticks = dict(
        tickmode="array",
        tickvals=list(range(0, rows, every)),
        ticktext=[f"{i}: {label(token_ids[i])}" for i in range(0, rows, every)],
    )
    zs = []
    for data in (keys[head], values[head]):
        # only the rows held so far travel (the y axis keeps its full, fixed range): early steps send
        # a few rows, not the whole run's; one blank row stands in for an empty cache
        z = np.full((max(rows, 1), data.shape[1]), np.nan, dtype=np.float32)
        z[:rows] = data[:rows]
        zs.append(z)
    width = keys.shape[2]
    newest = [
        dict(
            type="rect",
            xref=f"x{axis}",
            yref=f"y{axis}",
            x0=-0.5,
            x1=width - 0.5,
            y0=max(rows, 1) - 1.5,
            y1=max(rows, 1) - 0.5,
            line=dict(color=COLORS["dense"], width=2),
            fillcolor="rgba(0,0,0,0)",
            visible=rows > 0,  # an empty cache outlines nothing (the shapes stay, so a patch can move them)
        )
        for axis in ("", "2")
    ]
    return (zs[0], zs[1]), ticks, newest


def cache_heatmaps_step(
    base: dict,
    keys: np.ndarray,
    values: np.ndarray,
    head: int,
    rows: int,
    token_ids: list[int],
    label: Label = token_label,
) -> go.Figure:
    """`cache_heatmaps_figure` for another number of rows, from that figure's dict (same layer and head)."""
    (zk, zv), ticks, newest = _cache_rows(keys, values, head, rows, token_ids, label)
    return patched_figure(
        base, {0: {"z": zk}, 1: {"z": zv}}, {"yaxis": ticks, "yaxis2": ticks, "shapes": newest}
    )


def channel_ticks(width: int) -> list[int]:
    """Channel numbers to label under one panel: 0 and the middle only. A tick at the panel's right
    edge would sit beside the next panel's 0 (on a phone the two read as one label, "30 0")."""
    return [0, width // 2] if width > 1 else [0]


def cache_heatmaps_figure(
    keys: np.ndarray,
    values: np.ndarray,
    head: int,
    rows: int,
    token_ids: list[int],
    label: Label = token_label,
    unit: str = "byte",
) -> go.Figure:
    """One head's cached keys and values side by side: rows = positions held (one per byte
    read), columns = channels of the head.

    keys/values are a layer's final cache (H, T, Dh); the first `rows` rows of `head` are
    shown. The y axis spans all T rows and the colour range the whole layer, so both stay
    fixed while stepping: the cache visibly grows and an old row never changes colour.
    """
    zmax = float(max(np.abs(keys).max(), np.abs(values).max(), 1e-6))
    max_rows = keys.shape[1]
    zs, ticks, newest = _cache_rows(keys, values, head, rows, token_ids, label)
    hover = "position %{y}<br>channel %{x}<br>%{z:.3f}<extra></extra>"
    traces = []
    for z, axis in ((zs[0], ""), (zs[1], "2")):
        hm = heatmap(z, -zmax, zmax, colorscale=DIVERGING, colorbar_title="value", hover=hover)
        hm.update(xaxis=f"x{axis}", yaxis=f"y{axis}", showscale=axis == "2")
        traces.append(hm)
    fig = go.Figure(traces)
    # short titles on two lines, one short x title per panel: on a phone each panel is under 100 px wide
    base_layout(fig, "", "channel", "", height=420)
    fig.update_layout(margin=dict(t=56))  # room for the two-line panel titles
    y_common = dict(autorange=False, range=[max_rows - 0.5, -0.5], showgrid=False, **ticks)
    x_ticks = dict(tickmode="array", tickvals=channel_ticks(keys.shape[2]), tickangle=0)
    fig.update_layout(
        xaxis=dict(domain=[0.0, 0.46], showgrid=False, **x_ticks),
        # a second axis pair gets plotly's defaults, not base_layout's: no zero line through column 0
        xaxis2=dict(
            domain=[0.54, 1.0], showgrid=False, zeroline=False, title_text="channel", anchor="y2", **x_ticks
        ),
        # short: on a phone the plot is under 300 px tall, and a longer title was cut at both ends
        yaxis=dict(title_text=f"cached row (one per {unit})", automargin=True, **y_common),
        yaxis2=dict(anchor="x2", showticklabels=False, zeroline=False, **y_common),
        annotations=[
            dict(
                text=text,
                x=x,
                y=1.0,
                xref="paper",
                yref="paper",
                yanchor="bottom",
                showarrow=False,
                font_size=12,
            )
            for text, x in (("cached<br>K: keys", 0.23), ("cached<br>V: values", 0.77))
        ],
        shapes=newest,
    )
    return fig


def _attention_row(weights: np.ndarray, max_len: int) -> np.ndarray:
    """(heads, max_len) float32: this step's weights, NaN over positions not read yet."""
    heads, length = weights.shape
    z = np.full((heads, max_len), np.nan, dtype=np.float32)
    z[:, :length] = weights
    return z


def attention_step(base: dict, weights: np.ndarray, max_len: int) -> go.Figure:
    """`attention_figure` at another step, from that figure's dict (same tokens, same layer)."""
    return patched_figure(base, {0: {"z": _attention_row(weights, max_len)}})


def attention_figure(
    weights: np.ndarray, token_ids: list[int], max_len: int, label: Label = token_label, unit: str = "byte"
) -> go.Figure:
    """This step's attention weights: rows = heads, columns = cached positions (each row sums to 1)."""
    heads = weights.shape[0]
    z = _attention_row(weights, max_len)
    x_labels = [f"{i}: {label(t)}" for i, t in enumerate(token_ids[:max_len])]
    x_labels += [str(i) for i in range(len(x_labels), max_len)]
    fig = go.Figure(
        heatmap(
            z,
            0.0,
            1.0,
            x_labels=x_labels,
            y_labels=[f"head {h}" for h in range(heads)],
            colorscale=SEQUENTIAL,
            colorbar_title="weight",
            hover="%{y}<br>position %{x}<br>weight %{z:.3f}<extra></extra>",
        )
    )
    base_layout(fig, "", f"position read ({unit} number)", "", height=220)
    # a position number every so often (six fit a phone); hover names each position's byte
    every = max(1, -(-max_len // 6))
    fig.update_xaxes(
        showgrid=False,
        tickmode="array",
        tickvals=x_labels[::every],
        ticktext=[str(i) for i in range(0, max_len, every)],
        tickangle=0,
    )
    fig.update_yaxes(showgrid=False, autorange="reversed")
    return fig


def cache_bytes_figure(
    text_lengths: list[int], cache_bytes: list[int], shown: int, bytes_per_token: int, unit: str = "byte"
) -> go.Figure:
    """Memory held by the KV cache after each step, in KiB as the page's figures say it: a straight
    line, one row per byte."""
    predicted = [n * bytes_per_token / KIB for n in text_lengths]
    held = [b / KIB for b in cache_bytes]
    fig = _line_and_dots(
        (
            text_lengths,
            predicted,
            f"{format_bytes(bytes_per_token)} × {unit}s read",
            dict(color=COLORS["predicted"], dash="dot"),
        ),
        (text_lengths[:shown], held[:shown], "cache held (from the model)", COLORS["attention"]),
    )
    base_layout(fig, "", f"{unit}s of text read", "KV cache held (KiB)", height=300)
    fig.update_xaxes(range=[0, max(text_lengths, default=1) + 1])
    fig.update_yaxes(range=[0, max(held, default=1) * 1.05])
    return fig


def top_next_step(base: dict, top: list[tuple[int, float]], label: Label = token_label) -> go.Figure:
    """`top_next_figure` for another step's top tokens (as many as the base's), from that figure's dict."""
    probs = [p for _, p in top]
    return patched_figure(
        base, {0: {"x": probs, "y": [f"{label(t)}" for t, _ in top], "text": [f"{p:.1%}" for p in probs]}}
    )


def top_next_figure(top: list[tuple[int, float]], label: Label = token_label) -> go.Figure:
    """The likeliest next tokens at one step as horizontal bars (probability 0–1, likeliest on top)."""
    names = [f"{label(t)}" for t, _ in top]
    probs = [p for _, p in top]
    fig = go.Figure(
        go.Bar(
            x=probs,
            y=names,
            orientation="h",
            marker_color=COLORS["attention"],
            text=[f"{p:.1%}" for p in probs],
            # inside the bar's end where it fits (a sure 100.0% beside its bar was cut at the chart's
            # edge on a phone), beside a short bar
            textposition="auto",
            insidetextanchor="end",
            insidetextfont=dict(color="#ffffff"),
            cliponaxis=False,
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
        )
    )
    base_layout(fig, "", "probability of coming next", "", height=60 + 30 * max(1, len(top)))
    fig.update_xaxes(range=[0, 1.15], showgrid=False)
    fig.update_yaxes(autorange="reversed", type="category", showgrid=False)
    return fig
