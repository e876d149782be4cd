"""Every lesson's own link works on a freshly started server: the lesson, and no "Page not found" dialog.

Streamlit learns an `st.navigation` app's pages only when `app.py` first runs. If the page files
sat in a folder named `pages/`, it would first take them for an old-style page folder and tell
the very first reader of a deep link that the page does not exist (a dialog over the lesson).
The lessons live in `lessons/` for that reason; this test keeps it so, for every lesson of the
outline: each link is the first page its own fresh server ever serves.

A fresh server per link costs a Streamlit start plus the app's first run, so the servers start
(and stop) in the background and a few links load side by side. A link is checked once its lesson's
heading is on the screen: the page list that would raise the dialog arrives before the lesson is
drawn, so waiting for the rest of the page would prove nothing more (tests/browser/
test_pages_in_chromium.py renders every page in full).
"""

from __future__ import annotations

import contextlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest

from tests.browser.conftest import link, streamlit_server
from ui.course import COURSE, Lesson, available

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LESSONS = available()
AT_ONCE = 4  # links loading at the same time (a first run is CPU-bound, and CI has 2 cores)
STARTING = 3  # servers starting (or stopping) at the same time, ahead of the links that need them
HEADING_MS = 120_000  # a loaded 2-core machine can take this long for a first run
SETTLE_MS = 700  # a dialog is drawn a moment after the page list arrives


@dataclass
class FirstVisit:
    heading: str = ""
    path: str = ""
    dialogs: list[str] = field(default_factory=list)
    failure: str | None = None  # the server did not start, or the page did not finish


def _look(page, item: Lesson) -> FirstVisit:
    """Wait for the lesson's heading on a connected page, then record what covers it."""
    failure = None
    try:
        page.locator("h1", has_text=item.title).first.wait_for(timeout=HEADING_MS)
        page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']")
        page.wait_for_timeout(SETTLE_MS)
    except Exception as error:  # noqa: BLE001 — a timeout is reported with what was on the screen
        failure = f"no heading {item.title!r} within {HEADING_MS / 1000:.0f} s ({type(error).__name__})"
    headings, dialogs = page.locator("h1"), page.locator("[role='dialog']")
    return FirstVisit(
        heading=headings.first.inner_text() if headings.count() else "",
        path=urlparse(page.url).path,
        dialogs=[dialogs.nth(i).inner_text() for i in range(dialogs.count())],
        failure=failure,
    )


def _start(item: Lesson) -> tuple[contextlib.ExitStack, str]:
    stack = contextlib.ExitStack()
    try:
        url = stack.enter_context(streamlit_server(f"streamlit-deep-link-{item.slug}.log"))
    except BaseException:
        stack.close()
        raise
    return stack, url


@pytest.fixture(scope="module")
def first_visits(browser) -> dict[str, FirstVisit]:
    """Open each lesson's link as the first request of its own fresh server; what the reader saw."""
    visits: dict[str, FirstVisit] = {}
    with contextlib.ExitStack() as cleanup, ThreadPoolExecutor(STARTING) as pool:
        starting = deque((item, pool.submit(_start, item)) for item in LESSONS)
        # a server that started but was never visited (an error below) still stops
        cleanup.callback(
            lambda: [f.result()[0].close() for _, f in starting if f.done() and not f.exception()]
        )
        loading: deque = deque()
        while starting or loading:
            while starting and len(loading) < AT_ONCE:
                item, future = starting.popleft()
                try:
                    stack, url = future.result()
                except BaseException as error:  # noqa: BLE001 — recorded and reported by the test
                    visits[item.slug] = FirstVisit(failure=f"server did not start: {error!r}")
                    continue
                # the server stops even if something below fails (a second close does nothing)
                cleanup.push(stack)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                stack.callback(context.close)
                page = context.new_page()
                try:
                    page.goto(url + link(item))
                except Exception as error:  # noqa: BLE001
                    visits[item.slug] = FirstVisit(failure=repr(error))
                    stack.close()
                    continue
                loading.append((item, page, stack))
            item, page, stack = loading.popleft()
            try:
                visits[item.slug] = _look(page, item)
            except Exception as error:  # noqa: BLE001
                visits[item.slug] = FirstVisit(failure=repr(error))
            page.context.close()
            pool.submit(stack.close)  # the server stops in the background while the next link loads
    return visits


def test_every_lesson_of_the_outline_is_checked():
    assert {item.slug for item in LESSONS} == {item.slug for item in COURSE.lessons if item.exists}
    assert len(LESSONS) > 4, "the deep-link check covers every lesson, not a sample"


@pytest.mark.parametrize("item", LESSONS, ids=lambda item: item.slug)
def test_deep_link_on_a_fresh_server_shows_the_lesson(first_visits, item):
    visit = first_visits[item.slug]
    assert visit.failure is None, f"{item.slug}: {visit.failure}"
    assert not visit.dialogs, f"{item.slug}: a dialog covers the lesson: {visit.dialogs}"
    assert item.title in visit.heading, f"{item.slug}: the page shows {visit.heading!r}"
    assert visit.path == link(item), f"{item.slug}: the address moved to {visit.path}"
