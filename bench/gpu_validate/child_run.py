"""Run a command in its own process under a hard time limit: what the validator (bench.gpu_validate) runs its
riskier checks in (newer kernels, the end-to-end benchmark).

A sticky CUDA error (an illegal memory access) poisons the process it happens in, and a kernel that
hangs never returns: in a child process either costs only that child. At the limit (or when the
caller is stopped) the child gets SIGTERM, so it can stop cleanly and keep what it measured; one
that has not ended `grace_s` later is killed.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ChildRun:
    """How a child ended: its exit status (negative: the signal that ended it), its output, how long
    it ran, and whether it hit the time limit or was killed after the grace."""

    exit_status: int
    output: str
    seconds: float
    timed_out: bool
    killed: bool

    @property
    def tail(self) -> str:
        return self.output[-3000:]


def run_with_limit(
    cmd: Sequence[str],
    limit_s: float,
    grace_s: float,
    should_stop: Callable[[], bool] = lambda: False,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    echo: Callable[[str], None] | None = None,
) -> ChildRun:
    """Run `cmd` (stdout and stderr together); SIGTERM at `limit_s` or when `should_stop()`, SIGKILL
    `grace_s` after that. `echo(line)` sees each line of output as it comes."""
    proc = subprocess.Popen(
        list(cmd), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if echo is not None:
                echo(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    t0 = time.perf_counter()
    timed_out = killed = False
    while proc.poll() is None:
        over = time.perf_counter() - t0 > limit_s
        if over or should_stop():
            timed_out = over
            proc.send_signal(signal.SIGTERM)  # it stops cleanly and keeps what it measured
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                killed = True
            break
        time.sleep(0.1)
    proc.wait()
    reader.join(5)
    return ChildRun(proc.returncode, "".join(lines), time.perf_counter() - t0, timed_out, killed)
