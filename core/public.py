"""Public mode: a course hosted for anyone starts nothing heavy on its shared server.

`COURSE_PUBLIC=1` (also true/yes/on) is read here and nowhere else, by every page that would
otherwise start work for one reader on a machine all readers share: Your GPU's benchmarks (they
would measure the server, not the reader's GPU, and make everyone wait) and the Download buttons of
released weights (gigabytes into the server's disk). Those pages show the command to run at home
instead (docs/deploy.md).
"""

from __future__ import annotations

import os

ENV_VAR = "COURSE_PUBLIC"


def public_mode() -> bool:
    """Whether this server is in public mode (the COURSE_PUBLIC environment variable)."""
    return os.environ.get(ENV_VAR, "").strip().lower() in {"1", "true", "yes", "on"}
