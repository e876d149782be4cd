"""Reader text is shown as typed: never as a markdown link, an image, HTML or formatting (issue 11).

Everything a reader types — a prompt, a recall list, a glossary search, a pasted config.json — and
everything a shared link carries is put on the page through `ui.text.plain` / `code_span`, `st.code`
or a dataframe. Each page that takes text gets a hostile one, and every markdown body on the page
is rendered the way a CommonMark renderer would: no link or image to the reader's address, no
raw HTML tag, and no bare URL that GitHub-flavoured markdown would turn into a link (Streamlit's
bundle finds those with the two patterns below, copied from mdast-util-gfm-autolink-literal).
"""

from __future__ import annotations

import html
import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from core.plan.config import SHIPPED_CONFIGS
from core.plan.export import pack_config
from tests.app import driver
from ui.text import WORD_JOINER, code_span, plain

markdown_it = pytest.importorskip("markdown_it")  # comes with rich, which Streamlit depends on
MD = markdown_it.MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])

EVIL = "[x](http://evil) ![i](http://evil/i.png) <b>bold</b> **loud** www.evil.org me@evil.org $x$"
NAME = EVIL[:80]  # the planner keeps 80 characters of a config's name
EVIL_40 = "[x](http://evil) ![i](http://evil/i)<b>"  # for the glossary's 40-character search box
MARKDOWN_KINDS = (
    "markdown",
    "caption",
    "info",
    "error",
    "warning",
    "success",
    "subheader",
    "header",
    "title",
)


GFM_BARE_URL = re.compile(r"(https?:\/\/|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.I)
# ":red", ":blue[…]": a Streamlit directive when the colon follows a blank or a mark (not "key:value")
STREAMLIT_DIRECTIVE = re.compile(r"(?<![\w:\\]):[^\W\d_]")
GFM_BARE_EMAIL = re.compile(r"(?<![^\s\W])([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")


def text_of(body: str) -> str:
    """What a reader reads: the rendered markdown without its tags (and without the invisible word
    joiners that keep a bare URL from becoming a link)."""
    return html.unescape(re.sub(r"<[^>]+>", "", MD.render(body))).replace(WORD_JOINER, "").strip()


def markdown_bodies(at: AppTest) -> list[str]:
    """Every text Streamlit renders as markdown: the text elements, metric labels and the cells of
    static tables (`st.table` renders each cell as markdown)."""
    bodies = [element.value for kind in MARKDOWN_KINDS for element in at.get(kind)]
    cells = [str(cell) for table in at.table for cell in table.value.to_numpy().ravel()]
    return bodies + [metric.label for metric in at.metric] + cells


def assert_no_reader_markup(at: AppTest, where: str) -> None:
    """No markdown body on the page links to, shows an image from, or lets HTML in from the reader."""
    for body in markdown_bodies(at):
        rendered = MD.render(body)
        tags = re.findall(r"<(?:a|img)\b[^>]*>", rendered)
        assert not [t for t in tags if "evil" in t], f"{where}: a link or image from reader text: {body!r}"
        assert "<b>" not in rendered, f"{where}: raw HTML from reader text: {body!r}"
        bare = [m[0] for pattern in (GFM_BARE_URL, GFM_BARE_EMAIL) for m in pattern.finditer(body)]
        assert not [b for b in bare if "evil" in b], f"{where}: a bare URL to autolink: {body!r}"


def shown(at: AppTest, kind: str) -> list[str]:
    return [text_of(element.value) for element in at.get(kind)]


# -- the helpers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        EVIL,
        "# heading",
        "- item",
        "1. item",
        "a | b",
        "&lt; &amp;",
        "\\`*_{}",
        ":red[x] :material/home:",
        "a\nb",
        "  - indented item",
        "unknown model_type 'x'; a_b _c_",
        "see https://evil.org, www.evil.org or me@evil.org",
        ":red[r] :blue x (:green) key:value a:1 ::y",
    ],
)
def test_plain_renders_as_exactly_the_text(text):
    rendered = MD.render(plain(text))
    assert rendered.startswith("<p>") and rendered.count("<p>") == 1  # one paragraph, no block syntax
    assert text_of(plain(text)) == text.replace("\n", " ").strip()
    assert not GFM_BARE_URL.search(plain(text)) and not GFM_BARE_EMAIL.search(plain(text))
    assert not STREAMLIT_DIRECTIVE.search(plain(text))
    assert not re.search(r"<(?:a|img|b|em|strong|code|h\d|li|table)\b", rendered)


@pytest.mark.parametrize("text", ["`", "a`b", "``", "x", "[x](http://evil)", "` `"])
def test_code_span_holds_any_text(text):
    rendered = MD.render(f"**{code_span(text)}**")
    code = re.search(r"<code>(.*)</code>", rendered).group(1)
    assert html.unescape(code) == text


# -- the pages -----------------------------------------------------------------------------------


def test_glossary_search_shows_the_readers_words_as_typed():
    at = driver.fresh("glossary")
    at.text_input(key="gl_find").input(EVIL_40).run()
    driver.assert_clean(at, "a hostile search")
    assert_no_reader_markup(at, "glossary")
    assert any(EVIL_40 in text for text in shown(at, "info"))


def test_recall_list_error_quotes_the_reader_as_typed():
    at = driver.fresh("collisions")
    assert "co_tr_text" in {t.key for t in at.text_input}, (
        "the trained recall panel is missing (assets/recall)"
    )
    at.text_input(key="co_tr_text").input(f"{EVIL} ? a").run()  # the '?' gets it past the first check
    driver.assert_clean(at, "a hostile recall list")
    assert_no_reader_markup(at, "collisions")
    assert any("'[x](http' is not a key" in text for text in shown(at, "error"))  # quoted as typed


def _config(**changes) -> str:
    data = json.loads((SHIPPED_CONFIGS / "llama3_1_8b.json").read_text())
    return json.dumps({**data, **changes})


def test_planner_shows_a_pasted_configs_name_and_errors_as_typed():
    at = AppTest.from_file(driver.page_path("planner"), default_timeout=120)
    at.query_params["depth"] = "engineer"  # the subheader and "Every figure" are Engineer-only (issue 40)
    at.run()
    at.radio(key="plan_source").set_value("Paste config.json").run()
    at.text_area(key="plan_paste").input(_config(_name_or_path=EVIL)).run()
    driver.assert_clean(at, "a hostile config name")
    assert_no_reader_markup(at, "planner, name")
    assert any(text.startswith(NAME + " · ") for text in shown(at, "subheader"))
    figures = next(t.value for t in at.table if "quantity" in t.value.columns)
    assert text_of(figures["value"].iloc[0]) == NAME  # the model row of "Every figure", as typed

    at.text_area(key="plan_paste").input(_config(model_type=EVIL[:50])).run()
    driver.assert_clean(at, "a hostile model_type")
    assert_no_reader_markup(at, "planner, error")
    assert any(EVIL[:50] in text for text in shown(at, "error"))


def test_planner_shows_a_shared_links_config_name_as_text():
    at = AppTest.from_file(driver.page_path("planner"), default_timeout=120)
    at.query_params["depth"] = "engineer"  # the subheader is Engineer-only (issue 40)
    at.query_params["configz"] = pack_config(_config(_name_or_path=EVIL))
    at.run()
    driver.assert_clean(at, "a link with a hostile config")
    assert_no_reader_markup(at, "planner from a link")
    assert any(text.startswith(NAME + " · ") for text in shown(at, "subheader"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "slug, key", [("gpt2", "gpt2_prompt"), ("kimi_k3", "k3_prompt"), ("experts", "ex_prompt")]
)
def test_a_prompt_never_becomes_markup(slug, key):
    at = driver.fresh(slug)
    at.text_input(key=key).input(EVIL + " `tick`").run()
    driver.assert_clean(at, f"a hostile prompt on {slug}")
    assert_no_reader_markup(at, slug)
    for button in [b for b in at.button if b.key and b.key.endswith("_step")]:
        for _ in range(3):  # early bytes: '[', 'x', ']' shown one at a time
            at.button(key=button.key).click().run()
        assert_no_reader_markup(at, f"{slug} after stepping")
