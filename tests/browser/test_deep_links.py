"""Every lesson's own link works on a freshly started server: the lesson, and no "Page not found" dialog.

Streamlit learns an `st.navigation` app's pages only when `app.py` first runs. If the page files
sat in a folder named `pages/`, it would first take them for an old-style page folder and tell
the very first reader of a deep link that the page does not exist (a dialog over the lesson).
The lessons live in `lessons/` for that reason; these tests keep it so.

What makes the first reader different is one switch for the whole server: Streamlit 1.67 sets
`PagesManager.uses_pages_directory` (a class attribute) when the server's first session starts, from
whether a `pages/` folder sits beside `app.py`, and `st.navigation` turns it off for good on the app's first
run; every other piece of page state is the session's own (each session has its own PagesManager). So the
switch is the same whichever lesson the first reader asks for, and a fresh server per link would test it
16 times over. Here one fresh server, the session's own (tests/browser/conftest.py), serves a lesson's
link as its very first request, before any test uses it; and every lesson's link is the first page of its own
session on that server in test_pages_in_chromium.py (the lesson, no dialog, the address kept). A link is
checked once its lesson's heading is on the screen: the page list that would raise the dialog arrives before
the lesson is drawn.
"""

from __future__ import annotations

import pytest
import streamlit
from streamlit.runtime.pages_manager import PagesManager

from tests.browser.conftest import ROOT, first_link, link
from ui.course import COURSE, available

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_every_lesson_of_the_outline_is_checked():
    lessons = available()
    assert {item.slug for item in lessons} == {item.slug for item in COURSE.lessons if item.exists}
    assert len(lessons) > 4, "the deep-link check covers every lesson, not a sample"
    assert first_link() != COURSE.start, "the first visit must be a deep link, not the map at /"


def test_deep_link_is_the_first_page_a_fresh_server_serves(course_server_first_visit):
    _url, visit = course_server_first_visit
    item = first_link()
    assert visit.failure is None, f"{item.slug}: {visit.failure}"
    assert not visit.dialogs, f"{item.slug}: a dialog covers the lesson: {visit.dialogs}"
    assert item.title in visit.heading, f"{item.slug}: the page shows {visit.heading!r}"
    assert visit.path == link(item), f"{item.slug}: the address moved to {visit.path}"


def test_the_first_reader_switch_is_one_for_the_whole_server():
    """What lets one fresh server stand for all: the old-style page folder is looked for once a server (a
    class attribute of PagesManager, not a session's), beside app.py. If a Streamlit upgrade moves it, the
    reasoning above no longer holds and each link needs its own fresh server again."""
    assert "uses_pages_directory" in vars(PagesManager), (
        f"Streamlit {streamlit.__version__} no longer keeps the page-folder switch once a server: "
        "test each deep link on its own fresh server again"
    )
    assert not (ROOT / "pages").exists(), (
        "a pages/ folder beside app.py shows a deep link's first reader a dialog"
    )
