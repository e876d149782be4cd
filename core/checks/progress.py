"""What the reader's browser keeps of their progress: the lessons whose check they passed (issue 45).

Progress lives in the reader's own browser (localStorage under `STORAGE_KEY`), never on the server: no
account, nothing stored for anyone else to see. The browser reports what it holds as plain JSON, which
may be old, hand-edited or from a version of the course with other lessons, so `read_stored` keeps only
the slugs that name a lesson with a check today, and ignores everything else.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

STORAGE_KEY = "gpt2-to-k3-progress"  # course-specific: another app on the same host keeps its own
VERSION = 1


def read_stored(raw: object, known: Iterable[str]) -> frozenset[str]:
    """The lessons `raw` (what the browser stored: a JSON text, or the object parsed from it) marks done,
    among `known`; anything unreadable is nothing done."""
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except ValueError:
            return frozenset()
    if isinstance(raw, dict):
        raw = raw.get("done")
    if not isinstance(raw, list):
        return frozenset()
    return frozenset(slug for slug in raw if isinstance(slug, str)) & frozenset(known)


def stored_form(done: Iterable[str]) -> dict:
    """What the browser stores for `done`: a versioned record, slugs in a fixed order."""
    return {"version": VERSION, "done": sorted(done)}
