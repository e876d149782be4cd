"""One real Chromium reader beside the simulated ones: the check that the simulation is what a browser does.

It opens the lesson in Debian's Chromium through Playwright (as tests/browser/ do), clicks Step once
per interval, and measures click → the status line showing the new step with the script finished.
It checks the same things as a simulated reader: the counter moved by its own clicks, and the
generated text equals the offline run. It never moves a setting (it checks the page's default).
"""

from __future__ import annotations

import asyncio
import time

from bench.load.lessons import LessonDrive
from bench.load.protocol import STEP_STATUS, step_status
from bench.load.reader import ReaderLog
from bench.load.server import CHROMIUM_FLAGS, chromium_path

IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
# load_protocol.step_status in the page, polled by the browser itself: the status line shows step t.
# It is given STEP_STATUS's own pattern (JavaScript reads it alike; `s` is Python's re.S).
SHOWS_STEP = """([t, pattern]) => {
    const status = new RegExp(pattern, 's');
    return [...document.querySelectorAll('[data-testid=stMarkdownContainer] p')].some(p => {
        const found = p.innerText.replaceAll('**', '').trim().match(status);
        return found !== null && (found[3] ? 0 : Number(found[1])) === t;
    });
}"""


def _status(page):
    """The paragraph that holds the Step controls' status line."""
    return page.locator("[data-testid='stMarkdownContainer'] p", has_text=STEP_STATUS).first


async def _position(page) -> tuple[int, int]:
    """(step shown, steps in the run) from the status line on the page."""
    shown = step_status(await _status(page).inner_text())
    if shown is None:
        raise LookupError("no step status line on the page")
    return shown


async def chromium_reader(
    base_url: str, drive: LessonDrive, window, interval: float, ready: asyncio.Event
) -> ReaderLog:
    """Load the lesson, set `ready`, wait for `window.opened`, then step until `window.end`
    (time.monotonic()); clicks inside the window are timed."""
    from playwright.async_api import async_playwright

    log = ReaderLog()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            start = time.perf_counter()
            await page.goto(f"{base_url.rstrip('/')}/{drive.url_path}", timeout=180_000)
            await page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']")
            await _settled(page)
            log.load_s = time.perf_counter() - start
            _, total = await _position(page)
            await page.locator("[data-testid='stCode']").first.wait_for(timeout=120_000)
            await _settled(page)
            await _check(page, drive, 0, log)
            ready.set()
            await window.opened.wait()
            t, next_click = 0, window.start
            while next_click < window.end:
                await asyncio.sleep(max(0.0, next_click - time.monotonic()))
                label = "Reset" if t >= total else "Step"
                start = time.perf_counter()
                await page.locator("[data-testid='stButton'] button", has_text=label).first.click(
                    timeout=60_000
                )
                t = 0 if t >= total else t + 1
                await page.wait_for_function(SHOWS_STEP, arg=[t, STEP_STATUS.pattern], timeout=60_000)
                await page.wait_for_selector(IDLE, timeout=120_000)
                took = time.perf_counter() - start  # click → new step shown, script finished
                await _settled(page)
                log.step_s.append(took)
                await _check(page, drive, t, log)
                next_click = max(next_click + interval, time.monotonic())
        except Exception as error:  # a browser that cannot go on is one error, not a crash of the run
            log.errors.append(f"chromium: {type(error).__name__}: {str(error)[:200]}")
            ready.set()
        finally:
            await browser.close()
    return log


async def _settled(page) -> None:
    """The script is not running, twice a beat apart (a rerun may begin just after a click), and
    nothing on the page is a placeholder or stale (as tests/browser/conftest.py's wait_for_app)."""
    for _ in range(2):
        await page.wait_for_selector(IDLE, timeout=120_000)
        await page.wait_for_timeout(100)
    await page.wait_for_function(
        "() => !document.querySelector('[data-testid=stSkeleton], [data-stale=true]')", timeout=120_000
    )


async def _check(page, drive: LessonDrive, t: int, log: ReaderLog) -> None:
    log.checks += 1
    shown_t, _ = await _position(page)
    if shown_t != t:
        log.crosstalk.append(f"chromium: the counter shows {shown_t}, its own clicks make {t}")
    for kind in ("stException", "stAlertContentError"):
        if await page.locator(f"[data-testid='{kind}']").count():
            log.errors.append(f"chromium: a {kind} element at step {t}")
    expected = drive.text_at(drive.default, t)
    if expected is None:
        return
    log.text_checks += 1
    # the browser's rendering may fold blank lines: compare the words
    shown = [text.split() for text in await page.locator("[data-testid='stCode'] code").all_inner_texts()]
    if expected.split() not in shown:
        log.crosstalk.append(f"chromium: at step {t} the text is not the offline run's {expected[:40]!r}")
