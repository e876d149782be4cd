"""One download per release per process, however many readers press Download at once.

On a private course server every reader's page runs in the same process. Two readers pressing
"Download" for the same release must not start two downloads of the same 1.7 GB into the same
cache, so a press goes through `start(key, fetcher)`: the first press starts the fetch on a
background thread and records it under the release's key; a press while it runs gets the same
`Job` back and follows its progress. A finished job is forgotten, so a later press (after a failed
download, say) starts afresh. Public mode never gets here: its pages offer no Download button.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from core.models.hf_tokenizer import CheckpointError

Fetcher = Callable[..., Path]  # fetcher(key, report=report) -> folder, as core.models.fetch.download


@dataclass
class Job:
    """One running or finished download: its progress as bytes arrive, then a folder or an error."""

    key: str
    file: str = ""  # the file now arriving
    done: int = 0  # bytes of it so far
    total: int = 0
    folder: Path | None = None
    error: str | None = None  # one line
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 0.0

    def report(self, file: str, done: int, total: int) -> None:
        self.file, self.done, self.total = file, done, total

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once the download has ended (either way)."""
        return self.finished.wait(timeout_s)


_LOCK = threading.Lock()
_RUNNING: dict[str, Job] = {}


def start(key: str, fetcher: Fetcher) -> tuple[Job, bool]:
    """The download of `key`: (the job, True) if this call started it, (the running job, False) if
    another reader's press already had; the fetch runs on a daemon thread."""
    with _LOCK:
        job = _RUNNING.get(key)
        if job is not None:
            return job, False
        job = _RUNNING[key] = Job(key)
    # the thread runs in a copy of the caller's context, so its messages are in the language of the
    # reader who pressed Download (core/i18n.py keeps the language in a context variable)
    in_callers_context = contextvars.copy_context().run
    threading.Thread(
        target=in_callers_context, args=(_run, job, fetcher), daemon=True, name=f"download-{key}"
    ).start()
    return job, True


def running(key: str) -> Job | None:
    """The download of `key` now in progress, if any (a page shows its progress after a rerun)."""
    with _LOCK:
        return _RUNNING.get(key)


def _run(job: Job, fetcher: Fetcher) -> None:
    try:
        job.folder = fetcher(job.key, report=job.report)
    except CheckpointError as error:
        job.error = str(error)
    except Exception as error:  # any failure ends the job with one line, never a stuck registry
        job.error = " ".join(str(error).split())[:200] or type(error).__name__
    finally:
        with _LOCK:
            _RUNNING.pop(job.key, None)
        job.finished.set()
