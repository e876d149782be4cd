"""The shipped MQAR sweep (assets/recall/results.json), loaded, checked and drawn once per process."""

from __future__ import annotations

import streamlit as st

from core.figures.recall import accuracy_vs_pairs, memory_rows, training_curves
from core.recall import results as rr
from ui.charts import ReadyChart, ready_chart
from ui.errors import log


@st.cache_data(show_spinner=False)
def load_results() -> dict | None:
    """The shipped results, checked against the schema the panel reads (None if absent or stale)."""
    results = rr.load()
    if results is None:
        return None
    try:
        rr.check(results)
    except (KeyError, ValueError) as err:
        log.warning("assets/recall/results.json is not usable: %s", err)  # the server log, not the reader
        return None
    return results


@st.cache_resource(show_spinner=False)
def sweep_picture(lang: str) -> tuple[ReadyChart, list[dict]]:
    """The accuracy sweep and the memory table, built once per process and language (the results never
    change)."""
    results = load_results()
    return ready_chart(accuracy_vs_pairs(results)), memory_rows(results)


@st.cache_resource(show_spinner=False, max_entries=4)
def curves_picture(width: int, lang: str) -> ReadyChart:
    """The training curves of one width, built once per process and language (the results never change)."""
    return ready_chart(training_curves(load_results(), width))
