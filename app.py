"""From GPT-2 to Kimi K3 — the router: page config, the course outline, a shared sidebar.

Run with `./run.sh` (sets up a venv on first use) or `streamlit run app.py`.
"""

import streamlit as st

from core.i18n import _
from core.threads import set_once
from ui.a11y import focus_rings, japanese_typography, page_language
from ui.browser_progress import keep_in_browser
from ui.course import COURSE, SECTIONS, available, lesson, lesson_ref
from ui.depth import depth_switch, reader_depth
from ui.errors import guarded
from ui.i18n import language_switch, reader_language
from ui.progress import marked, marked_icon

# The live models are tiny: one thread avoids thread hand-off costs that dwarf their maths. The
# count is process-wide, so it is set once, on the first run of this script, never per request
# (core/threads.py); nothing the app calls changes it afterwards.
set_once(1)
lang = reader_language()  # this reader's language, for everything this run shows (ui/i18n.py)
reader_depth()  # Story or Engineer, kept in the link (ui/depth.py)

st.set_page_config(
    page_title=_("From GPT-2 to Kimi K3"),
    page_icon=":material/school:",
    layout="wide",
    initial_sidebar_state="auto",  # open on a wide screen, closed on a phone: the lesson comes first
)
focus_rings()  # a visible focus ring on the sidebar's and the lessons' links (WCAG 2.4.7)
page_language(lang)  # <html lang> follows the reader's language (WCAG 3.1.1)
japanese_typography()  # kinsoku and phrase-wise breaks while that language is Japanese (issue 41)

lessons = available()
pages = {
    section: [
        st.Page(
            item.file,
            title=marked(item),  # "4 · Linear attention ✓" once the reader passed its check (ui/progress.py)
            icon=marked_icon(item),
            url_path=item.url_path,
            default=(item.slug == COURSE.start.slug),
        )
        for item in lessons
        if item.section == section
    ]
    for section in SECTIONS
}
# expanded: every lesson listed (past 10 pages Streamlit would otherwise fold the rest under "View more")
navigation = st.navigation(
    {_(section): group for section, group in pages.items() if group}, position="sidebar", expanded=True
)

with st.sidebar:
    language_switch()
    depth_switch()
    st.caption(
        _(
            "A course that runs: its tiny models compute live on the server that sends you this page — your own "
            "machine when you start it yourself with ./run.sh. The {gpu_page} page ({gpu_ref}) measures the "
            "machine that server runs on. Every number comes from the code or from a cited spec, and each lesson "
            "fixes what the one before it left broken."
        ).format(gpu_page=lesson("your_gpu").title, gpu_ref=lesson_ref("your_gpu"))
    )
    keep_in_browser()  # the reader's progress, kept in their own browser (ui/browser_progress.py)

# an unexpected error: one friendly line for the reader, the full traceback in the server's log
guarded(navigation.run)
