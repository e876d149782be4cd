"""The page guard (ui/errors.py): an unexpected error shows a reader one friendly line, never a
traceback, and the log keeps the rest; st.stop passes through; the router runs every page inside it."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def _failing_page(reraise):
    import streamlit as st

    from ui.errors import guarded

    def page():
        st.write("before")
        open("/srv/secret/settings.toml").read()  # a server path in the message

    guarded(page, reraise=reraise)


def _stopping_page():
    import streamlit as st

    from ui.errors import guarded

    guarded(st.stop)
    st.write("not reached")


def test_an_error_shows_one_friendly_line_and_logs_the_rest(caplog):
    at = AppTest.from_function(_failing_page, kwargs={"reraise": False}, default_timeout=60)
    with caplog.at_level(logging.ERROR, logger="course"):
        at.run()
    assert not at.exception
    [error] = at.error
    ref = re.search(r"reference ([0-9a-f]{8})", error.value).group(1)
    assert "\n" not in error.value
    for secret in ("/srv", "settings", "Traceback", "FileNotFoundError", "Errno"):
        assert secret not in error.value
    for detail in (ref, "Traceback", "FileNotFoundError", "/srv/secret/settings.toml"):
        assert detail in caplog.text  # the console log has it all


def test_under_apptest_the_error_is_raised_again_so_page_tests_see_it():
    at = AppTest.from_function(_failing_page, kwargs={"reraise": None}, default_timeout=60)
    at.run()
    assert at.exception and at.error  # the friendly line, and the exception the page tests check


def test_st_stop_passes_through_the_guard():
    at = AppTest.from_function(_stopping_page, default_timeout=60)
    at.run()
    assert not at.exception and not at.error and not at.markdown


def test_the_router_runs_the_page_inside_the_guard():
    text = (ROOT / "app.py").read_text()
    assert "guarded(navigation.run)" in text and "\nnavigation.run()" not in text
