"""From GPT-2 to Kimi K3 — the router: page config, the course outline, a shared sidebar.

Run with `./run.sh` (sets up a venv on first use) or `streamlit run app.py`.
"""

import streamlit as st
import torch

from ui.course import COURSE, SECTIONS, available

# The live models are tiny: one thread avoids thread hand-off costs that dwarf their maths.
torch.set_num_threads(1)

st.set_page_config(
    page_title="From GPT-2 to Kimi K3",
    page_icon=":material/school:",
    layout="wide",
    initial_sidebar_state="expanded",
)

lessons = available()
pages = {
    section: [
        st.Page(
            item.file,
            title=item.label,
            icon=item.icon,
            url_path=item.url_path,
            default=(item == COURSE.start),
        )
        for item in lessons
        if item.section == section
    ]
    for section in SECTIONS
}
navigation = st.navigation({section: group for section, group in pages.items() if group}, position="sidebar")

with st.sidebar:
    st.caption(
        "A course that runs: tiny models compute live in your browser session, "
        "and every number comes from the code or from a cited spec. "
        "Each lesson fixes what the one before it left broken."
    )

navigation.run()
