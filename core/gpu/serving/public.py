"""The command a reader runs at home in place of the page's Run buttons, when the course is public.

In public mode (core/public.py) Your GPU shows the roofline, the published numbers and this command,
which runs the same benchmarks with the reader's choices on their own machine, and offers no Run button.
"""

from __future__ import annotations

import shlex

GIB = 1024**3


def home_command(preset: str, budget_bytes: int | None = None, out: str = "my_gpu.json") -> str:
    """The CLI line that runs the page's benchmarks with the reader's choices on their own machine."""
    args = ["python", "-m", "core.gpu.bench", "--preset", preset]
    if budget_bytes is not None:
        args += ["--vram-budget-gb", f"{budget_bytes / GIB:g}"]
    return shlex.join([*args, "--out", out])
