"""The course outline: lessons are named by slug and numbered by position, so inserting one renumbers
every later lesson — headers, links, the map and the prose — without touching a page."""

from __future__ import annotations

import ast
import re

import pytest

import ui.course as course
from tests.app import driver
from ui.course import COURSE, LESSONS, OUTLINE, Course, Lesson, lesson_ref, lesson_span

NEW = Lesson(
    "sliding_window",
    "lessons/sliding_window.py",  # no such file: the lesson is planned, not written
    "Sliding window",
    "Keep only the last few thousand tokens.",
    "Remembering everything",
    ":material/crop:",
)
# every place a slug is written as a call's first argument, or as any argument of lesson_ref / lesson_span
FIRST_ARG = re.compile(
    r"\b(lesson_header|next_lesson|link_to|lesson_link|lesson|number|page_path)\(\s*[\"'](\w+)[\"']"
)
ALL_ARGS = re.compile(r"\b(?:lesson_ref|lesson_span)\(([^)]*)\)")
SOURCES = [
    driver.ROOT / "app.py",
    *sorted((driver.ROOT / "lessons").glob("*.py")),
    *sorted((driver.ROOT / "ui").glob("*.py")),
]


def inserted() -> Course:
    """Today's outline with NEW right after the KV cache (before the primer)."""
    at = [item.slug for item in OUTLINE].index("kv_cache") + 1
    return Course(OUTLINE[:at] + (NEW,) + OUTLINE[at:])


def slugs_used(text: str) -> set[str]:
    used = {m.group(2) for m in FIRST_ARG.finditer(text)}
    for m in ALL_ARGS.finditer(text):
        used |= set(re.findall(r"[\"'](\w+)[\"']", m.group(1)))
    return used


def test_numbers_are_positions_in_the_outline():
    assert [item.number for item in LESSONS] == list(range(len(LESSONS)))
    assert [item.slug for item in LESSONS] == [
        "map",
        "gpt2",
        "kv_cache",
        "primer",
        "linear_attention",
        "collisions",
        "deltanet",
        "chunks",
        "forgetting",
        "kimi_k3",
        "experts",
        "real_hybrid",
        "your_gpu",
        "planner",
        "what_changed",
        "glossary",
    ]
    assert COURSE.start.slug == "map"
    assert course.lesson("forgetting").label == "8 · Forgetting"
    assert course.number("what_changed") == [item.slug for item in LESSONS].index("what_changed")
    assert course.number("glossary") == len(LESSONS) - 1  # the glossary closes the course


def test_every_page_file_is_in_the_outline_and_exists():
    files = {item.file for item in LESSONS}
    assert files == {f"lessons/{p.name}" for p in (driver.ROOT / "lessons").glob("*.py")}
    assert course.available() == list(LESSONS)


def test_prose_names_lessons_by_slug():
    assert lesson_ref("kv_cache") == "lesson 2"
    assert lesson_ref("deltanet", "forgetting") == "lessons 6 and 8"
    assert lesson_ref("gpt2", "kv_cache", "collisions") == "lessons 1, 2 and 5"
    assert lesson_span("kv_cache", "experts") == "lessons 2–10"
    with pytest.raises(ValueError, match="no lesson 'kv-cache'"):
        lesson_ref("kv-cache")
    with pytest.raises(ValueError):
        lesson_ref()
    with pytest.raises(ValueError):
        lesson_span("experts", "kv_cache")


def test_next_and_previous():
    assert course.next_available("map").slug == "gpt2"
    assert course.next_available("experts").slug == "real_hybrid"
    assert course.next_available("real_hybrid").slug == "your_gpu"
    assert course.next_available(LESSONS[-1].slug) is None
    assert course.previous_available("gpt2").slug == "map"
    assert course.previous_available("map") is None


def test_inserting_a_lesson_renumbers_everything_after_it():
    c = inserted()
    for item in LESSONS[:3]:
        assert c.number(item.slug) == item.number  # before the insertion: unchanged
    assert c.number("sliding_window") == 3
    for item in LESSONS[3:]:
        assert c.number(item.slug) == item.number + 1
        assert c.lesson(item.slug).file == item.file  # page files keep their names
    assert c.lesson("linear_attention").label == "5 · Linear attention"
    assert c.ref("collisions") == "lesson 6"
    assert c.ref("kv_cache") == "lesson 2"
    assert c.span("kv_cache", "experts") == "lessons 2–11"
    # a planned lesson without a page is numbered but never linked: next / previous step over it
    assert "sliding_window" not in [item.slug for item in c.available()]
    assert c.next_available("kv_cache").slug == "primer"
    assert c.next_available("sliding_window").slug == "primer"
    assert c.previous_available("primer").slug == "kv_cache"
    assert c.next_available("kv_cache").label == "4 · Vectors and matrices"
    assert c.sections == COURSE.sections


def test_an_outline_rejects_a_repeated_slug_or_file():
    with pytest.raises(ValueError, match="slug"):
        Course((*OUTLINE, OUTLINE[1]))
    with pytest.raises(ValueError, match="file"):
        Course((*OUTLINE, Lesson("again", OUTLINE[1].file, "t", "s", "x", ":material/map:")))


@pytest.fixture
def course_with_insert(monkeypatch):
    """Run pages against the outline with NEW inserted (every helper reads ui.course.COURSE)."""
    monkeypatch.setattr(course, "COURSE", inserted())


def test_a_page_follows_an_inserted_lesson(course_with_insert):
    at = driver.fresh("deltanet")
    assert at.title[0].value == "7 · DeltaNet"
    assert any(h.value == "2 · The stream of lesson 6, both rules" for h in at.header)
    assert any("Next: 8 · Chunks" in m.value for m in at.markdown)


def test_the_map_follows_an_inserted_lesson(course_with_insert):
    at = driver.fresh("map")
    assert list(at.table[0].value["lesson"]) == [1, 2, *range(5, 12)]  # the story's stages (not the primer)
    (go_to,) = [e for e in at.expander if e.label == "Go to a lesson"]
    links = [m.value for m in go_to.markdown]  # outside the router a link is plain text
    assert "- 5 · Linear attention" in links
    assert links[-1].startswith(f"- {len(LESSONS)} · ")  # the last lesson moved up by one too
    assert any("Next: 1 · GPT-2, plain" in m.value for m in at.markdown)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(driver.ROOT)))
def test_every_slug_written_in_the_code_exists(path):
    slugs = {item.slug for item in LESSONS}
    unknown = slugs_used(path.read_text()) - slugs
    assert not unknown, f"{path.name} names lessons that are not in the course: {unknown}"


@pytest.mark.parametrize("item", LESSONS, ids=lambda item: item.slug)
def test_each_page_heads_and_ends_with_its_own_slug(item):
    text = (driver.ROOT / item.file).read_text()
    assert re.findall(r"\blesson_header\(\s*[\"'](\w+)[\"']", text) == [item.slug]
    assert re.findall(r"\bnext_lesson\(\s*[\"'](\w+)[\"']", text) == [item.slug]


def shown_strings(source: str) -> list[tuple[int, str]]:
    """Every string literal (f-string parts included) that is not a docstring: what a reader can see."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(driver.ROOT)))
def test_no_hand_written_lesson_numbers(path):
    """Prose says lesson_ref("collisions"), never "lesson 4": a number by hand goes stale on insertion."""
    found = [
        f"{n}: {text!r}"
        for n, text in shown_strings(path.read_text())
        if re.search(r"\b[Ll]essons? \d", text)
    ]
    assert not found, f"{path.name} writes lesson numbers by hand:\n" + "\n".join(found)


def test_every_lesson_opens_with_its_point_in_at_most_two_sentences():
    """'In one sentence' (Lesson.takeaway): every lesson has one, plain and short, and a lesson shows it
    right under its title, before anything else the page draws."""
    for item in LESSONS:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", item.takeaway.strip()) if s]
        assert 1 <= len(sentences) <= 2, f"{item.slug}: {len(sentences)} sentences in its takeaway"
        assert "$" not in item.takeaway and "\\" not in item.takeaway, (
            f"{item.slug}: a formula in its takeaway"
        )
    for slug in ("gpt2", "primer", "forgetting", "planner"):
        at = driver.fresh(slug)
        first_text = [m.value for m in at.main.markdown if m.value.strip()][0]
        assert first_text.startswith("**:material/lightbulb: In one sentence.**"), (slug, first_text[:80])
        assert course.lesson(slug).takeaway in first_text
