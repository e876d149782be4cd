"""Which language a reader reads in, per reader: the link's `?lang=`, then their own choice this
session, then their browser's language (`st.context.locale`) on a first visit.

`reader_language()` runs at the start of every script run (the router, and each lesson's header for
a page opened on its own) and sets `core.i18n`'s per-run language; the sidebar's switch changes it and
writes it into the link, so a shared lesson link opens in its language. Nothing here is process-wide.
"""

from __future__ import annotations

import streamlit as st

from core.i18n import DEFAULT, LANGUAGES, N_, _, set_language, use_fallback

_CHOSEN = "course_language"  # session_state: this reader's language once known


def _session_language() -> str | None:
    """This reader's language from their session, for a run that did not set it (a fragment's rerun
    runs in a fresh thread); None outside a Streamlit run."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        if get_script_run_ctx(suppress_warning=True) is None:
            return None
        return st.session_state.get(_CHOSEN)
    except Exception:  # no session (a bare script run, a worker thread)
        return None


use_fallback(_session_language)


def language_for_locale(locale: str | None) -> str:
    """The course language for a browser's locale: "ja", "ja-JP" → Japanese; anything else English."""
    return "ja" if (locale or "").lower().startswith("ja") else DEFAULT


def browser_locale() -> str | None:
    """The reader's browser language (`st.context.locale`, e.g. "ja-JP"); None without a browser."""
    try:
        return st.context.locale
    except Exception:  # no browser context (a bare script run)
        return None


def reader_language() -> str:
    """Set and return this run's language; keeps `?lang=` in the link when the reader reads Japanese
    or chose a language themselves."""
    asked = st.query_params.get("lang")
    if asked in LANGUAGES:
        lang = asked
        st.session_state[_CHOSEN] = lang
    elif _CHOSEN in st.session_state:
        lang = st.session_state[_CHOSEN]
    else:
        lang = language_for_locale(browser_locale())
        st.session_state[_CHOSEN] = lang
    set_language(lang)
    if lang != DEFAULT and st.query_params.get("lang") != lang:
        st.query_params["lang"] = lang  # a page change drops the query string: put it back
    return lang


def _switched() -> None:
    lang = st.session_state["language_switch"]
    if lang in LANGUAGES:
        st.session_state[_CHOSEN] = lang
        st.query_params["lang"] = lang


def language_switch() -> None:
    """The sidebar's English / 日本語 switch (labelled in both languages, so either reader finds it)."""
    lang = st.session_state.get(_CHOSEN, DEFAULT)
    st.session_state["language_switch"] = lang
    st.segmented_control(
        N_("Language / 言語"),
        options=list(LANGUAGES),
        format_func=LANGUAGES.get,
        key="language_switch",
        on_change=_switched,
        help=_("The whole course reads in either language; the link keeps your choice."),
    )
