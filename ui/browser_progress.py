"""The reader's progress kept in their own browser (issue 45): a components-v2 element with no picture,
mounted once per run by the router (`keep_in_browser`), that reads the browser's localStorage and writes
it back (static/progress_store.js).

- On a page load the browser reports what it stored (the trigger "stored"), and `_reported` adds those
  lessons to the reader's session (ui/progress.py) before the script runs, so the sidebar's ✓ show at once.
- Every run hands the browser the session's progress; the browser adds it to what it keeps, and after a
  clear (the session's clear count went up) replaces it. Nothing is stored on the server.
- Keyed by the course's own `STORAGE_KEY`, and each session has its own token, so a new session (a reload,
  a reconnect to a restarted server) is told what the browser holds.

Under AppTest no JavaScript runs: progress then lives in the session only (tests/app/test_checks.py).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import streamlit as st

from core.checks import CHECKED, STORAGE_KEY, read_stored, stored_form
from ui import progress
from ui.live_chart import static_address

STORE = "course_progress_store"  # the element's key; its state holds the browser's report
_SESSION = "course_progress_session"  # session_state: this session's token
KEEPER = static_address(Path(__file__).resolve().parents[1] / "static" / "progress_store.js")
SCRIPT = (
    f"const keeper = new URL({json.dumps(KEEPER)}, document.baseURI).href;\n"
    "export default async function (component) { return (await import(keeper)).keep(component); }"
)

# isolated styles (a shadow root): the element draws nothing, and the browser tests' wait for every chart
# (tests/browser/conftest.py) looks only at the charts' un-isolated elements
_mount = st.components.v2.component(STORE, js=SCRIPT, isolate_styles=True)


def _reported() -> None:
    """The browser said what it stored: add those lessons to this reader's session."""
    state = st.session_state.get(STORE) or {}
    progress.add_done(read_stored(state.get("stored"), CHECKED))


def keep_in_browser() -> None:
    """Mount the keeper (once per run, in the router's sidebar): it reports, then keeps, this reader's progress."""
    session = st.session_state.setdefault(_SESSION, secrets.token_hex(8))
    _mount(
        key=STORE,
        data={
            "key": STORAGE_KEY,
            "record": stored_form(progress.done()),
            "clears": progress.clears(),
            "session": session,
        },
        on_stored_change=_reported,
        width="stretch",
        height="content",
    )
