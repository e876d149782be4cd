"""Every lesson page runs under AppTest and survives a reader poking every widget."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from bench.load.protocol import step_status
from core.i18n import use_language
from tests.app import driver
from tests.app.japanese import japanese, reads_japanese
from tests.app.japanese_walks import WALKS, Depth, walk
from ui.course import LESSONS, available, lesson

PAGES = [pytest.param(item.file, id=item.slug) for item in available()]
# What a curious reader finds on each page at Story depth, in the order test_page_survives_a_curious_reader pokes:
# (text inputs, selectboxes, sliders + select_sliders, Step buttons). A renamed or lost widget key
# changes a count, so the sweep cannot pass by finding nothing to poke.
WIDGETS = {
    "map": (0, 0, 1, 0),
    "gpt2": (1, 0, 3, 1),
    "kv_cache": (1, 2, 3, 1),
    "primer": (0, 3, 7, 0),
    "linear_attention": (0, 0, 3, 1),
    "collisions": (1, 1, 3, 0),
    "deltanet": (0, 0, 3, 1),
    "chunks": (0, 2, 6, 0),
    "forgetting": (0, 0, 5, 1),
    "kimi_k3": (1, 0, 0, 1),
    "experts": (1, 0, 1, 1),
    "real_hybrid": (1, 2, 0, 1),  # the shipped miniature: no Qwen3.5 weights needed
    "your_gpu": (
        0,
        0,
        0,
        0,
    ),  # Story: the one button; its pickers are Engineer's (tests/app/test_your_gpu.py)
    "planner": (0, 6, 2, 0),
    "what_changed": (0, 1, 1, 0),
    "glossary": (1, 0, 0, 0),
}


def test_router_lists_exactly_the_existing_lessons():
    at = AppTest.from_file(str(driver.ROOT / "app.py"), default_timeout=120)
    at.run()
    driver.assert_clean(at, "router start")
    assert available(), "no lesson pages exist"
    assert all(item.exists == (item in available()) for item in LESSONS)


@pytest.mark.parametrize("path", PAGES)
def test_router_opens_page(path):
    at = AppTest.from_file(str(driver.ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(path).run()
    driver.assert_clean(at, f"switching to {path}")
    assert at.title, f"{path} shows no title"


def test_every_page_has_its_widget_counts():
    assert set(WIDGETS) == {item.slug for item in available()}


# Where Engineer depth has more widgets than Story (ui/depth.py), the reader pokes those at Engineer depth too.
ENGINEER_WIDGETS = {
    "kv_cache": (1, 5, 4, 1),  # the card calculator and the attention picture's pickers
    "your_gpu": (0, 1, 1, 0),  # the benchmark's sizes (both pickers: tests/app/test_your_gpu.py)
}
READERS = [(item.slug, "story") for item in available()] + [(slug, "engineer") for slug in ENGINEER_WIDGETS]


@pytest.mark.slow
@pytest.mark.parametrize(("slug", "depth"), READERS)
def test_page_survives_a_curious_reader(slug, depth):
    """Every widget poked, then 20 Steps: no exception, and the Step controls stand 20 steps on
    (or at the end of the run, where they stop)."""
    texts, selectboxes, sliders, steps = (ENGINEER_WIDGETS if depth == "engineer" else WIDGETS)[slug]
    at = AppTest.from_file(driver.page_path(slug), default_timeout=120)
    at.query_params["depth"] = depth
    at.run()
    driver.assert_clean(at, f"first run of {slug} at {depth} depth")
    assert driver.type_text(at) == texts
    assert driver.try_selectboxes(at) == selectboxes
    assert driver.sweep_sliders(at) == sliders
    before = step_status(driver.step_status(at)) if steps else None
    assert driver.click_steps(at, times=20) == steps
    if before:
        (start, total), (shown, after_total) = before, step_status(driver.step_status(at))
        assert (shown, after_total) == (min(start + 20, total), total), (
            f"{slug}: 20 Steps from {start} of {total}"
        )


def test_pages_draw_data_tables_through_one_helper():
    """Wide tables pin their first column (ui.charts.data_table); a page calling st.dataframe itself would not."""
    sources = [*driver.ROOT.glob("lessons/*.py"), *driver.ROOT.glob("ui/**/*.py")]
    callers = [p.relative_to(driver.ROOT).as_posix() for p in sources if "st.dataframe(" in p.read_text()]
    assert callers == ["ui/charts.py"]


def test_every_page_has_a_japanese_walk():
    assert {w.page for w in WALKS.values()} == {item.slug for item in available()}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(WALKS))
def test_page_reads_in_japanese_through_its_widgets(name, monkeypatch, tmp_path):
    """The Japanese reader's walk (tests/app/japanese_walks.py): the page as `?lang=ja` opens it, its title the
    outline's, then Story's moves, then everything at Engineer depth; every state reached reads Japanese
    (no English sentence or table word, the term table's typography), with no exception."""
    row = WALKS[name]
    clean_up = row.setup(monkeypatch, tmp_path) if row.setup else None
    try:
        with use_language("ja"):  # the widgets' format functions run in the test's thread too
            at = AppTest.from_file(driver.page_path(row.page), default_timeout=300)
            at.query_params["lang"] = "ja"
            at.query_params["depth"] = row.opens
            at.run()
            assert at.title and at.title[0].value == lesson(row.page).label
            reads_japanese(at, f"{name}, first run at {row.opens} depth")
            walk(at, row.story)
            if row.opens == "story":
                walk(at, [Depth("engineer")])
            walk(at, row.moves)
    finally:
        if clean_up:
            clean_up()


def test_the_router_and_its_sidebar_read_in_japanese():
    at = japanese("app.py")
    reads_japanese(at, "the router's first page and its sidebar")
