"""The whole trained-recall panel: the shipped sweep, then a model answering the reader's pairs."""

from __future__ import annotations

import streamlit as st

from core.i18n import _
from ui.recall.ask import render_ask
from ui.recall.results import load_results
from ui.recall.sweep import render_sweep


def render_trained_recall(key: str) -> None:
    """The whole panel (the caller gives its heading); `key` prefixes every widget key."""
    results = load_results()
    if results is None:
        st.warning(
            _(
                "The trained-recall results are missing (assets/recall/results.json). "
                "Run `python -m core.train recall`."
            )
        )
        return
    render_sweep(results, key)
    render_ask(results, key)
