"""The files of this checkout as git sees them: tracked, or untracked but not ignored (what a commit would hold)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def git_files() -> list[str]:
    """Paths relative to the repository root; skips the calling test outside a git checkout."""
    try:
        return subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
