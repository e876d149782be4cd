"""The lesson frame every page follows, and the text box every live lesson shares.

Frame (docs/architecture.md, Lesson frame): the problem the last stage left → the live model → what to
notice → the formula and the code → what is still missing → check yourself → the next lesson. Charts are
drawn by `ui.charts`; the Step controls are `ui.stepped.step_controls`.
"""

from __future__ import annotations

import inspect

import streamlit as st

from core.i18n import _
from ui.checks import check_yourself
from ui.course import lesson, next_available
from ui.depth import engineer, reader_depth
from ui.i18n import reader_language


def lesson_header(slug: str) -> None:
    """Title and one-line subtitle of the lesson `slug`, from the course outline, in the reader's
    language (set here too, for a page opened on its own, outside the router)."""
    reader_language()
    reader_depth()
    item = lesson(slug)
    st.title(item.label)
    st.caption(item.subtitle)
    if item.takeaway:  # the lesson's point before anything else, for a reader who reads no further
        with st.container(border=True, key="in_one_sentence"):
            st.markdown(
                _("**:material/lightbulb: In one sentence.** {takeaway}").format(takeaway=item.takeaway)
            )


def problem(md: str) -> None:
    """The problem the previous stage left, in two or three plain sentences."""
    with st.container(border=True):
        st.markdown(_("**:material/report: The problem the last stage left**"))
        st.markdown(md)


def notice(question: str, answer: str, key: str) -> None:
    """A 'predict before you click' prompt: the question in view, the answer behind a reveal."""
    with st.container(border=True):
        st.markdown(
            _("**:material/psychology_alt: Predict before you click.** {question}").format(question=question)
        )
        if st.toggle(_("Show the answer"), key=f"{key}_reveal"):
            st.markdown(answer)


def formula(latex: str, caption: str = "", key: str = "formula") -> None:
    """The maths behind the picture, hidden until the reader asks for it."""
    if st.toggle(_("Show the formula"), key=key):
        st.latex(latex)
        if caption:
            st.caption(caption)


def code(*objects, key: str = "code") -> None:
    """The real source of the core functions the page runs (not a copy: read at run time); Engineer
    depth only (ui/depth.py)."""
    if engineer() and st.toggle(_("Show the code"), key=key):
        for obj in objects:
            module = getattr(obj, "__module__", "")
            st.caption(f"`{module}.{obj.__qualname__}`")
            st.code(inspect.getsource(obj), language="python")


def still_missing(md: str) -> None:
    """What this stage still cannot do — the bridge to the next lesson."""
    with st.container(border=True):
        st.markdown(_("**:material/arrow_forward: What is still missing**"))
        st.markdown(md)


def link_to(slug: str, label: str) -> None:
    """A link to the lesson `slug`; plain text when the page runs outside the router."""
    target = lesson(slug)  # an unknown slug fails here, also outside the router
    try:
        st.page_link(target.file, label=label, icon=":material/east:")
    except Exception:  # the page was opened on its own (tests, `streamlit run lessons/…`)
        st.markdown(f"**→ {label}**")


def next_lesson(slug: str) -> None:
    """The lesson's end, the last call of every page: its "Check yourself" (ui/checks.py; none on the map
    and the glossary), then a link to the next lesson after `slug` that exists, or the end of the course."""
    check_yourself(slug)
    item = next_available(slug)
    if item is None:
        st.markdown(_("**That is the end of the course.** Go back to the map to revisit any stage."))
        return
    link_to(
        item.slug, _("Next: {lesson}").format(lesson=item.label)
    )  # short: a link label is cut, not wrapped, on a phone
    st.caption(item.subtitle)


def prompt_input(key: str, default: str, max_chars: int = 400, label: str = "") -> str:
    """The reader's own text: any characters are fine (emoji, Japanese …); they become bytes."""
    return st.text_input(
        label or _("Your text"),
        value=default,
        max_chars=max_chars,
        key=key,
        help=_("Anything you like: the tiny models read raw UTF-8 bytes, so emoji and any script work."),
    )
