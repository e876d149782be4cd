"""The switch a page picks its model with, shared by every page that runs a released model.

One radio per page (`{prefix}_model`): the shipped model and every release found on this machine.
When a download finishes, the page runs again and the switch picks the new weights by itself, with
one line saying they are here (`remember_arrival`; a widget's value cannot change in the run that
drew it, so the pick waits in the session for the next run).
"""

from __future__ import annotations

import streamlit as st

from core.i18n import _


def _arrival_key(prefix: str) -> str:
    return f"{prefix}_arrived"


def remember_arrival(prefix: str, choice: str, label: str) -> None:
    """Weights just arrived: the next run of the page picks `choice` and says `label` is here."""
    st.session_state[_arrival_key(prefix)] = (choice, label)


def model_switch(prefix: str, title: str, options: dict[str, str], help: str) -> str:
    """The reader's pick among `options` (choice → label), the first one by default."""
    key = f"{prefix}_model"
    arrived = st.session_state.pop(_arrival_key(prefix), None)
    if arrived is not None and arrived[0] in options:
        st.session_state[key] = arrived[0]
        st.success(_("{model} is here.").format(model=arrived[1]), icon=":material/check_circle:")
    return st.radio(title, list(options), format_func=options.get, horizontal=True, key=key, help=help)
