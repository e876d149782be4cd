"""The last finished benchmark on this machine, kept as a small JSON file, so Your GPU's default view
shows a measurement (with its date and device) instead of only the roofline.

Where: `$COURSE_CACHE_DIR`, else `~/.cache/gpt2-to-k3/`; one file per machine (host name).
"""

from __future__ import annotations

import json
import os
import platform
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.gpu.output.result import batch_from_dict, context_from_dict, moe_from_dict
from core.gpu.suites.batch_bench import BatchResult
from core.gpu.suites.context_bench import ContextResult
from core.gpu.suites.moe_bench import MoeResult
from core.i18n import N_

UNREADABLE = N_("Ignored the stored last measurement: it could not be read ({error}).")  # the page translates it

VERSION = 1
__all__ = ["LastRun", "batch_from_dict", "context_from_dict", "load", "moe_from_dict", "path", "save"]


@dataclass(frozen=True)
class LastRun:
    saved_at: str  # ISO 8601, UTC
    machine: str
    context: ContextResult | None
    moe: MoeResult | None
    batch: BatchResult | None = None  # the batch sweep of the same run as `context`; None in older files

    @property
    def date(self) -> str:
        """The save time as a reader reads it: '2026-11-30 15:20 UTC'."""
        try:
            return datetime.fromisoformat(self.saved_at).strftime("%Y-%m-%d %H:%M UTC")
        except ValueError:
            return self.saved_at

    @property
    def device(self) -> str:
        result = self.context or self.moe
        return result.device if result is not None else "unknown device"


def cache_dir() -> Path:
    env = os.environ.get("COURSE_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "gpt2-to-k3"


def path() -> Path:
    machine = re.sub(r"[^A-Za-z0-9._-]", "_", platform.node() or "this-machine")
    return cache_dir() / f"last_gpu_run_{machine}.json"


def load() -> tuple[LastRun | None, str | None]:
    """(the stored run, None), (None, None) when nothing is stored, or (None, a one-line note) when
    the file is there but unreadable — it is then ignored, never raised."""
    p = path()
    if not p.exists():
        return None, None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        context = context_from_dict(data["context"]) if data.get("context") else None
        moe = moe_from_dict(data["moe"]) if data.get("moe") else None
        batch = batch_from_dict(data["batch"]) if data.get("batch") else None
        if context is None and moe is None:
            raise ValueError("no result in it")
        return LastRun(str(data["saved_at"]), str(data.get("machine", "")), context, moe, batch), None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return (  # no path in the note: readers never see where the server keeps its files
            None,
            UNREADABLE.format(error=type(exc).__name__),
        )


def save(
    context: ContextResult | None = None, moe: MoeResult | None = None, batch: BatchResult | None = None
) -> None:
    """Store a finished result, keeping the other benchmark's last result; `batch` belongs to `context`
    (a new context run without one drops the old batch sweep). Failing to write is not an error."""
    previous, _ = load()
    if previous is not None:
        if context is None:
            context, batch = previous.context, previous.batch
        moe = moe or previous.moe
    data = {
        "version": VERSION,
        "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "context": context.to_dict() if context is not None else None,
        "moe": moe.to_dict() if moe is not None else None,
        "batch": batch.to_dict() if batch is not None else None,
    }
    p = path()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, allow_nan=True), encoding="utf-8")
        tmp.replace(p)
    except OSError:
        pass
