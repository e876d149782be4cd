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


GPT2_CHECKPOINT = "tiny-random-gpt2"  # the folder checkpoint_server builds the tiny random GPT-2 in


@pytest.fixture(scope="session")
def gpt2_checkpoint_url(tmp_path_factory):
    """One server that offers the tiny random GPT-2 (checkpoint_server), shared by every test that reads
    it (test_gpt2_checkpoint.py, test_gpu_checkpoint_chromium.py): each test opens its own session, and
    the setting is the same, so a second fresh server would only cost another start."""
    with checkpoint_server(
        tmp_path_factory.mktemp("gpt2-checkpoint"), GPT2_CHECKPOINT, "streamlit-gpt2-checkpoint.log"
    ) as url:
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
    context = new_context(browser, viewport={"width": 1400, "height": 1000})
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
    context = new_context(browser, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


PHONE = {"width": 390, "height": 844}


@pytest.fixture()
def phone(browser):
    """A page in a phone's browser: 390 × 844, mobile, touch."""
    context = new_context(browser, viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1)
    page = context.new_page()
    yield page
    context.close()


QUIET_MS = 300  # no message and no change of the script's state this long: a run's last message is drawn
RUN_START_MS = 5_000  # the server has answered a click or key by then, or the action asked for no rerun

# Every message the server sends the page, counted as it arrives (added to each context before its pages load:
# new_context). A quick rerun can be drawn in one go, its running state never shown: its messages still count.
WATCH_WIRE = """(() => {
    const Native = window.WebSocket;
    const wire = window.__courseWire = {messages: 0, last: performance.now()};
    window.WebSocket = class extends Native {
        constructor(...args) {
            super(...args);
            this.addEventListener("message", () => { wire.messages += 1; wire.last = performance.now(); });
        }
    };
})();"""
# One watcher a page (installed on first use): counts the script runs that began, and when the script's state
# last changed, from Streamlit's own `data-test-script-state` on stApp. Returns what the page has heard: those
# runs and the server's messages. A click's rerun begins only when the server answers (the state stays
# notRunning until then), so a test waits for this to go up.
WATCH_RUNS = """() => {
    if (!window.__courseRuns) {
        const runs = window.__courseRuns = {started: 0, changed: performance.now()};
        const busy = (state) => state === "running" || state === "rerunRequested";
        new MutationObserver((records) => {
            for (const record of records) {
                const now = record.target.getAttribute("data-test-script-state");
                if (busy(now) && !busy(record.oldValue)) runs.started += 1;
                runs.changed = performance.now();
            }
        }).observe(document.documentElement, {
            subtree: true, attributes: true, attributeOldValue: true,
            attributeFilter: ["data-test-script-state"],
        });
    }
    return window.__courseRuns.started + (window.__courseWire?.messages ?? 0);
}"""
# The script is idle, nothing has come or changed for `quiet` ms, and no element is a placeholder or stale.
IDLE_AND_QUIET = f"""(quiet) => {{
    ({WATCH_RUNS})();  // a page that navigated since has a watcher again
    const app = document.querySelector("[data-testid=stApp]");
    const changed = Math.max(window.__courseRuns.changed, window.__courseWire?.last ?? 0);
    return app?.getAttribute("data-test-script-state") === "notRunning"
        && performance.now() - changed >= quiet
        && !document.querySelector("[data-testid=stSkeleton], [data-stale=true]");
}}"""


def new_context(browser, **options):
    """A browser context (Playwright's new_context options) whose pages count the server's messages
    (WATCH_WIRE), so that wait_for_app sees a quick rerun a click set off."""
    context = browser.new_context(**options)
    context.add_init_script(WATCH_WIRE)
    return context


def runs_started(page) -> int:
    """What the page has heard so far: script runs begun and, in a new_context page, the server's messages
    (the watcher is installed on first call). An action's rerun makes it go up."""
    return page.evaluate(WATCH_RUNS)


def wait_until_idle(page, timeout_ms: int = 180_000, after: int | None = None) -> None:
    """Connected, and the script idle for QUIET_MS; with `after` (runs_started before an action), first
    until a run after it has begun (RUN_START_MS at most: an action may set off none)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.wait_for_selector(
        "[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=timeout_ms
    )
    runs_started(page)
    if after is not None:
        try:
            page.wait_for_function(
                f"(n) => ({WATCH_RUNS})() > n", arg=after, timeout=RUN_START_MS, polling=50
            )
        except PlaywrightTimeout:
            pass  # the action set off no rerun: idle is idle
    page.wait_for_function(IDLE_AND_QUIET, arg=QUIET_MS, timeout=timeout_ms, polling=50)


def wait_for_app(page, timeout_ms: int = 180_000, after: int | None = None) -> None:
    """Wait until Streamlit is connected, its script has finished, and nothing is still loading.

    A click's rerun begins a moment after the click: pass `after` = runs_started(page) from before it (or
    use `rerun_of`), and the wait first sees that run begin. Whatever else a run sets off (a component's
    report) begins while the script is idle, so the script must stay idle QUIET_MS; skeletons are the
    placeholders of elements still coming.
    The charts (ui/live_chart.py) draw once plotly.js has loaded, and one off screen only when it
    comes near the screen: the page is told it is about to print (which draws every chart, as for
    a reader who prints the lesson), then each chart must hold its newest figure, drawn.
    """
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=timeout_ms)
    wait_until_idle(page, timeout_ms, after)
    page.wait_for_function(EVERY_CHART_DRAWN, timeout=timeout_ms, polling=250)


@contextlib.contextmanager
def rerun_of(page, timeout_ms: int = 180_000):
    """`with rerun_of(page): page.keyboard.press("Enter")`: wait for the rerun the action sets off (wait_for_app)."""
    before = runs_started(page)
    yield
    wait_for_app(page, timeout_ms, after=before)


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
    """Click once the app accepts input, and wait for the rerun the click sets off: right after a
    (re)load Streamlit can hold the page inert for a moment, so a click that times out waits for the
    app and tries again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(attempts):
        before = runs_started(page)
        try:
            locator.click(timeout=20_000)
            break
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
            wait_for_app(page)
    wait_for_app(page, after=before)


# Resolves once the page has stopped moving after a resize or scroll: web fonts loaded, and for `quiet` ms no
# CSS transition or animation running (the sidebar folding away at a phone's width), the sidebar, the page's size
# and the charts on the screen unchanged, each of those charts drawn at its column's width (live_chart.js
# redraws a chart a frame after its width changes, and plotly a further 100 ms later). Streamlit reads the
# window's size at most every 100 ms, hence `quiet`. `false` if still moving after `limit` ms: the caller
# carries on, as a fixed wait would have.
SETTLED_LAYOUT = """async ([limit, quiet]) => {
    await document.fonts.ready;
    const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
    const moving = () => document.getAnimations().some((motion) => motion.playState === "running"
        && motion.effect?.getComputedTiming().iterations !== Infinity);  // not a spinner
    const charts = () => [...document.querySelectorAll(".course-chart")].filter((plot) => {
        const box = plot.getBoundingClientRect();
        return box.width > 0 && box.bottom > 0 && box.top < window.innerHeight;
    });
    const drawn = (plot) => plot.dataset.courseState === "drawn" && !plot.courseResize
        && (Boolean(plot.layout?.width && plot.layout?.height)
            || Math.abs((plot._fullLayout?.width ?? -9) - parseFloat(getComputedStyle(plot).width)) <= 2);
    const shape = () => {
        const sidebar = document.querySelector("[data-testid=stSidebar]");
        const box = sidebar?.getBoundingClientRect();
        return JSON.stringify([
            [...document.querySelectorAll("[data-testid=stMain], [data-testid=stAppViewContainer]")]
                .map((e) => [e.scrollWidth, e.scrollHeight]),
            sidebar ? [box.x, box.width, sidebar.getAttribute("aria-expanded")] : null,
            charts().map((plot) => plot._fullLayout?.width ?? 0),
        ]);
    };
    const start = performance.now();
    let last = null, since = start;
    while (performance.now() - start < limit) {
        await frame();
        const now = shape();
        if (now !== last || moving() || !charts().every(drawn)) {
            last = now;
            since = performance.now();
        } else if (performance.now() - since >= quiet) {
            return true;
        }
    }
    return false;
}"""
SETTLE_LIMIT_MS = 10_000
SETTLE_QUIET_MS = 200


# Two frames drawn, then until no CSS transition or animation is running (a focus ring fading in).
STILL_FRAMES = """async (limit) => {
    const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
    const moving = () => document.getAnimations().some((motion) => motion.playState === "running"
        && motion.effect?.getComputedTiming().iterations !== Infinity);  // not a spinner
    const start = performance.now();
    await frame(); await frame();
    while (moving() && performance.now() - start < limit) await frame();
    return !moving();
}"""


def settle_frames(page, limit_ms: int = 2_000) -> bool:
    """Wait until what a key or a scroll changed is drawn and done moving (STILL_FRAMES); False if
    something still moved after `limit_ms`."""
    return page.evaluate(STILL_FRAMES, limit_ms)


def settle_layout(page) -> bool:
    """Wait until the page has stopped moving after a resize or a scroll (SETTLED_LAYOUT); False if
    it was still moving after SETTLE_LIMIT_MS."""
    return page.evaluate(SETTLED_LAYOUT, [SETTLE_LIMIT_MS, SETTLE_QUIET_MS])


def save_whole_page(page, path, width: int = 1400) -> None:
    """Screenshot the whole lesson `width` pixels wide: Streamlit scrolls inside its main pane, so grow
    the window to fit (at a phone's width, narrow it first: the page grows taller as it narrows)."""
    if width != page.viewport_size["width"]:
        page.set_viewport_size({"width": width, "height": 1000})
        settle_layout(page)
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], section.main, "
        "[data-testid=stAppViewContainer]')].map(e => e.scrollHeight), 1000)"
    )
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 16000)})
    settle_layout(page)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
