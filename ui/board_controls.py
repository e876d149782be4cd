"""The board pages' one choice of keys: random unit vectors, or orthogonal ones while rows last.

Linear attention, Collisions, DeltaNet and Forgetting each let the reader pick the keys their board is
written with (core/board/keys.py makes them); one radio, so the four read and behave alike.
"""

from __future__ import annotations

import streamlit as st

from core.i18n import N_, _

KEY_CHOICES = {
    "random": N_("random unit vectors"),
    "orthogonal": N_("orthogonal (one row each)"),
}  # shown via _()


def key_choice(
    key: str,
    *,
    where=st,
    labels: dict[str, str] = KEY_CHOICES,
    default: str = "random",
    help: str | None = None,
) -> str:
    """The reader's kind of keys ("random" or "orthogonal"), as a row of radio buttons in `where`."""
    return where.radio(
        _("keys"),
        list(labels),
        index=list(labels).index(default),
        format_func=lambda kind: _(labels[kind]),
        key=key,
        horizontal=True,
        help=help,
    )
