"""No word before its explanation, read off the screen: every page is rendered under AppTest in course
order, and each glossary term found in what the reader sees (text, widget labels and help, chart
titles, axes and legends) must be explained in that page's "new words" box or an earlier page's.

`tests/app/test_glossary.py` checks the same rule on the pages' source strings; this test also sees
text a page builds at run time (numbers, names from specs, the outline's "In one sentence") and the
ui helpers' words, wherever they come from. And every glossary entry's "more in lesson N" points at
the lesson whose box first explains the term."""

from __future__ import annotations

import re

import pytest

from core.glossary import BY_KEY, TERMS
from tests.app import driver
from tests.app.driver import layout_words
from tests.app.test_glossary import WALKED, page
from ui import live_chart
from ui.course import LESSONS

WORD_BOXES = ("New words in this lesson", "Words you will meet")  # ui.glossary.new_words titles
ENGINEERS = ":material/engineering:"  # the icon of the collapsed depth a beginner never has to open


def _for_engineers(expander) -> bool:
    """A collapsed "go deeper" section (ui/deeper.py and the pages' "for engineers" expanders): its
    words are for the engineer who opens it, so it may use terms the course has not explained."""
    return expander.proto.icon == ENGINEERS


def chart_words(spec: dict) -> list[str]:
    """The words a plotly chart draws: its title, axis titles, legend names, annotations, tick labels."""
    words = layout_words(spec)
    for trace in spec.get("data", ()):
        if trace.get("showlegend", True) is not False:
            words.append(str(trace.get("name", "") or ""))
    return [w for w in words if w]


def shown_text(node) -> list[str]:
    """What the reader sees in `node` (an AppTest block or element), in page order; the new-words box
        is left out (its sentences use other terms by design), and so are the engineers' sections, code
    and formulas."""
    children = getattr(node, "children", None)
    if children is not None:
        label = getattr(node, "label", "") or ""
        if node.type == "expander" and (label.startswith(WORD_BOXES) or _for_engineers(node)):
            return []
        texts = [label] if label else []
        for key in sorted(children):
            texts += shown_text(children[key])
        return texts
    kind = getattr(node, "type", "")
    if kind in {"code", "latex", "exception"}:
        return []
    if driver.is_chart(node):
        return chart_words(live_chart.figure_of(node.proto))
    return driver.element_strings(node, ("value", "label", "help", "body", "placeholder"))


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    """Each walked page's shown text (main area), rendered once."""
    return {
        item.slug: _without_lesson_names("\n".join(shown_text(driver.fresh(item.slug).main)))
        for item in WALKED
    }


def _without_lesson_names(text: str) -> str:
    """The text without lesson names in links and lists ("5 · Collisions" names a page, it does not
    use the word)."""
    return re.sub("|".join(re.escape(item.label) for item in LESSONS), "", text)


@pytest.mark.slow
def test_no_term_is_shown_before_a_box_explains_it(rendered):
    defined: dict[str, str] = {}
    problems = []
    for item in WALKED:
        _, _, here, _ = page(item.slug)
        for key in here:
            defined.setdefault(key, item.slug)
        for term in TERMS:
            if term.key not in defined and term.used_in(rendered[item.slug]):
                problems.append(f"{item.slug}: shows {term.key!r} ({term.name}) before any box explains it")
    assert not problems, "\n".join(problems)


def test_glossary_pointers_name_where_a_term_is_first_explained():
    """A term's first lesson is the first page, in course order, whose new-words box explains it, and
    the lesson it points to for more is that page or a later one that shows the term (terms no page's
    box names keep the lesson that teaches them)."""
    first: dict[str, str] = {}
    for item in WALKED[1:]:  # the map's box names words the later lessons explain
        for key in page(item.slug)[2]:
            first.setdefault(key, item.slug)
    order = {item.slug: item.number for item in LESSONS}
    wrong = []
    for key, slug in sorted(first.items(), key=lambda kv: order[kv[1]]):
        term = BY_KEY[key]
        if term.first_lesson != slug:
            wrong.append(f"{key}: first explained in {slug!r}, the glossary says {term.first_lesson!r}")
        if order[term.lesson] < order[slug]:
            wrong.append(f"{key}: 'more in' {term.lesson!r} comes before its first explanation in {slug!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_more_in_points_at_a_page_that_shows_the_term(rendered):
    """ "More in lesson N" sends the reader to a page that really uses the word."""
    missing = [
        f"{term.key}: 'more in' {term.lesson!r}, which never shows it"
        for term in TERMS
        if term.lesson in rendered and not term.used_in(rendered[term.lesson] + "\n" + page(term.lesson)[0])
    ]
    assert not missing, "\n".join(missing)
