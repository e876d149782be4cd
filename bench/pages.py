"""Warm rerun time of every lesson page and the time of one Step click (AppTest).

    .venv/bin/python bench/pages.py            # all pages, median of 5
    .venv/bin/python bench/pages.py kv_cache 5 # only these lessons (slug or number)

Targets on 2 cores: <= 0.3 s per warm rerun, <= 150 ms per Step click. This
prints figures; it never fails — the targets are for people, not CI.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from ui.course import available  # noqa: E402

REPEATS = 5


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def bench_page(path: str) -> tuple[float, float, float | None]:
    at = AppTest.from_file(str(ROOT / path), default_timeout=300)
    cold = timed(at.run)
    warm = statistics.median(timed(at.run) for _ in range(REPEATS))
    step_keys = [b.key for b in at.button if b.key and b.key.endswith("_step")]
    step = None
    if step_keys:
        button = step_keys[0]
        step = statistics.median(timed(lambda: at.button(key=button).click().run()) for _ in range(REPEATS))
    if at.exception:
        print(f"  !! {path} raised: {at.exception[0].value}")
    return cold, warm, step


def main(argv: list[str]) -> None:
    lessons = [
        item
        for item in available()
        if not argv or {item.slug, str(item.number), f"{item.number:02d}"} & set(argv)
    ]
    print(
        f"{'page':34s} {'cold s':>8s} {'warm s':>8s} {'step ms':>8s}  target: warm <= 0.30 s, step <= 150 ms"
    )
    for item in lessons:
        cold, warm, step = bench_page(item.file)
        step_text = f"{step * 1000:8.0f}" if step is not None else "       -"
        flag = "" if warm <= 0.3 and (step is None or step <= 0.15) else "  (over target)"
        print(f"{item.file:34s} {cold:8.2f} {warm:8.3f} {step_text}{flag}")


if __name__ == "__main__":
    main(sys.argv[1:])
