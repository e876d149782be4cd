"""The primer, linear attention and DeltaNet in Japanese: the charts' titles, axes and panel titles are
Japanese. The walks through their widgets are table rows (tests/app/japanese_walks.py, run by
tests/app/test_pages.py); `japanese_engineer` opens a page at Engineer depth for the other Japanese tests."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.driver import assert_clean, chart_spec, page_path, shown_title
from tests.app.japanese import japanese, japanese_words, no_english

pytestmark = pytest.mark.slow


def japanese_engineer(slug: str, timeout: float = 300) -> AppTest:
    """A page opened in Japanese at Engineer depth (`?lang=ja&depth=engineer`): everything Story shows and
    the rest — code, the full captions — so a walk through its widgets reaches every string. The Story
    page is checked on its own first (`japanese(slug)`)."""
    no_english(japanese(slug, timeout=timeout), f"{slug} at Story depth")
    at = AppTest.from_file(page_path(slug), default_timeout=timeout)
    at.query_params["lang"] = "ja"
    at.query_params["depth"] = "engineer"
    at.run()
    assert_clean(at, f"first run of {slug} in Japanese at Engineer depth")
    return at


def test_board_charts_speak_japanese():
    at = japanese_engineer("linear_attention")
    memory = chart_spec(at, "la_memory")
    assert japanese_words(shown_title(at, memory))
    assert japanese_words(memory["layout"]["xaxis"]["title"]["text"])
    assert japanese_words(memory["layout"]["yaxis"]["title"]["text"])
    assert all(japanese_words(trace["name"]) for trace in memory["data"])
    at = japanese_engineer("deltanet")
    parts = chart_spec(at, "dn_parts")
    panel_titles = [a["text"] for a in parts["layout"]["annotations"]]
    assert len(panel_titles) == 4 and all(japanese_words(t) for t in panel_titles)
    assert japanese_words(parts["layout"]["yaxis"]["title"]["text"])
    curves = chart_spec(at, "dn_curves")
    assert japanese_words(shown_title(at, curves))
    at = japanese_engineer("primer")
    dot = chart_spec(at, "pr_dot")
    assert japanese_words(shown_title(at, dot))
    assert japanese_words(dot["layout"]["xaxis"]["title"]["text"])
