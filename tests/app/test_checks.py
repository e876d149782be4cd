"""'Check yourself' and the reader's progress under AppTest (issue 45).

Every lesson's check on its own page, in English and Japanese: its questions are there, labelled, at the
lesson's end; wrong answers get "Not quite" and the why, right ones "Right", the why and the lesson marked
done. Numbers come from the code the pages draw with (a changed spec changes the answer). Progress follows
the reader across page changes (the sidebar's ✓, the map's box, the browser's copy), comes back from what
their browser reports, clears, and never reaches another reader. No JavaScript runs here: the browser's
side is tests/browser/test_progress_in_chromium.py.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest

from core.checks import (
    CHECKED,
    NOT_CHECKED,
    STORAGE_KEY,
    Choice,
    Number,
    boards,
    questions,
    read_stored,
    stored_form,
)
from core.i18n import use_language
from core.specs import SPECS
from tests.app import story
from tests.app.driver import assert_clean, whole_app
from ui import browser_progress, progress
from ui.checks import answer_key
from ui.course import LESSONS, lesson

LANGS = ("en", "ja")
# what a reader sees before the why, as the catalogs word it (checks.po)
RIGHT = {"en": "**Right.**", "ja": "**正解です。**"}
NOT_QUITE = {"en": "**Not quite.**", "ja": "**おしい。**"}
PASSED = {"en": "**Check passed.**", "ja": "**全問正解です。**"}
STILL_MISSING = {"en": "What is still missing", "ja": "まだ足りないもの"}


def _asked(slug: str, lang: str):
    with use_language(lang):
        return questions(slug)


def _wrong(question):
    if isinstance(question, Choice):
        return (question.answer + 1) % len(question.options)
    return question.answer + 10 * max(question.tolerance, question.step) + 1


def _answer(at: AppTest, slug: str, lang: str, right: bool) -> None:
    """Answer every question of lesson `slug`'s check, all right or all wrong, in one run."""
    for question in _asked(slug, lang):
        key = answer_key(slug, question)
        value = question.answer if right else _wrong(question)
        widget = at.radio(key=key) if isinstance(question, Choice) else at.number_input(key=key)
        widget.set_value(value)
    with use_language(lang):  # AppTest words the page's other options (format_func) in the test's language
        at.run()
    assert_clean(at, f"answering {slug}'s check ({'right' if right else 'wrong'})")


def _check_boxes(node) -> list:
    """The "Check yourself" boxes under `node`, in page order."""
    if story._is_check_box(node):
        return [node]
    children = getattr(node, "children", None) or {}
    return [box for key in sorted(children) for box in _check_boxes(children[key])]


def _flat(node) -> list:
    """`node` and everything under it, in page order."""
    children = getattr(node, "children", None) or {}
    return [node] + [n for key in sorted(children) for n in _flat(children[key])]


def _widgets(node) -> list:
    """The radios and number inputs under `node`, in page order."""
    if getattr(node, "type", "") in ("radio", "number_input"):
        return [node]
    children = getattr(node, "children", None) or {}
    return [widget for key in sorted(children) for widget in _widgets(children[key])]


def _done(at: AppTest) -> frozenset[str]:
    return frozenset(at.session_state[progress.DONE]) if progress.DONE in at.session_state else frozenset()


# ---- the question bank ----


def test_every_lesson_but_the_map_and_the_glossary_has_a_check_in_course_order():
    slugs = [item.slug for item in LESSONS]
    assert set(CHECKED) | set(NOT_CHECKED) == set(slugs)
    assert not set(CHECKED) & set(NOT_CHECKED)
    assert list(CHECKED) == [slug for slug in slugs if slug in CHECKED]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("slug", CHECKED)
def test_two_or_three_questions_each_with_its_why(slug, lang):
    asked = _asked(slug, lang)
    assert 2 <= len(asked) <= 3
    assert len({q.key for q in asked}) == len(asked)
    assert any(isinstance(q, Choice) for q in asked), f"{slug}: ask at least one why"
    for q in asked:
        assert q.ask.strip() and q.why.strip() and "{" not in q.ask + q.why
        if isinstance(q, Choice):
            assert len(set(q.options)) == len(q.options) >= 3
        assert q.is_right(q.answer) and not q.is_right(_wrong(q)) and not q.is_right(None)


def test_the_right_choice_is_not_always_in_the_same_place():
    places = {q.answer for slug in CHECKED for q in questions(slug) if isinstance(q, Choice)}
    assert places == {0, 1, 2}


def test_numbers_come_from_the_code_the_pages_draw_with(monkeypatch):
    k3 = SPECS["kimi_k3"]
    by_key = {q.key: q for q in questions("kimi_k3")}
    assert by_key["caches"].answer == k3.num_full_attention_layers
    assert {q.key: q for q in questions("collisions")}["capacity"].answer == boards.COLLISION_ROWS
    # a changed spec changes the answer: one head of half the size catches up with its board twice as soon
    before = {q.key: q for q in questions("linear_attention")}["cross"].answer
    smaller = dataclasses.replace(
        k3.linear, head_k_dim=k3.linear.head_k_dim // 2, head_v_dim=k3.linear.head_v_dim // 2
    )
    monkeypatch.setitem(SPECS, "kimi_k3", dataclasses.replace(k3, linear=smaller))
    assert {q.key: q for q in questions("linear_attention")}["cross"].answer == before // 2


def test_a_number_is_right_within_its_tolerance_and_a_choice_only_by_its_index():
    number = Number("n", "ask", answer=0.57, why="why", tolerance=0.005, step=0.01)
    assert (
        number.decimals == 2
        and number.is_right(0.57)
        and number.is_right(0.574)
        and not number.is_right(0.58)
    )
    assert not number.is_right("0.57") and not number.is_right(True)
    choice = Choice("c", "ask", ("a", "b", "c"), answer=1, why="why")
    assert choice.is_right(1) and not choice.is_right("b")


# ---- every lesson's check on its page, both languages ----


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("slug", CHECKED)
def test_each_lesson_ends_with_its_check_answered_wrong_then_right(slug, lang):
    at = story.rendered(slug, "story", lang)
    asked = _asked(slug, lang)
    boxes = _check_boxes(at.main)
    assert len(boxes) == 1, "one check box"
    labels = [w.label for w in _widgets(boxes[0])]
    assert labels == [f"**{n}.** {q.ask}" for n, q in enumerate(asked, start=1)]
    # at the lesson's end: after "what is still missing", before the link to the next lesson
    nodes = _flat(at.main)
    shown = [str(getattr(n, "value", "")) for n in nodes]
    box_at = nodes.index(boxes[0])
    assert any(STILL_MISSING[lang] in text for text in shown[:box_at])
    assert any(text.startswith("**→") for text in shown[box_at:])
    if lang == "ja":
        assert all(not label.isascii() for label in labels), labels

    _answer(at, slug, lang, right=False)
    warnings = [w.value for w in at.warning]
    for q in asked:
        assert f"{NOT_QUITE[lang]} {q.why}" in warnings
    assert slug not in _done(at)
    assert not any(s.value.startswith(PASSED[lang]) for s in at.success)

    _answer(at, slug, lang, right=True)
    successes = [s.value for s in at.success]
    for q in asked:
        assert f"{RIGHT[lang]} {q.why}" in successes
    assert any(s.startswith(PASSED[lang]) for s in successes)
    assert _done(at) == {slug}


def test_the_map_and_the_glossary_draw_no_check():
    for slug in NOT_CHECKED:
        at = story.rendered(slug, "story", "en")
        assert not _check_boxes(at.main)
        assert not [w for w in at.radio if w.key and w.key.startswith("check_")]


# ---- progress: across pages, from the browser, cleared, one reader's own ----


def _page(at: AppTest, slug: str) -> dict:
    """The sidebar's entry of lesson `slug` (title, icon, …), as the router built it this run."""
    path = str(story.page_path(slug))
    return next(page for page in at._registered_pages.values() if page["script_path"] == path)


def _title(at: AppTest, slug: str) -> str:
    return _page(at, slug)["page_name"]


def _store(at: AppTest) -> dict:
    """What the router handed the reader's browser to keep this run (ui/browser_progress.py)."""
    found = [e for e in at.get("bidi_component") if e.proto.component_name == browser_progress.STORE]
    assert len(found) == 1, "the browser's keeper is mounted once per run"
    return json.loads(found[0].proto.json)


def _browser_reports(at: AppTest, stored: object) -> None:
    """A run as after the keeper's script reported what the browser stored (its trigger "stored")."""
    keeper = next(e for e in at.get("bidi_component") if e.proto.component_name == browser_progress.STORE)
    states = WidgetStates()
    states.CopyFrom(at._tree.get_widget_states())
    report = states.widgets.add()
    report.id = _make_trigger_id(keeper.proto.id, "events")
    report.json_trigger_value = json.dumps([{"event": "stored", "value": stored}])
    at._run(states)
    assert_clean(at, "the browser's report")


def _map_links(at: AppTest) -> list[str]:
    return [e.proto.label for e in at.get("page_link")]


def test_progress_follows_the_reader_across_page_changes():
    at = whole_app()
    assert _store(at)["key"] == STORAGE_KEY and _store(at)["record"]["done"] == []
    at.switch_page(lesson("chunks").file).run()
    assert_clean(at, "open Chunks")
    _answer(at, "chunks", "en", right=True)
    assert _title(at, "chunks") == f"{lesson('chunks').label} ✓"
    assert _page(at, "chunks")["icon"] == progress.DONE_ICON
    assert _title(at, "deltanet") == lesson("deltanet").label
    assert _page(at, "deltanet")["icon"] == lesson("deltanet").icon
    assert _store(at)["record"] == stored_form({"chunks"})

    at.switch_page(lesson("map").file).run()
    assert_clean(at, "open the map")
    assert any(f"1 of {len(CHECKED)} lessons checked ✓" in m.value for m in at.markdown)
    assert lesson("chunks").label in [c.value for c in at.caption]
    assert any(label.startswith(f"{lesson('chunks').number} · ") and "✓" in label for label in _map_links(at))

    at.switch_page(lesson("deltanet").file).run()
    assert_clean(at, "open DeltaNet")
    assert _done(at) == {"chunks"} and _title(at, "chunks").endswith("✓")
    assert _store(at)["record"]["done"] == ["chunks"]


def test_a_lesson_stays_done_when_its_answers_are_changed_and_says_so():
    at = story.rendered("deltanet", "story", "en")
    _answer(at, "deltanet", "en", right=True)
    _answer(at, "deltanet", "en", right=False)
    assert _done(at) == {"deltanet"}
    assert any("You passed this check before" in c.value for c in at.caption)


def test_what_the_browser_stored_comes_back_and_unknown_lessons_are_ignored():
    at = whole_app()
    _browser_reports(at, {"version": 1, "done": ["gpt2", "collisions", "no_such_lesson", 7]})
    assert _done(at) == {"gpt2", "collisions"}
    assert _title(at, "gpt2").endswith("✓") and _title(at, "collisions").endswith("✓")
    assert _store(at)["record"]["done"] == ["collisions", "gpt2"]


def test_clearing_empties_the_progress_and_tells_the_browser():
    at = whole_app()
    _browser_reports(at, {"version": 1, "done": ["gpt2"]})
    at.button(key="course_progress_clear").click().run()
    assert_clean(at, "clear")
    assert _done(at) == frozenset()
    assert _store(at)["record"]["done"] == [] and _store(at)["clears"] == 1
    assert at.button(key="course_progress_clear").disabled
    assert any("none yet" in m.value for m in at.markdown)
    assert not _title(at, "gpt2").endswith("✓")


def test_two_readers_never_see_each_others_progress():
    first, second = whole_app(), whole_app()
    _browser_reports(first, {"version": 1, "done": ["primer"]})
    second.run()
    assert _done(first) == {"primer"} and _done(second) == frozenset()
    assert not _title(second, "primer").endswith("✓")
    assert _store(first)["session"] != _store(second)["session"]


def test_the_map_shows_progress_in_japanese():
    at = whole_app(lang="ja")
    _browser_reports(at, {"version": 1, "done": ["gpt2"]})
    assert any(f"{len(CHECKED)} レッスン中 1 レッスン完了 ✓" in m.value for m in at.markdown)
    assert at.button(key="course_progress_clear").label == "進み具合を消す"


@pytest.mark.parametrize(
    ("raw", "done"),
    [
        ('{"version": 1, "done": ["gpt2", "kv_cache"]}', {"gpt2", "kv_cache"}),
        (["primer", "map", "glossary"], {"primer"}),  # pages without a check are never done
        ("not json", set()),
        ({"done": "gpt2"}, set()),
        (None, set()),
    ],
)
def test_the_stored_record_is_read_defensively(raw, done):
    assert read_stored(raw, CHECKED) == done
