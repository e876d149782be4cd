"""A course server for the load test and the browser tests, and what it costs: CPU seconds and
resident memory from /proc. Also how we launch Debian's Chromium (tests/browser/ and python -m bench.load).

CPU is read from /proc/<pid>/stat (utime + stime) rather than timed on the wall clock: the machine
may be shared, and the figure that decides how many readers a process holds is its own CPU per step.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TICK = os.sysconf("SC_CLK_TCK")


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


def chromium_path() -> str | None:
    """Debian's chromium (Playwright cannot download its own browsers here), or None."""
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)


def lesson_list(parser: argparse.ArgumentParser, text: str, known: Collection[str]) -> list[str]:
    """`--lesson`'s comma-separated slugs as a list; an unknown one ends the run through `parser.error`."""
    lessons = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in lessons if s not in known]
    if unknown:
        parser.error(f"unknown lesson {', '.join(unknown)}; known: {', '.join(known)}")
    return lessons


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU the process has used so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # fields 14 and 15 of stat(5)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise ValueError(f"no VmRSS for pid {pid}")


def wait_healthy(url: str, timeout_s: float = 120.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode} before it was healthy")
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not become healthy in {timeout_s:.0f} s")


def server_command(port: int) -> list[str]:
    """`streamlit run app.py` on loopback (the load test and tests/browser/ both start it so)."""
    return [
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
    ]


@contextlib.contextmanager
def course_server(
    log_path: Path, command: Callable[[int], list[str]] = server_command, port: int | None = None
) -> Iterator[tuple[str, int]]:
    """A fresh server on `port` (default: a free one; `command(port)` starts it); yields (url, pid)
    and stops it (terminate, then kill) after."""
    port = port or free_port()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            command(port),
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, proc=proc)
            yield url, proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Meter:
    """CPU and RSS of the server processes (one, or the K behind nginx); empty when not known."""

    def __init__(self, pids: list[int]):
        self.pids = pids

    def cpu(self) -> float | None:
        return sum(cpu_seconds(p) for p in self.pids) if self.pids else None

    def rss(self) -> list[int]:
        return [rss_bytes(p) for p in self.pids]
