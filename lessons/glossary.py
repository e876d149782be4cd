"""Glossary: every term the course uses, in one plain sentence, with the lesson that explains it."""

from __future__ import annotations

import streamlit as st

from core.glossary import alphabetical, search
from core.i18n import _
from ui.glossary import gloss
from ui.lesson import lesson_header, next_lesson
from ui.text import plain

lesson_header("glossary")
st.markdown(
    _(
        "Each lesson opens with the new words it uses, the first time the course uses them. "
        "All of them are here in dictionary order, each with the lesson that explains it in depth."
    )
)
query = st.text_input(
    _("Find a word"), key="gl_find", max_chars=40, placeholder=_("e.g. softmax, VRAM, tg128")
)
# a word is found by its English name and sentence, by what the reader reads, and by its reading (こくばん)
shown = search(query)
if shown:
    st.markdown("\n".join(f"- {gloss(item)}" for item in shown))
else:
    st.info(
        _("No glossary word matches “{query}”. Try a shorter piece of it.").format(query=plain(query.strip()))
    )
st.caption(_("{shown} of {total} words.").format(shown=len(shown), total=len(alphabetical())))
next_lesson("glossary")
