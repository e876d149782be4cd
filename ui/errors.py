"""An unexpected error on a page: one friendly line for the reader, the full error in the server's log.

A reader never sees a traceback, an exception's text or a server path: those can name files,
settings or other readers' input. `.streamlit/config.toml` sets `client.showErrorDetails = "none"`
for whatever escapes this guard (a fragment's rerun); `guarded` covers a whole page run.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

import streamlit as st

from core.i18n import N_, _

log = logging.getLogger("course")
if not log.handlers:  # the server's console (stderr), however Streamlit set up its own loggers
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.addHandler(_handler)
    log.setLevel(logging.INFO)

FRIENDLY = N_(
    "Sorry — something went wrong on this page. Try again, or pick another lesson; "
    "the details are in the server's log under reference {ref}."
)


def under_app_test() -> bool:
    """True inside Streamlit's AppTest, which stands a mock in for the server's runtime."""
    from streamlit.runtime import Runtime

    return Runtime.exists() and type(Runtime.instance()) is not Runtime


def guarded(run: Callable[[], object], *, reraise: bool | None = None) -> None:
    """Run a page. An unexpected exception is logged in full with a short reference, and the reader
    sees one line with that reference. `reraise` (default: only under AppTest) raises it again
    after, so the page tests still fail on it. Streamlit's st.stop / st.rerun / st.switch_page are
    BaseExceptions, not Exceptions, and pass through untouched."""
    try:
        run()
    except Exception:
        ref = uuid.uuid4().hex[:8]
        log.exception("page failed (reference %s)", ref)
        st.error(_(FRIENDLY).format(ref=ref), icon=":material/error:")
        if under_app_test() if reraise is None else reraise:
            raise
