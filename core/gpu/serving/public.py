"""Public mode: a course hosted for anyone measures nothing on its shared server.

`COURSE_PUBLIC=1` (also true/yes/on) is read here and nowhere else. On a shared server a
benchmark would measure the server, not the reader's GPU, and would make every other reader
wait; so lesson 10 then shows the roofline, the published numbers and the command that runs
the same benchmarks at home (`home_command`), and offers no Run button.
"""

from __future__ import annotations

import os
import shlex

ENV_VAR = "COURSE_PUBLIC"
GIB = 1024**3


def public_mode() -> bool:
    """Whether this server is in public mode (the COURSE_PUBLIC environment variable)."""
    return os.environ.get(ENV_VAR, "").strip().lower() in {"1", "true", "yes", "on"}


def home_command(preset: str, budget_bytes: int | None = None, out: str = "my_gpu.json") -> str:
    """The CLI line that runs the page's benchmarks with the reader's choices on their own machine."""
    args = ["python", "-m", "core.gpu.bench", "--preset", preset]
    if budget_bytes is not None:
        args += ["--vram-budget-gb", f"{budget_bytes / GIB:g}"]
    return shlex.join([*args, "--out", out])
