"""First-use definitions: the "new words" box a lesson opens with, and the glossary's lookups.

A lesson calls `new_words("softmax", "head", …)` right after `lesson_header`, naming the glossary
terms (core/glossary.py) its prose uses for the first time in the course. Each term is shown with
its one plain sentence and, when another lesson explains it in depth, that lesson's number. The
order test (tests/app/test_glossary.py) keeps the lists honest. Names and sentences are shown in the
reader's language; the English records stay what the order test matches.
"""

from __future__ import annotations

import streamlit as st

from core.glossary import Term, get
from core.i18n import N_, _
from ui.course import lesson_ref
from ui.depth import engineer


def gloss(item: Term, here: str | None = None) -> str:
    """One term as a markdown line: name, sentence, and where it is explained — first (the lesson whose
    "new words" box a reader meets it in) and in depth, when that is a later lesson."""
    first, deep = item.first_lesson, item.lesson
    if here in (first, deep):
        where = "" if here == deep else _("more in {deep}").format(deep=lesson_ref(deep))
    elif first == deep:
        where = _("more in {deep}").format(deep=lesson_ref(deep))
    else:
        where = _("first in {first}, more in {deep}").format(first=lesson_ref(first), deep=lesson_ref(deep))
    line = _("**{name}** — {sentence}").format(name=item.shown_name(), sentence=item.shown_sentence())
    return line + (_(" *({where})*").format(where=where) if where else "")


def new_words(
    *keys: str,
    engineer_keys: tuple[str, ...] = (),
    here: str | None = None,
    expanded: bool = True,
    title: str = N_("New words in this lesson"),
    intro: str = "",
) -> None:
    """The terms this lesson uses for the first time in the course, each with its definition (the
    map, which names every stage, calls them words you will meet: each is taught later). `engineer_keys`
    are terms only the Engineer depth uses (tool names, benchmark flags): listed at that depth only, so a
    Story reader's box holds just the words their Story uses (ui/depth.py). `title` is the English source,
    translated here; `intro` (already translated) is a plain paragraph above the list, for a box that
    explains an idea as well as its words (Collisions' "What is training?")."""
    shown = keys + tuple(engineer_keys) if engineer() else keys
    terms = [get(key) for key in shown]  # an unknown key fails here, loudly
    if not terms:
        return
    label = _("{title} ({n})").format(title=_(title), n=len(terms))
    with st.expander(label, expanded=expanded, icon=":material/menu_book:"):
        if intro:
            st.markdown(intro)
        st.markdown("\n".join(f"- {gloss(item, here)}" for item in terms))
        st.caption(_("Every word the course uses is in the Glossary at the end of the menu."))
