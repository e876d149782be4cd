"""What a benchmark CLI needs around the measuring: checked arguments, a results file written
after every part, and a clean stop on Ctrl-C or SIGTERM.

- `Parser`: argparse whose errors are one line and exit status 2 (never a usage dump or a
  traceback); `positive_float`, `positive_int`, `increasing_list` (depths, batches, prompt lengths) and
  `check_out_path` are the checks (the last
  really creates a scratch file, so an unwritable path fails before the run, not after it).
- `ResultFile`: writes the JSON atomically (temp file + rename), so a run killed half-way
  leaves the last complete version on disk, never a truncated one.
- `StopOnSignal`: SIGINT and SIGTERM set an event the benchmarks poll (`should_stop`), so they
  finish the current step, mark the result stopped and keep what was measured; a second
  Ctrl-C interrupts at once.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def fail(prog: str, message: str) -> NoReturn:
    """A bad argument found after parsing: one line, exit status 2."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def positive_float(text: str) -> float:
    """A finite number above zero (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number above zero")
    return value


def positive_int(text: str) -> int:
    """A whole number ≥ 1 (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def increasing_list(text: str, items: str, least: int, named: str | None = None) -> tuple[int, ...]:
    """'1,4,16' → (1, 4, 16): increasing whole numbers ≥ `least`, else a one-line argument error naming
    the `items` listed (and, in the second, `named` them, default the same words)."""
    try:
        found = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of {items}") from None
    if not found or found[0] < least or list(found) != sorted(set(found)):
        raise argparse.ArgumentTypeError(
            f"{text!r}: {named or items} must be increasing whole numbers ≥ {least}"
        )
    return found


def depth_list(text: str) -> tuple[int, ...]:
    """'0,1024,4096' → (0, 1024, 4096): increasing, each ≥ 0 (argparse type)."""
    return increasing_list(text, "depths", 0)


def check_out_path(path: Path, is_dir: bool = False) -> str | None:
    """Why `path` cannot be written (None when it can): the file, or the folder when `is_dir`."""
    folder = path if is_dir else path.parent
    if not is_dir and path.is_dir():
        return f"--out {path} is a folder, not a file"
    if is_dir and path.exists() and not path.is_dir():
        return f"{path} is a file, not a folder"
    probe = folder
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"cannot write in {probe}"
    if not is_dir and path.exists() and not os.access(path, os.W_OK):
        return f"cannot overwrite {path}"
    return _try_writing(probe)


def _try_writing(folder: Path) -> str | None:
    """Create and remove a scratch file in `folder`: os.access says yes to root even where the
    file system says no (/sys, /proc, a read-only mount), and the run would fail only at its end."""
    try:
        fd, scratch = tempfile.mkstemp(prefix=".write-test.", dir=folder)
    except OSError as error:
        return f"cannot write in {folder} ({error.strerror or type(error).__name__})"
    os.close(fd)
    Path(scratch).unlink(missing_ok=True)
    return None


class ResultFile:
    """A JSON file rewritten whole, atomically, every time `write` is called."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writes = 0

    def write(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.writes += 1


class StopOnSignal:
    """`with StopOnSignal() as stop:` — SIGINT/SIGTERM set `stop.event`; `stop.signal` says which."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal: int | None = None
        self._old: dict[int, Any] = {}

    def is_set(self) -> bool:
        return self.event.is_set()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.event.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: stop now
        self.signal = signum
        self.event.set()
        print(
            f"\n{signal.Signals(signum).name}: stopping after the current step; what was measured is kept",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)

    @property
    def exit_code(self) -> int:
        """128 + the signal number (130 for Ctrl-C, 143 for SIGTERM), or 0."""
        return 0 if self.signal is None else 128 + self.signal
