"""Reader text on the page, shown as the reader typed it: never as a link, an image, HTML or formatting.

Streamlit renders the body of `st.markdown`, `st.caption`, `st.info` / `st.error` / `st.warning`,
headers and widget labels as GitHub-flavoured markdown (with LaTeX and `:colour[…]` directives).
Anything a reader typed — a prompt, a recall list, a glossary search, a config's name, an error
message that quotes them — and anything that arrives in a shared link goes through `plain` (or
`code_span`) before it is put into such a body. `st.code`, `st.dataframe` and plotly tick labels
show text as text and need neither.
"""

from __future__ import annotations

import re

# Markdown syntax that can start inside a line: backslash escapes (CommonMark shows the character
# itself). [ ] stop links and images (and ![…], :colour[…]); < > stop HTML and <autolinks>; & stops
# entities; * ` ~ | $ # stop emphasis, code, strike-through, tables, LaTeX and headings.
_ALWAYS = re.compile(r"([\\`*\[\]<>&|~$#])")
# ":name" after a blank or a mark is a directive to Streamlit (":red x" shows " x"); "key:value" is not.
_DIRECTIVE = re.compile(r"(?<![^\W_]):(?=[^\W\d_])")
# "_" opens or closes emphasis only at a word's edge; "model_type" stays as it is.
_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# At the start of a body: a list item, a numbered item, a setext underline, indented code.
_LINE_START = re.compile(r"^\s*(?:([-+=])|(\d+)([.)]))")
# GitHub's bare-URL links ("www.x.org", "https://x.org", "a@b.org") are found by a search over the
# text *after* escapes are resolved (Streamlit bundles mdast-util-gfm-autolink-literal), so an
# escape cannot stop them: an invisible WORD JOINER (U+2060) breaks the pattern instead.
_AUTOLINK = re.compile(r"(?i)(?<=www)(?=\.)|(?<=:)(?=//)|(?=@)")
WORD_JOINER = "\u2060"
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")


def plain(text: object) -> str:
    """`text` made safe to put into any markdown body: it renders as these characters, on one line
    (line breaks become spaces, leading blanks go), and nothing in it becomes a link, an image,
    HTML, formatting, a block or LaTeX.

    plain("[x](http://evil.org) <b>") == "\\\\[x\\\\](http:\u2060//evil.org) \\\\<b\\\\>", which
    Streamlit shows as "[x](http://evil.org) <b>".
    """
    words = _LINE_BREAKS.sub(" ", str(text)).lstrip()
    words = _EDGE_UNDERSCORE.sub(r"\\_", _ALWAYS.sub(r"\\\1", words))
    words = _DIRECTIVE.sub(r"\\:", words)
    words = _LINE_START.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", words, count=1)
    return _AUTOLINK.sub(WORD_JOINER, words)


def code_span(text: object) -> str:
    """`text` as inline code that holds any characters, backticks included (CommonMark: the fence is
    one backtick longer than the longest run inside, padded with a space where the text touches it).
    Code is never a link, so no word joiner is needed."""
    words = _LINE_BREAKS.sub(" ", str(text))
    longest = max((len(run) for run in re.findall(r"`+", words)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if words.startswith("`") or words.endswith("`") else ""
    return f"{fence}{pad}{words}{pad}{fence}"
