"""Kimi K3's AttnRes heatmap: how mini-K3 mixes its depth sources for one token, step by step."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures.figure_dict import patched
from core.figures.style import base_layout, weight_heatmap
from core.i18n import _
from core.models.mini_k3_trace import RunSummary
from core.tokenizer import token_label


def _attn_res_title(run: RunSummary, step: int) -> str:
    token = token_label(run.tokens_in[step - 1])
    # short, to fit a phone; the caption explains rows and columns
    return _("AttnRes mix for byte '{token}'").format(token=token)


def attn_res_step(base: dict, run: RunSummary, step: int) -> dict:
    """`attn_res_figure` at another step, from that figure's dict (same run)."""
    z = np.asarray(run.attn_res[step - 1], dtype=np.float32)  # as style.heatmap stores it
    return patched(base, {0: {"z": z}}, {"title": {"text": _attn_res_title(run, step)}})


def attn_res_figure(run: RunSummary, step: int) -> go.Figure:
    """Heatmap of the AttnRes weights for the token of `step`: sub-layer mixes × depth sources."""
    z = run.attn_res[step - 1]  # (mixes, sources)
    hover = _("{mix}<br>source: {source}<br>weight {weight}").format(
        mix="%{y}", source="%{x}", weight="%{z:.2f}"
    )
    fig = go.Figure(weight_heatmap(z, 1.0, run.source_labels, run.mix_labels, hover))
    base_layout(
        fig,
        title=_attn_res_title(run, step),
        x_title=_("source (block sums)"),
        y_title=_("mix before …"),
        height=560,
    )
    fig.update_yaxes(autorange="reversed", showgrid=False)
    fig.update_xaxes(showgrid=False)
    return fig
