"""Pictures of the trained-recall sweep (MQAR, after Zoology arXiv 2312.04927).

Data in (the dict in assets/recall/results.json, or one model's readout), figure out.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.style import SEQUENTIAL, base_layout, color_of, heatmap, label_of, marker_of
from core.i18n import _
from core.units import format_bytes

MIXER_DASH = {"attention": "solid", "hybrid": "dot"}


def accuracy_vs_pairs(results: dict, mixers: list[str] | None = None) -> go.Figure:
    """One panel per model width: recall accuracy against the number of key→value pairs, a line per mixer.

    Each point is the mean over seeds at the cell's best learning rate; the error bar spans
    the lowest and highest seed. A dashed line marks the key dimension of each board (= the
    width: one head), past which a linear-attention board cannot keep every pair apart.
    """
    widths = list(results["sweep"]["widths"])
    pairs = list(results["sweep"]["pair_counts"])
    fig = make_subplots(
        rows=1,
        cols=len(widths),
        shared_yaxes=True,
        # short: two panels share a 390 px phone
        subplot_titles=[_("{w}×{w} boards").format(w=w) for w in widths],
        horizontal_spacing=0.06,
    )
    for col, width in enumerate(widths, start=1):
        for cell in results["cells"]:
            if cell["d_model"] != width or (mixers is not None and cell["mixer"] not in mixers):
                continue
            mixer = cell["mixer"]
            mean = [cell["accuracy"][str(n)] for n in pairs]
            fig.add_trace(
                go.Scatter(
                    x=pairs,
                    y=mean,
                    error_y=dict(
                        type="data",
                        array=[cell["accuracy_max"][str(n)] - m for n, m in zip(pairs, mean, strict=True)],
                        arrayminus=[
                            m - cell["accuracy_min"][str(n)] for n, m in zip(pairs, mean, strict=True)
                        ],
                        thickness=1.5,
                        width=4,
                    ),
                    mode="lines+markers",
                    name=label_of(mixer),
                    legendgroup=mixer,
                    showlegend=col == 1,
                    line=dict(
                        color=color_of(mixer),
                        dash=MIXER_DASH.get(mixer, "solid"),
                        width=2.5,
                    ),
                    marker=dict(size=8, symbol=marker_of(mixer)),  # a shape per rule, not colour alone
                    hovertemplate=_(
                        "{model}<br>%{{x}} pairs<br>accuracy %{{y:.3f}} "
                        "(mean of {seeds} seeds, lr {lr:g})<extra></extra>"
                    ).format(model=label_of(mixer), seeds=len(cell["seeds"]), lr=cell["lr"]),
                ),
                row=1,
                col=col,
            )
        fig.add_trace(
            go.Scatter(
                x=[width, width],
                y=[0, 1.04],
                mode="lines",
                name=_("key dimension of the board"),
                legendgroup="key_dim",
                showlegend=col == 1,
                line=dict(color="#868e96", dash="dash", width=1),
                hovertemplate=_("key dimension {width}: a {width}×{width} board<extra></extra>").format(
                    width=width
                ),
                meta="key_dim",
            ),
            row=1,
            col=col,
        )
    base_layout(fig, height=400)
    fig.update_layout(legend=dict(y=1.12))
    fig.update_xaxes(type="log", tickvals=pairs, ticktext=[str(p) for p in pairs])
    # the axis title once, under the first panel: side by side on a phone two of them ran together
    fig.update_xaxes(title_text=_("pairs to remember"), col=1)
    fig.update_yaxes(range=[0, 1.04], title_text=_("recall accuracy (fraction right)"), col=1)
    return fig


def memory_rows(results: dict) -> list[dict]:
    """One row per trained model: what it must keep while reading (float32), for a table."""
    seq_len = results["sweep"]["seq_len"]
    rows = []
    for run in results["cells"]:
        per_token = run["cache_elements_per_token"] * 4
        boards = run["state_elements"] * 4
        total = run["memory_bytes_at_seq_len"]
        conv = total - boards - per_token * seq_len  # the short convolutions' last inputs (q, k, v)
        rows.append(
            {
                _("model"): label_of(run["mixer"]),
                _("width"): run["d_model"],
                _("fixed boards, both layers"): format_bytes(boards) if boards else "—",
                _("cache per token, both layers"): format_bytes(per_token) if per_token else "—",
                _("short-conv windows"): format_bytes(conv),
                _("total after {tokens} tokens").format(tokens=seq_len): format_bytes(total),
                _("parameters"): f"{run['params']:,}",
            }
        )
    return rows


def board_figure(state: np.ndarray, zmax: float, title: str) -> go.Figure:
    """A fixed board (K×V; first head if several) as a heatmap on a fixed colour range."""
    board = np.asarray(state, dtype=np.float32)
    if board.ndim == 3:
        board = board[0]  # (K, V)
    fig = go.Figure(
        heatmap(
            board,
            zmin=-zmax,
            zmax=zmax,
            colorbar_title=_("entry"),
            hover=_("key channel %{y}<br>value channel %{x}<br>entry %{z:.3f}<extra></extra>"),
        )
    )
    base_layout(fig, title=title, x_title=_("value channel"), y_title=_("key channel"), height=340)
    fig.update_yaxes(autorange="reversed", showgrid=False)
    fig.update_xaxes(showgrid=False)
    return fig


def cache_figure(keys: np.ndarray, token_names: list[str], zmax: float, title: str) -> go.Figure:
    """An attention layer's key cache: one row per token read so far (first head)."""
    cache = np.asarray(keys, dtype=np.float32)
    if cache.ndim == 3:
        cache = cache[0]  # (T, Dh)
    labels = [f"{i}: {name}" for i, name in enumerate(token_names)]
    fig = go.Figure(
        heatmap(
            cache,
            zmin=-zmax,
            zmax=zmax,
            y_labels=labels,
            colorbar_title=_("entry"),
            hover=_("token %{y}<br>channel %{x}<br>entry %{z:.3f}<extra></extra>"),
        )
    )
    base_layout(
        fig, title=title, x_title=_("key channel"), y_title=_("cached token (position: token)"), height=340
    )
    fig.update_yaxes(autorange="reversed", showgrid=False, type="category")
    fig.update_xaxes(showgrid=False)
    return fig


def answer_figure(keys: list[str], probabilities: list[float | None]) -> go.Figure:
    """How sure the model is of the right value for each asked key (0–1)."""
    y = [p if p is not None else 0.0 for p in probabilities]
    fig = go.Figure(
        go.Bar(
            x=[f"{i + 1}: {k}" for i, k in enumerate(keys)],
            y=y,
            marker=dict(color=y, colorscale=SEQUENTIAL, cmin=0, cmax=1),
            hovertemplate=_("query %{x}<br>probability of the right value %{y:.3f}<extra></extra>"),
        )
    )
    base_layout(
        fig,
        x_title=_("question (number: key asked)"),
        y_title=_("probability of the right value"),
        height=260,
    )
    fig.update_yaxes(range=[0, 1])
    fig.update_xaxes(type="category")
    return fig


def training_curves(results: dict, width: int) -> go.Figure:
    """Training loss against step for every run of one width at its cell's chosen learning rate
    (a line per seed), with the plateau line: a run ending above it never learned the task."""
    sweep = results["sweep"]
    every = sweep["curve_every"]
    plateau = sweep["plateau_threshold"]
    by_name = {r["name"]: r for r in results["runs"]}
    fig = go.Figure()
    for cell in results["cells"]:
        if cell["d_model"] != width:
            continue
        mixer = cell["mixer"]
        for i, name in enumerate(cell["runs"]):
            run = by_name[name]
            fig.add_trace(
                go.Scatter(
                    x=[every * (j + 0.5) for j in range(len(run["loss_curve"]))],
                    y=run["loss_curve"],
                    mode="lines",
                    name=label_of(mixer),
                    legendgroup=mixer,
                    showlegend=i == 0,
                    line=dict(color=color_of(mixer), dash=MIXER_DASH.get(mixer, "solid"), width=2),
                    hovertemplate=_(
                        "{model}, seed {seed}, lr {lr:g}<br>step %{{x:.0f}}<br>loss %{{y:.3f}} nats<extra></extra>"
                    ).format(model=label_of(mixer), seed=run["seed"], lr=run["lr"]),
                )
            )
    fig.add_hline(
        y=plateau,
        line=dict(color="#868e96", dash="dash", width=1),
        # one word above the line's right end, where the curves have left the plateau (a long note
        # reached back over the curves still on it, on a phone); the caption says what it means
        annotation_text=_("plateau"),
        annotation_position="top right",
    )
    base_layout(fig, x_title=_("training step"), y_title=_("training loss (nats per query)"), height=360)
    fig.update_yaxes(rangemode="tozero")
    return fig


def protocol_rows(results: dict) -> list[dict]:
    """One row per cell: the learning rate chosen and every learning rate's mean (plateaus marked)."""
    rows = []
    largest = str(max(results["sweep"]["pair_counts"]))
    for cell in results["cells"]:
        row = {
            _("model"): label_of(cell["mixer"]),
            _("width"): cell["d_model"],
            _("learning rate chosen"): f"{cell['lr']:g}",
            _("seeds"): len(cell["seeds"]),
            _("{pairs} pairs: mean (lowest–highest seed)").format(pairs=largest): (
                f"{cell['accuracy'][largest]:.2f} ({cell['accuracy_min'][largest]:.2f}–"
                f"{cell['accuracy_max'][largest]:.2f})"
            ),
        }
        for entry in cell["lr_table"]:
            flag = " *" if entry["plateau_seeds"] else ""  # explained under the table
            row[f"lr {entry['lr']:g}"] = f"{entry['mean_accuracy']:.2f}{flag}"
        # a plateau is marked in its learning rate's column, and a plateau cell gets its own note above
        rows.append(row)
    return rows
