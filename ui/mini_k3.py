"""mini-K3, shared by the Kimi K3 and Experts lessons: loaded once per process, and what the
pages ask it about a reader's text, cached per text."""

from __future__ import annotations

import streamlit as st

from core.i18n import _
from core.models import mini_k3_trace
from core.models.mini_k3 import MiniK3


@st.cache_resource(show_spinner=False)
def _load() -> MiniK3:
    return MiniK3.load()


def mini_k3() -> MiniK3:
    """The trained model, loaded once per process (a spinner in the reader's language the first time)."""
    with st.spinner(_("Loading mini-K3 …")):
        return _load()


def mini_k3_or_none() -> MiniK3 | None:
    """The model, or a clear message and None when the checkpoint is missing (the page goes on)."""
    try:
        return mini_k3()
    except FileNotFoundError as err:
        st.error(_("The mini-K3 checkpoint is missing: {error}").format(error=err))
        return None


@st.cache_data(show_spinner=False, max_entries=16)
def _live_run(ids: tuple[int, ...], new_tokens: int, lang: str) -> mini_k3_trace.RunSummary:
    return mini_k3_trace.live_run(_load(), list(ids), new_tokens)


def live_run(ids: tuple[int, ...], new_tokens: int, lang: str) -> mini_k3_trace.RunSummary:
    """mini-K3 reads the text byte by byte, then writes `new_tokens` more (Kimi K3's stepper). The
    summary's row and column labels are in the reader's language, so `lang` keys the cache."""
    with st.spinner(_("mini-K3 is reading your text, one byte at a time …")):
        return _live_run(ids, new_tokens, lang)


@st.cache_data(show_spinner=False, max_entries=32)
def routing(ids: tuple[int, ...]) -> list[mini_k3_trace.TextRouting]:
    """Every MoE layer's routing of the whole text (Experts' router pictures)."""
    return mini_k3_trace.route_text(_load(), list(ids))
