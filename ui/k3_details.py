"""Kimi K3's Engineer notes (issue 40): where the layer map comes from, and the memory chart with what the
fixed part is made of. The lesson (lessons/kimi_k3.py) shows the map's note at Engineer depth only; the chart
and its caption take the place of Story's sentence on memory."""

from __future__ import annotations

import streamlit as st

from core.figures.k3_memory import memory_at_context_figure
from core.i18n import _
from core.plan import attention_twin
from core.specs import SPECS
from core.units import format_bytes
from ui.charts import ready_chart, show_figure
from ui.depth import engineer, in_depth
from ui.stepped import built_once

K3 = SPECS["kimi_k3"]
CONTEXTS = (131_072, 1_048_576)  # 128K and 1M tokens


def k3_memory_figure():
    """The real K3's memory at 128K and 1M tokens: built once per process, and only at Engineer depth."""
    rows = attention_twin.memory_at_contexts(K3, list(CONTEXTS))
    return built_once("k3_memory", None, lambda: ready_chart(memory_at_context_figure(K3, rows)))


def map_caption() -> None:
    """Where the layer map comes from, and why it is 69 + 24 rather than a clean 3 : 1 (Engineer)."""
    st.caption(
        _(
            "Drawn from the released config (core/specs), one row per Attention Residuals block of "
            "{block} layers (explained below). The group KDA-KDA-KDA-MLA repeats "
            "{groups} times — the MLA columns — and layer {last} is one more MLA layer — so "
            "{kda} + {mla}, not a clean 3 : 1. Source: {source}"
        ).format(
            block=K3.attn_res_block_size,
            groups=K3.num_layers // 4,
            last=K3.num_layers,
            kda=K3.num_linear_layers,
            mla=K3.num_full_attention_layers,
            source=_(K3.source),
        )
    )


def memory_chart(rows: list, story: str) -> None:
    """K3's memory per conversation: Story's plain sentence `story`; at Engineer depth, in its place, the chart
    at 128K and 1M tokens and a caption with what the fixed part is made of (ui.depth.in_depth)."""
    if engineer():
        show_figure(k3_memory_figure(), key="k3_memory")
    in_depth(
        story,
        _(
            "Only the {mla} MLA layers grow ({numbers} numbers per token per layer, bf16). The fixed part is a "
            "sum: the boards of the {kda} KDA layers, one {dk} × {dv} board per head and {heads} heads a layer, "
            "in fp32 ({boards}), plus each KDA layer's short-convolution buffer (the last {kept} inputs of its "
            "{kernel}-wide convolution over q, k and v, bf16: {conv}) = {state}, whatever the length. At "
            "1M tokens K3 keeps {ratio:.1f}× less than the same model with MLA in every layer."
        ).format(
            mla=K3.num_full_attention_layers,
            numbers=K3.attention.cache_elements_per_token(),
            kda=K3.num_linear_layers,
            dk=K3.linear.head_k_dim,
            dv=K3.linear.head_v_dim,
            heads=K3.linear.v_heads,
            boards=format_bytes(K3.recurrent_state_bytes()),
            kept=K3.linear.conv_kernel - 1,
            kernel=K3.linear.conv_kernel,
            conv=format_bytes(K3.conv_state_bytes()),
            state=format_bytes(K3.state_bytes()),
            ratio=rows[-1].twin_cache / rows[-1].hybrid_total,
        ),
        show=st.caption if engineer() else st.markdown,
    )
