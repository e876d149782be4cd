"""Two depths of every page (issue 40): the switch and the link, and what each depth shows.

Story (the default) is held to the issue's rules, read off the rendered page (tests/app/story.py): at most
700 words of running text (Japanese: 3 characters a word), no paths, paper or pull-request ids or unexplained
tool names, and it still ends with what is missing and the next lesson. Engineer shows everything Story
shows, and more where the page has more to say.
"""

from __future__ import annotations

import functools
import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.app import story
from tests.app.driver import assert_clean, whole_app
from ui.course import LESSONS, next_available
from ui.depth import REPLACED

PAGES = [item.slug for item in LESSONS if item.slug != "glossary" and item.exists]
LANGS = ("en", "ja")


def _depth_in_link(at: AppTest) -> str | None:
    value = at.query_params.get("depth")
    if isinstance(value, list):
        value = value[0] if value else None
    return value


@functools.cache
def _page(slug: str, depth: str, lang: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The page's running text at `depth` in `lang`, and the Story passages it told through `in_depth`
    (replaced by a fuller one at Engineer depth), rendered once per test process."""
    at = story.rendered(slug, depth, lang)
    replaced = at.session_state[REPLACED] if REPLACED in at.session_state else set()
    return tuple(story.running_text(at.main)), frozenset(replaced)


def _texts(slug: str, depth: str, lang: str) -> tuple[str, ...]:
    return _page(slug, depth, lang)[0]


# ---- the switch and the link ----


def test_story_is_the_default_and_the_link_carries_no_depth():
    at = whole_app()
    assert at.button_group(key="depth_switch").value == "story"
    assert _depth_in_link(at) is None


def test_the_link_opens_engineer_and_the_switch_follows():
    at = whole_app(depth="engineer")
    assert at.button_group(key="depth_switch").value == "engineer"
    assert _depth_in_link(at) == "engineer"


@pytest.mark.parametrize("asked", ["story", "nonsense", ""])
def test_story_from_the_link_or_an_unknown_depth(asked):
    at = whole_app(depth=asked)
    assert at.button_group(key="depth_switch").value == "story"


def test_the_switch_writes_the_link_and_back():
    at = whole_app()
    at.button_group(key="depth_switch").set_value("engineer").run()
    assert_clean(at, "switch to Engineer")
    assert _depth_in_link(at) == "engineer"
    at.button_group(key="depth_switch").set_value("story").run()
    assert_clean(at, "switch back to Story")
    assert _depth_in_link(at) is None


def test_the_depth_survives_a_page_change():
    """A page change drops the query string; the reader's depth puts `?depth=engineer` back."""
    at = whole_app()
    at.button_group(key="depth_switch").set_value("engineer").run()
    at.query_params.pop("depth", None)  # what the router's page change does to the link
    at.switch_page("lessons/chunks.py").run()
    assert_clean(at, "page change at Engineer depth")
    assert _depth_in_link(at) == "engineer"
    assert any(":material/engineering:" in m.value for m in at.markdown), "no Engineer section on Chunks"


def test_two_readers_keep_their_own_depth():
    engineer = whole_app(depth="engineer")
    plain = whole_app()
    assert engineer.button_group(key="depth_switch").value == "engineer"
    assert plain.button_group(key="depth_switch").value == "story"


def test_the_switch_reads_in_japanese():
    at = whole_app(lang="ja")
    switch = at.button_group(key="depth_switch")
    assert switch.label == "読む深さ"
    assert list(switch.options) == ["ストーリー", "エンジニア"]


def test_code_is_shown_only_at_engineer_depth():
    story_at = story.rendered("linear_attention", "story", "en")
    engineer_at = story.rendered("linear_attention", "engineer", "en")
    toggles = lambda at: [t.label for t in at.toggle]  # noqa: E731
    assert "Show the code" not in toggles(story_at)
    assert "Show the code" in toggles(engineer_at)


# ---- what each depth shows, every page ----


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("slug", PAGES)
def test_story_is_short_and_plain(slug, lang):
    texts = list(_texts(slug, "story", lang))
    count = story.words(texts, lang)
    assert count <= story.STORY_LIMIT, f"{slug} ({lang}): {count} words of running text in Story"
    found = story.forbidden(texts)
    assert not found, f"{slug} ({lang}) Story shows:\n" + "\n".join(found[:20])


def _shape(text: str) -> str:
    """A text with its numbers blanked: a measured time differs between two runs of one page."""
    return re.sub(r"\d[\d,.]*", "#", text)


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("slug", PAGES)
def test_engineer_shows_everything_story_shows(slug, lang):
    texts, replaced = _page(slug, "story", lang)
    story_texts = [
        _shape(t) for t in texts if t not in replaced
    ]  # in_depth: Engineer tells it in full instead
    engineer_texts = [_shape(t) for t in _texts(slug, "engineer", lang)]
    missing = [t for t in story_texts if t not in engineer_texts]
    assert not missing, f"{slug} ({lang}): shown in Story, not in Engineer:\n" + "\n".join(missing[:10])
    assert story.words(list(_texts(slug, "engineer", lang)), lang) >= story.words(
        list(_texts(slug, "story", lang)), lang
    )


# passages each page tells at both depths through ui.depth.in_depth (at least): an engineer reads the full one
TWO_DEPTH_PASSAGES = {"primer": 10, "linear_attention": 6, "collisions": 5, "deltanet": 3}


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("slug", PAGES)
def test_engineer_reads_each_two_depth_passage_once(slug, lang):
    """A passage told at both depths shows its plain version in Story and its full version in its place at
    Engineer depth — never both, so an engineer does not read one idea twice."""
    texts, told = _page(slug, "story", lang)
    assert len(told) >= TWO_DEPTH_PASSAGES.get(slug, 0), sorted(told)
    assert told <= set(texts)
    both = told & set(_texts(slug, "engineer", lang))
    assert not both, sorted(both)


@pytest.mark.slow
@pytest.mark.parametrize("slug", [s for s in PAGES if s != "map"])
def test_story_still_ends_with_what_is_missing_and_the_next_lesson(slug):
    texts = _texts(slug, "story", "en")
    joined = "\n".join(texts)
    after = next_available(slug)
    if after is not None and after.slug != "glossary":
        assert "What is still missing" in joined, f"{slug}: no 'what is still missing' in Story"
        assert f"Next: {after.label}" in joined, f"{slug}: Story does not end with the next lesson"


def _one_passage():
    from ui.depth import in_depth

    in_depth("plain words", "the full passage, with its sources")


@pytest.mark.parametrize(
    ("depth", "shown"), [("story", "plain words"), ("engineer", "the full passage, with its sources")]
)
def test_a_passage_told_at_two_depths_shows_one_version(depth, shown):
    at = AppTest.from_function(_one_passage)
    at.query_params["depth"] = depth
    at.run()
    assert [m.value for m in at.markdown] == [shown]
    assert (REPLACED in at.session_state) is (depth == "story")
