"""How deep a reader reads, per reader: *Story* (the default: short, plain, one idea per picture) or
*Engineer* (everything, inline: sources, code, benchmark tables, the "go deeper" sections).

The same shape as the language (ui/i18n.py): the link's `?depth=`, then the reader's own choice this
session; Story when neither says otherwise. `reader_depth()` runs at the start of every script run (the
router, and each lesson's header for a page opened on its own) and puts `?depth=engineer` back into the
link after a page change, so a shared Engineer link opens in Engineer depth. Story is the page without
the parameter (or with `?depth=story`). Nothing here is process-wide.

A page shows its Engineer-only parts behind `if engineer_section(title):` (a heading, then the section
inline in reading order) or `if engineer():` (no heading). A passage told at both depths is one
`in_depth(story, full)` call: the plain version in Story, the full one in its place in Engineer. Anything
else Story shows, Engineer shows too (tests/app/test_depths.py).
"""

from __future__ import annotations

import streamlit as st

from core.i18n import N_, _

STORY, ENGINEER = "story", "engineer"
DEPTHS = {STORY: N_("Story"), ENGINEER: N_("Engineer")}
_CHOSEN = "course_depth"  # session_state: this reader's depth once known
_SWITCH = "depth_switch"
REPLACED = "course_depth_replaced"  # session_state: Story passages shown in place of a fuller Engineer one


def reader_depth() -> str:
    """Set and return this run's depth; keeps `?depth=engineer` in the link (a page change drops it)."""
    asked = st.query_params.get("depth")
    if asked in DEPTHS:
        depth = asked
        st.session_state[_CHOSEN] = depth
    else:
        depth = st.session_state.get(_CHOSEN, STORY)
    if depth == ENGINEER and st.query_params.get("depth") != ENGINEER:
        st.query_params["depth"] = ENGINEER
    elif depth == STORY and "depth" in st.query_params and asked != STORY:
        del st.query_params["depth"]
    return depth


def engineer() -> bool:
    """True when this reader reads at Engineer depth (outside a Streamlit run: False, the Story)."""
    try:
        return st.session_state.get(_CHOSEN, STORY) == ENGINEER or st.query_params.get("depth") == ENGINEER
    except Exception:  # no session (a bare script run)
        return False


def engineer_section(title: str) -> bool:
    """An Engineer-only section: in Engineer depth draw its heading (marked with the engineers' icon)
    and return True, so the caller draws the section inline; in Story depth draw nothing, return False."""
    if not engineer():
        return False
    st.markdown(f"#### :material/engineering: {title}")
    return True


def in_depth(story: str, full: str, show=None) -> None:
    """One passage at two depths: Story's plain version or, at Engineer depth, the full one in its place —
    not both, so an engineer never reads the same idea twice. `show` draws it (`st.markdown` by default;
    `st.caption` for a caption). The Story text is noted in the reader's session (`REPLACED`) so the test
    that Engineer shows everything Story shows knows this passage was replaced by a fuller one."""
    show = show or st.markdown
    if engineer():
        show(full)
        return
    show(story)
    st.session_state.setdefault(REPLACED, set()).add(story)


def _switched() -> None:
    depth = st.session_state[_SWITCH]
    if depth in DEPTHS:
        st.session_state[_CHOSEN] = depth
        if depth == ENGINEER:
            st.query_params["depth"] = ENGINEER
        elif "depth" in st.query_params:
            del st.query_params["depth"]


def depth_switch() -> None:
    """The sidebar's Story / Engineer switch, beside the language switch."""
    st.session_state[_SWITCH] = st.session_state.get(_CHOSEN, STORY)
    st.segmented_control(
        _("Depth"),
        options=list(DEPTHS),
        format_func=lambda key: _(DEPTHS[key]),
        key=_SWITCH,
        on_change=_switched,
        help=_(
            "Story: the lesson in plain words, one idea per picture. Engineer: everything — sources, code, "
            "benchmark tables and the details behind each number. The link keeps your choice."
        ),
    )
