"""Accessibility styles Streamlit's theme cannot set (issue 14): a visible focus ring on its links,
and page-link labels that wrap instead of being cut; and Japanese line breaking (issue 41).

Streamlit 1.67 draws no focus indicator on the sidebar's page links (`st.navigation`) nor on
`st.page_link` (outline: none, no shadow), so a keyboard reader cannot see where they are
(WCAG 2.1, 2.4.7 Focus visible). It also keeps an `st.page_link` label on one line and cuts it
with an ellipsis, so on a phone "How a batch shares the weights: open the planner at ba…" hid
where the link goes (1.4.10 Reflow): labels wrap here. Call `focus_rings()` once per run from the
router (`app.py`, right after `st.set_page_config`); `tests/browser/test_keyboard.py` checks every
Tab stop, `tests/browser/test_phone.py` that no link label is cut.
"""

from __future__ import annotations

import streamlit as st

from core.i18n import LANGUAGES

RING = "#1c4fd8"  # the attention blue: 6.6 : 1 on white and on the sidebar (WCAG 1.4.11 needs 3)

FOCUS_CSS = f"""
[data-testid="stSidebarNavLink"]:focus-visible,
[data-testid="stPageLink-NavLink"]:focus-visible {{
    outline: 2px solid {RING};
    outline-offset: 2px;
}}
[data-testid="stPageLink-NavLink"] :is(span, div, p) {{
    white-space: normal;
    overflow: visible;
    text-overflow: clip;
    line-height: 1.45;
}}
"""


# Japanese line breaking (issue 41). `line-break: strict` is kinsoku as a Japanese reader expects it: no
# small kana (ィ, ッ), no ー and no closing bracket or 「、。」 at the start of a line ("コミュニテ／ィ" was
# allowed by the default). Headings, labels, buttons and table headers break between phrases, not inside a
# word ("レッス／ン"): `word-break: auto-phrase` (Chromium 119+; others keep their default), on the
# element and everything inside it (Streamlit's markdown sets its own word-break, hence !important), with
# a break inside a word only when one phrase is wider than its box. Button labels wrap instead of being
# cut with an ellipsis ("実行：密なモデルとエキ…"). `:lang(ja)` follows <html lang>, which page_language() sets.
JAPANESE_CSS = """
:lang(ja) {
    line-break: strict;
}
:lang(ja) :is(h1, h2, h3, h4, h5, h6, th, label, summary, button, [data-testid="stTab"]),
:lang(ja) :is(h1, h2, h3, h4, h5, h6, th, label, summary, button, [data-testid="stTab"]) * {
    word-break: auto-phrase !important;
    overflow-wrap: break-word !important;
}
:lang(ja) button [data-testid="stMarkdownContainer"],
:lang(ja) button [data-testid="stMarkdownContainer"] p {
    white-space: normal;
    overflow: visible;
    text-overflow: clip;
}
"""


def japanese_typography() -> None:
    """Add the Japanese line-breaking styles (they apply only while <html lang> is "ja")."""
    st.html(f"<style>{JAPANESE_CSS}</style>")


def focus_rings() -> None:
    """Add the focus-ring styles to the page (a <style>-only st.html takes no space)."""
    st.html(f"<style>{FOCUS_CSS}</style>")


def page_language(lang: str) -> None:
    """Set `<html lang>` to the reader's language (WCAG 3.1.1 Language of page): Streamlit always
    writes "en", and a screen reader then reads Japanese with English rules. A one-line script in the
    sidebar (it takes no room there); `lang` is one of core.i18n.LANGUAGES, never reader text."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}")
    st.sidebar.html(
        f"<script>document.documentElement.lang = {lang!r};</script>", unsafe_allow_javascript=True
    )
