"""The reader's progress (issue 45): the lessons whose check they passed, in their own session.

Progress is this reader's alone: a set of lesson slugs in their `st.session_state`, which their own browser
fills from what it stored on an earlier visit and keeps up to date (ui/browser_progress.py); the server
keeps nothing after the session. Under AppTest, with no browser, progress lives in the session only.
The sidebar and the map mark a done lesson with a ✓ (`marked`); the map shows the whole of it and the
button that clears it (`progress_panel`).
"""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from core.checks import CHECKED
from core.i18n import _
from ui.course import Lesson, lesson

DONE = "course_progress_done"  # session_state: frozenset of the slugs whose check this reader passed
CLEARS = "course_progress_clears"  # session_state: how often this reader cleared (the browser follows)
DONE_MARK = "✓"
DONE_ICON = ":material/task_alt:"


def done() -> frozenset[str]:
    """The lessons whose check this reader passed (empty outside a Streamlit run)."""
    try:
        return frozenset(st.session_state.get(DONE, ()))
    except Exception:  # no session (a bare script run)
        return frozenset()


def mark_done(slug: str) -> bool:
    """Mark lesson `slug` done; True when it was not done before."""
    if slug not in CHECKED:
        raise ValueError(f"lesson {slug!r} has no check")
    before = done()
    st.session_state[DONE] = before | {slug}
    return slug not in before


def add_done(slugs: Iterable[str]) -> bool:
    """Add lessons the reader's browser remembered; True when any was new to this session."""
    before = done()
    after = before | (frozenset(slugs) & frozenset(CHECKED))
    st.session_state[DONE] = after
    return after != before


def clear() -> None:
    """Forget this reader's progress, here and (on this run) in their browser."""
    st.session_state[DONE] = frozenset()
    st.session_state[CLEARS] = st.session_state.get(CLEARS, 0) + 1


def clears() -> int:
    return st.session_state.get(CLEARS, 0)


def marked(item: Lesson) -> str:
    """A lesson's label as the sidebar and the map show it: "4 · Linear attention ✓" once its check is passed
    (the ✓ is text, so a screen reader says it too)."""
    return f"{item.label} {DONE_MARK}" if item.slug in done() else item.label


def marked_icon(item: Lesson) -> str:
    """A lesson's sidebar icon: a ticked circle in place of its own once its check is passed, so the
    column of icons reads as the reader's progress at a glance."""
    return DONE_ICON if item.slug in done() else item.icon


def progress_panel() -> None:
    """The map's box: how many lessons are checked, which, and the button that clears it all."""
    finished = [lesson(slug) for slug in CHECKED if slug in done()]
    with st.container(border=True, key="course_progress"):
        if finished:
            st.markdown(
                _("**:material/task_alt: Your progress:** {n} of {total} lessons checked {mark}").format(
                    n=len(finished), total=len(CHECKED), mark=DONE_MARK
                )
            )
            st.caption(_(", ").join(item.label for item in finished))
        else:
            st.markdown(
                _(
                    "**:material/task_alt: Your progress:** none yet. Pass the check at the end of a lesson to mark "
                    "it {mark} here and in the sidebar."
                ).format(mark=DONE_MARK)
            )
        st.button(
            _("Clear my progress"),
            icon=":material/restart_alt:",
            key="course_progress_clear",
            on_click=clear,
            disabled=not finished,
            help=_(
                "Your progress is kept in this browser only: nothing is stored on the server, and no account."
            ),
        )
