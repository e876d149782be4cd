"""'Check yourself' at the end of a lesson (issue 45): its two or three questions (core/checks), answered
at once with a one-line why, and the lesson marked done once every answer is right.

`check_yourself(slug)` is drawn by the lesson frame's last call, `ui.lesson.next_lesson`, so every lesson
page gets its check without a line of its own; a page without questions (the map, the glossary) draws
nothing. The questions sit in an `st.fragment`: answering reruns only the check, not the lesson's models.
The answer that completes the check marks the lesson done in a widget callback, before any script runs,
then reruns the whole app once, so the sidebar's ✓ and the browser's copy (ui/browser_progress.py) follow.

Every choice is a radio and every number a number input, each labelled by its question (axe); options
are indices shown through their words, so an answer is judged the same in any language.
"""

from __future__ import annotations

import streamlit as st

from core.checks import Choice, Number, Question, all_right, questions
from core.i18n import _
from ui import progress
from ui.course import lesson

CONTAINER = "check_yourself"  # the check's box: tests/app/story.py leaves it out of the running text
_RERUN = "course_check_rerun"  # session_state: a check was just passed; the app reruns once to show it


def answer_key(slug: str, question: Question) -> str:
    """The session_state key of the widget answering `question` of lesson `slug`."""
    return f"check_{slug}_{question.key}"


def answers(slug: str, asked: tuple[Question, ...]) -> dict[str, object]:
    """What the reader has answered so far, by question key (None: not yet)."""
    return {q.key: st.session_state.get(answer_key(slug, q)) for q in asked}


def _answered(slug: str) -> None:
    """After any answer: if every answer is now right, mark the lesson done (and rerun the app to show it)."""
    asked = questions(slug)
    if all_right(asked, answers(slug, asked)) and progress.mark_done(slug):
        st.session_state[_RERUN] = True


def check_yourself(slug: str) -> None:
    """The lesson's check, in a bordered box at its end; nothing for a page without questions."""
    if questions(slug):
        _check(slug)


def _in_fragment_rerun() -> bool:
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return bool(ctx and ctx.fragment_ids_this_run)


@st.fragment
def _check(slug: str) -> None:
    if st.session_state.pop(_RERUN, False) and _in_fragment_rerun():
        st.rerun(scope="app")  # the sidebar and the browser's copy are drawn by the full run
    asked = questions(slug)
    with st.container(border=True, key=CONTAINER):
        st.markdown(_("**:material/quiz: Check yourself**"))
        st.caption(
            _(
                "A few questions on this lesson's idea, answered at once. Get them all right and the lesson is "
                "marked {mark} in the sidebar and on the map."
            ).format(mark=progress.DONE_MARK)
        )
        for number, question in enumerate(asked, start=1):
            given = _ask(slug, number, question)
            if given is not None:
                _feedback(question, given)
        if all_right(asked, answers(slug, asked)):
            st.success(
                _("**Check passed.** {lesson} is marked {mark} in the sidebar and on the map.").format(
                    lesson=lesson(slug).label, mark=progress.DONE_MARK
                ),
                icon=":material/task_alt:",
            )
        elif slug in progress.done():
            st.caption(
                _("{mark} You passed this check before; answer again any time.").format(
                    mark=progress.DONE_MARK
                )
            )


def _ask(slug: str, number: int, question: Question) -> object:
    """Draw one question's widget; returns what the reader answered (None: nothing yet)."""
    label = f"**{number}.** {question.ask}"
    key = answer_key(slug, question)
    if isinstance(question, Choice):
        words = dict(enumerate(question.options))  # made now, in the reader's language
        return st.radio(
            label,
            list(words),
            index=None,
            format_func=words.get,
            key=key,
            on_change=_answered,
            args=(slug,),
        )
    assert isinstance(question, Number)
    whole = question.decimals == 0
    return st.number_input(
        label,
        value=None,
        step=int(question.step) if whole else question.step,
        format="%d" if whole else f"%.{question.decimals}f",
        placeholder=_("Your answer"),
        key=key,
        on_change=_answered,
        args=(slug,),
    )


def _feedback(question: Question, given: object) -> None:
    """Right or not, at once, with the one-line why."""
    if question.is_right(given):
        st.success(_("**Right.** {why}").format(why=question.why), icon=":material/check_circle:")
    else:
        st.warning(_("**Not quite.** {why}").format(why=question.why), icon=":material/replay:")
