"""A real Streamlit server and Debian's Chromium, driven by Playwright.

`playwright install` cannot download browsers here, so we launch the system
Chromium (`apt-get install chromium`). Without it these tests skip loudly.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest

from bench.load.protocol import step_status
from bench.load.server import CHROMIUM_FLAGS, chromium_path, course_server
from ui.course import COURSE, Lesson, available

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"


@contextlib.contextmanager
def streamlit_server(log_name: str = "streamlit-browser-test.log"):
    """A fresh Streamlit server for the course on a free loopback port; yields its URL, stops it after."""
    with course_server(ROOT / "artifacts" / log_name) as (url, _pid):
        yield url


@contextlib.contextmanager
def checkpoint_server(root: Path, folder_name: str, log_name: str):
    """A fresh course server that finds only a tiny random GPT-2 in Hugging Face format, built in
    `root` and offered through COURSE_GPT2_PATH, with the Hub off, an empty HF cache and public mode
    off; yields its URL. Needs transformers (a dev dependency) to build the checkpoint."""
    pytest.importorskip("transformers")
    from bench.hf_tiny_gpt2 import make_checkpoint

    folder = make_checkpoint(root / folder_name, n_positions=128)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("COURSE_GPT2_PATH", str(folder))
        env.setenv("HF_HUB_OFFLINE", "1")
        env.setenv("HF_HOME", str(root / "hf-home"))
        env.delenv("HF_HUB_CACHE", raising=False)
        env.delenv("COURSE_PUBLIC", raising=False)
        with streamlit_server(log_name) as url:
            yield url


@dataclass
class FirstVisit:
    """What a reader saw on a page once its lesson's heading was drawn."""

    heading: str = ""
    path: str = ""
    dialogs: list[str] = field(default_factory=list)
    failure: str | None = None  # the server did not answer, or the page did not finish


HEADING_MS = 120_000  # a loaded 2-core machine can take this long for a first run
SETTLE_MS = 700  # a dialog is drawn a moment after the page list arrives


def first_visit(browser, url: str, item: Lesson) -> FirstVisit:
    """Open the lesson's own link in a new browser (a new Streamlit session); once its heading is on
    the screen, record the heading, the address and any dialog over it."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        failure = None
        try:
            page.goto(url + link(item))
            page.locator("h1", has_text=item.title).first.wait_for(timeout=HEADING_MS)
            page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']")
            page.wait_for_timeout(SETTLE_MS)
        except Exception as error:  # noqa: BLE001 — a timeout is reported with what was on the screen
            failure = f"no heading {item.title!r} within {HEADING_MS / 1000:.0f} s ({error!r})"[:500]
        headings, dialogs = page.locator("h1"), page.locator("[role='dialog']")
        return FirstVisit(
            heading=headings.first.inner_text() if headings.count() else "",
            path=urlparse(page.url).path,
            dialogs=[dialogs.nth(i).inner_text() for i in range(dialogs.count())],
            failure=failure,
        )
    finally:
        context.close()


def first_link() -> Lesson:
    """The lesson whose own link is the first request the session's server ever serves: the first
    lesson after the map (the map is the router's default page, "/", not a deep link)."""
    return next(item for item in available() if item != COURSE.start)


@pytest.fixture(scope="session")
def course_server_first_visit(browser):
    """The session's course server, started fresh, and what its very first reader saw: before any test
    uses it, a lesson's own link is the first page it serves (test_deep_links.py checks that visit;
    every other lesson's link is the first page of its own session in test_pages_in_chromium.py)."""
    with streamlit_server() as url:
        yield url, first_visit(browser, url, first_link())


@pytest.fixture(scope="session")
def server_url(course_server_first_visit):
    return course_server_first_visit[0]


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


PHONE = {"width": 390, "height": 844}


@pytest.fixture()
def phone(browser):
    """A page in a phone's browser: 390 × 844, mobile, touch."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1)
    page = context.new_page()
    yield page
    context.close()


def wait_for_app(page, timeout_ms: int = 180_000) -> None:
    """Wait until Streamlit is connected, its script has finished, and nothing is still loading.

    A rerun can begin a moment after a click or a page load, so 'not running' must
    hold twice, a beat apart; skeletons are the placeholders of elements still coming.
    The charts (ui/live_chart.py) draw once plotly.js has loaded, and one off screen only when it
    comes near the screen: the page is told it is about to print (which draws every chart, as for
    a reader who prints the lesson), then each chart must hold its newest figure, drawn.
    """
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=timeout_ms)
    page.wait_for_selector(
        "[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=timeout_ms
    )
    for _ in range(2):
        page.wait_for_selector(
            "[data-testid='stApp'][data-test-script-state='notRunning']", timeout=timeout_ms
        )
        page.wait_for_timeout(700)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stSkeleton], [data-stale=true]')", timeout=timeout_ms
    )
    page.wait_for_function(EVERY_CHART_DRAWN, timeout=timeout_ms, polling=250)


# Each poll first does what a browser does before it prints (ui/live_chart.py's charts off screen are
# drawn then), so a chart whose figure arrives after an earlier poll is drawn too, not left waiting.
DRAW_EVERY_CHART = "() => window.dispatchEvent(new Event('beforeprint'))"
EVERY_CHART_DRAWN = """() => {
    window.dispatchEvent(new Event('beforeprint'));
    return [...document.querySelectorAll('[data-testid=stBidiComponentRegular]')]
        .every(chart => chart.querySelector('.course-chart[data-course-state=drawn] .main-svg'));
}"""


def step_position(page) -> int | None:
    """Where the page's Step controls stand, read from their status line: 'byte 3 of 53' → 3, and
    '… — Step replays from byte 1 of 53' (a page showing its whole run before the first Step) → 0;
    None on a page without Step controls."""
    lines = page.locator("[data-testid='stMain']").inner_text().splitlines()
    found = [shown for line in lines if (shown := step_status(line))]
    return found[0][0] if found else None


def link(item: Lesson) -> str:
    """The lesson's address on the server: its url_path; the map is the router's default page, "/"."""
    return "/" if item == COURSE.start else f"/{item.url_path}"


def open_lesson(page, server_url, item: Lesson) -> None:
    """The lesson by its own link (test_deep_links.py checks that this works on a fresh server, and
    test_pages_in_chromium.py that it is the lesson, with no dialog over it, as a session's first page)."""
    page.goto(server_url + link(item))
    wait_for_app(page)
    page.wait_for_selector("h1", timeout=60_000)


def click_when_ready(page, locator, attempts: int = 3) -> None:
    """Click once the app accepts input: right after a (re)load Streamlit can hold the page inert
    for a moment, so a click that times out waits for the app and tries again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(attempts):
        try:
            locator.click(timeout=20_000)
            break
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
            wait_for_app(page)
    wait_for_app(page)


def save_whole_page(page, path, width: int = 1400) -> None:
    """Screenshot the whole lesson `width` pixels wide: Streamlit scrolls inside its main pane, so grow
    the window to fit (at a phone's width, narrow it first: the page grows taller as it narrows)."""
    if width != page.viewport_size["width"]:
        page.set_viewport_size({"width": width, "height": 1000})
        page.wait_for_timeout(800)
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], section.main, "
        "[data-testid=stAppViewContainer]')].map(e => e.scrollHeight), 1000)"
    )
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 16000)})
    page.wait_for_timeout(800)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
