"""Operations per step beside bytes, drawn under each benchmark's results at Engineer depth (the page's
benchmark sections and the committed run's full charts are Engineer-only): the rows and the sentence come
from core.gpu.output.report, computed from the run's own points."""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from core.gpu.output.report import floors_words
from core.gpu.timing.kernels import KernelFloors
from core.i18n import _


def floors_table(rows: list[dict[str, str]], points: Iterable[KernelFloors]) -> None:
    """Operations per step beside bytes, behind an expander: each counted point's kernel floor next to its
    bytes' floor, and the sentence computed from them. Nothing for a run that counted none (runs written
    before the count, such as the committed ones)."""
    words = floors_words(points)
    if not rows or words is None:
        return
    with st.expander(_("Operations per step and the two floors"), icon=":material/memory:"):
        st.table(rows, hide_index=True, border="horizontal")
        st.caption(words)
