"""A real Streamlit server and Debian's Chromium, driven by Playwright.

`playwright install` cannot download browsers here, so we launch the system
Chromium (`apt-get install chromium`). Without it these tests skip loudly.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


@contextlib.contextmanager
def streamlit_server(log_name: str = "streamlit-browser-test.log"):
    """A fresh Streamlit server for the course on a free loopback port; yields its URL, stops it after."""
    port = _free_port()
    (ROOT / "artifacts").mkdir(exist_ok=True)
    log = open(ROOT / "artifacts" / log_name, "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
            "--global.developmentMode",
            "false",
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("streamlit server did not become healthy in 90 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def server_url():
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    path = _chromium()
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


def wait_for_app(page, timeout_ms: int = 180_000) -> None:
    """Wait until Streamlit is connected, its script has finished, and nothing is still loading.

    A rerun can begin a moment after a click or a page load, so 'not running' must
    hold twice, a beat apart; skeletons are the placeholders of elements still coming.
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
