"""One simulated reader: a websocket session that opens a lesson, moves a setting and clicks Step.

It speaks the browser's protocol (`bench/load/protocol.py`): a plain GET of the page first (the
browser loads index.html, and behind nginx that is where the sticky cookie is set), then the
websocket `/_stcore/stream` with the cookies, an Origin header and the `streamlit` subprotocol.

After every run it checks what it sees against what it did — the cross-talk check:
the step counter moved exactly by its own clicks (Step: +1 up to the end, Reset: back to 0), and
the generated text equals the offline run of its own setting (`bench/load/lessons.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie

from websockets.asyncio.client import connect

from bench.load.lessons import LessonDrive, Setting
from bench.load.protocol import PageView, rerun_msg, trigger

RUN_TIMEOUT_S = 120.0  # a run that has not finished by then is an error (and ends this reader)


@dataclass
class ReaderLog:
    """What one reader measured and saw."""

    step_s: list[float] = field(default_factory=list)  # click → script_finished, clicks inside the window
    move_s: list[float] = field(default_factory=list)  # setting moved → script_finished
    load_s: float | None = None  # page load: first rerun → script_finished
    step_bytes: int = 0  # bytes received for the window's clicks
    errors: list[str] = field(default_factory=list)  # exceptions, error boxes, timeouts, lost connections
    crosstalk: list[str] = field(default_factory=list)  # counter or text not what this reader did
    checks: int = 0  # runs checked (counter, and text where its offline run is known)
    text_checks: int = 0
    page_not_found: int = 0


class Reader:
    def __init__(self, index: int, base_url: str, drive: LessonDrive, check_text: bool = True):
        self.index, self.base_url, self.drive, self.check_text = (
            index,
            base_url.rstrip("/"),
            drive,
            check_text,
        )
        self.view = PageView()
        self.log = ReaderLog()
        self.setting: Setting = drive.default
        self.expected_t = 0
        self.total = 0
        self._ws = None
        self._ids: dict[str, str] = {}

    # -- the session ----------------------------------------------------------------------------

    async def open(self) -> None:
        """GET the page (cookies), connect the websocket, and load the lesson as a browser does."""
        page_url = f"{self.base_url}/{self.drive.url_path}"
        cookie = await asyncio.to_thread(_cookies_of, page_url)
        ws_url = "ws" + self.base_url.removeprefix("http") + "/_stcore/stream"
        headers = {"Cookie": cookie} if cookie else None
        self._ws = await connect(
            ws_url,
            subprotocols=["streamlit"],
            origin=self.base_url,
            additional_headers=headers,
            max_size=None,
            open_timeout=60,
            ping_interval=None,  # a browser sends no pings of its own: a starved server must not end the session
        )
        self.log.load_s = await self._run(rerun_msg(page_name=self.drive.url_path, url=page_url))
        self._ids = {key: self.view.widget(key)[0] for key in self.drive.widget_keys}
        self._check()

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()

    async def move(self, setting: Setting) -> float:
        """Move the lesson's setting (a slider, or the text); the step counter stays where it was,
        or at the new run's end if that run is shorter (as step_controls clamps it)."""
        self.setting = setting
        took = await self._run(self._rerun())
        self.log.move_s.append(took)
        with contextlib.suppress(LookupError):  # no counter: _check reports it
            self.expected_t = min(self.expected_t, self.view.counter()[1])
        self._check()
        return took

    async def click(self, in_window: bool) -> float:
        """Step, or Reset at the end of the run; checks the page after."""
        at_end = self.total and self.expected_t >= self.total
        key = f"{self.drive.step_key}_{'reset' if at_end else 'step'}"
        widget_id, fragment_id = self.view.widget(key)
        before = self.view.bytes_received
        took = await self._run(self._rerun(trigger(widget_id), fragment_id=fragment_id), fragment_id)
        self.expected_t = 0 if at_end else self.expected_t + 1
        if in_window:
            self.log.step_s.append(took)
            self.log.step_bytes += self.view.bytes_received - before
        self._check()
        return took

    # -- the wire -------------------------------------------------------------------------------

    def _rerun(self, *extra, fragment_id: str = "") -> bytes:
        states = self.drive.states(self.setting, self._ids) if self.setting != self.drive.default else []
        return rerun_msg(
            page_script_hash=self.view.page_script_hash,
            widgets=[*states, *extra],
            fragment_id=fragment_id,
            cached_hashes=self.view.cached_hashes(),
            url=f"{self.base_url}/{self.drive.url_path}",
        )

    async def _run(self, message: bytes, fragment_id: str = "") -> float:
        """Send one rerun and read the server's messages until that run finishes; returns seconds."""
        self.view.start_run(fragment_id)
        errors_before = len(self.view.errors)
        start = time.perf_counter()
        await self._ws.send(message)
        async with asyncio.timeout(RUN_TIMEOUT_S):
            while True:
                self.view.apply(await self._ws.recv())
                if self.view.finished not in (None, "early"):
                    break
        took = time.perf_counter() - start
        if self.view.finished == "compile_error":
            self.log.errors.append(f"reader {self.index}: the script did not compile")
        self.log.errors.extend(f"reader {self.index}: {e}" for e in self.view.errors[errors_before:])
        self.log.page_not_found = self.view.page_not_found
        return took

    # -- the cross-talk check -------------------------------------------------------------------

    def _check(self) -> None:
        t, self.total = self.view.counter()
        self.log.checks += 1
        who = f"reader {self.index}"
        if t != self.expected_t:
            self.log.crosstalk.append(f"{who}: counter shows {t}, its own clicks make {self.expected_t}")
        if not self.check_text:
            return
        expected = self.drive.text_at(self.setting, t)
        if expected is None:
            return
        self.log.text_checks += 1
        shown = self.view.code_texts()
        if expected not in shown:
            got = shown[0][:60] if shown else "no text"
            self.log.crosstalk.append(f"{who}: at step {t} the text is {got!r}, offline {expected[:60]!r}")


def _cookies_of(url: str) -> str:
    """GET the page like a browser's first request; returns the cookies it set, as a Cookie header."""
    with urllib.request.urlopen(url, timeout=60) as response:
        response.read()
        jar = SimpleCookie()
        for header in response.headers.get_all("Set-Cookie") or []:
            jar.load(header)
    return "; ".join(f"{name}={morsel.value}" for name, morsel in jar.items())
