"""Glossary: every term the course uses, in one plain sentence, with the lesson that explains it."""

from __future__ import annotations

import streamlit as st

from core.glossary import alphabetical
from ui.glossary import gloss
from ui.lesson import lesson_header, next_lesson
from ui.text import plain

lesson_header("glossary")
st.markdown(
    "Each lesson opens with the new words it uses, the first time the course uses them. "
    "All of them are here, A to Z, each with the lesson that explains it in depth."
)
query = st.text_input("Find a word", key="gl_find", max_chars=40, placeholder="e.g. softmax, VRAM, tg128")
needle = query.strip().lower()
shown = [t for t in alphabetical() if not needle or needle in f"{t.name} {t.sentence}".lower()]
if shown:
    st.markdown("\n".join(f"- {gloss(item)}" for item in shown))
else:
    st.info(f"No glossary word matches “{plain(query.strip())}”. Try a shorter piece of it.")
st.caption(f"{len(shown)} of {len(alphabetical())} words.")
next_lesson("glossary")
