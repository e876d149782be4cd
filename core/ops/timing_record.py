"""Chunks' shipped timing: one measurement of step-by-step vs chunked forms, with its date and
machine, so the page shows a real result before the reader presses Measure.

Regenerate with `python -m core.ops.timing_record` (writes assets/chunks/timing.json); the page then
offers "measure again here" for the reader's own settings.
"""

from __future__ import annotations

import json
import os
import platform
import re
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import torch

from core.i18n import _, list_of
from core.ops.forms import Timing, time_forms

PATH = Path(__file__).resolve().parents[2] / "assets" / "chunks" / "timing.json"
# the page's default setting: delta rule, 128 tokens, key/value size 32, chunks 4 … 64, 3 repeats
DEFAULT = {"rule": "delta", "T": 128, "d": 32, "chunk_sizes": [4, 8, 16, 32, 64], "repeats": 3}


@dataclass(frozen=True)
class ShippedTiming:
    rule: str
    T: int
    d: int
    repeats: int
    date: str  # ISO date of the measurement (UTC)
    machine: str  # CPU, core count, OS, torch version
    timings: list[Timing]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    return (
        f"{cpu}, {os.cpu_count()} cores (1 thread used), {platform.system()} {platform.release()}, "
        f"torch {torch.__version__}"
    )


_CORES = re.compile(r"(\d+) cores \(1 thread used\)")


def shown_machine(machine: str) -> str:
    """The stored machine line for the page, its one phrase of words in the reader's language
    (the CPU, OS and torch names stay as they are); in Japanese its parts are listed with 「、」."""
    shown = _CORES.sub(lambda m: _("{cores} cores (1 thread used)").format(cores=m[1]), machine)
    return list_of(shown.split(", "))


def measure(path: Path = PATH) -> ShippedTiming:
    """Time the default setting on this machine and save it."""
    timings = list(
        time_forms(
            DEFAULT["rule"], DEFAULT["T"], DEFAULT["d"], DEFAULT["chunk_sizes"], repeats=DEFAULT["repeats"]
        )
    )
    shipped = ShippedTiming(
        DEFAULT["rule"],
        DEFAULT["T"],
        DEFAULT["d"],
        DEFAULT["repeats"],
        datetime.now(UTC).date().isoformat(),
        machine(),
        timings,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(shipped), indent=1) + "\n", encoding="utf-8")
    return shipped


def load(path: Path = PATH) -> ShippedTiming | None:
    """The shipped measurement, or None when the file is missing or unreadable."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        raw["timings"] = [Timing(**t) for t in raw["timings"]]
        return ShippedTiming(**raw)
    except (OSError, ValueError, TypeError, KeyError):
        return None


if __name__ == "__main__":
    result = measure()
    print(f"{result.date} on {result.machine}")
    for t in result.timings:
        print(f"  {t.label:>14}: {t.ms:8.2f} ms  ({t.hand_overs} hand-overs)")
