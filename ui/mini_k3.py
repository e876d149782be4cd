"""mini-K3, shared by the Kimi K3 and Experts lessons: loaded once per process, and what the
pages ask it about a reader's text, cached per text."""

from __future__ import annotations

import streamlit as st

from core import k3
from core.models.mini_k3 import MiniK3


@st.cache_resource(show_spinner="Loading mini-K3 …")
def mini_k3() -> MiniK3:
    return MiniK3.load()


def mini_k3_or_none() -> MiniK3 | None:
    """The model, or a clear message and None when the checkpoint is missing (the page goes on)."""
    try:
        return mini_k3()
    except FileNotFoundError as err:
        st.error(f"The mini-K3 checkpoint is missing: {err}")
        return None


@st.cache_data(show_spinner="mini-K3 is reading your text, one byte at a time …", max_entries=16)
def live_run(ids: tuple[int, ...], new_tokens: int) -> k3.RunSummary:
    """mini-K3 reads the text byte by byte, then writes `new_tokens` more (lesson 8's stepper)."""
    return k3.live_run(mini_k3(), list(ids), new_tokens)


@st.cache_data(show_spinner=False, max_entries=32)
def routing(ids: tuple[int, ...]) -> list[k3.TextRouting]:
    """Every MoE layer's routing of the whole text (lesson 9's router pictures)."""
    return k3.route_text(mini_k3(), list(ids))
