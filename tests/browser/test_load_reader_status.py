"""The load bench's Chromium reader reads a Step status line in the page with load_protocol's own
pattern: for every line, in Chromium, it finds the same step that `step_status` finds in Python."""

from __future__ import annotations

import html

import pytest

from bench.load.chromium import SHOWS_STEP
from bench.load.protocol import STEP_STATUS, step_status

pytestmark = pytest.mark.browser

LINES = [
    "token 3 of 40",
    "token 0 of 40",
    "letter 40 of 40 — the end; press Reset to start again",
    "Nothing read yet — Step replays from token 1 of 40",
    "A paragraph that says 3 of 4 things",
    "token 3 of forty",
]


@pytest.mark.parametrize("line", LINES)
def test_the_browser_finds_the_step_python_finds(page, line):
    page.set_content(f"<div data-testid='stMarkdownContainer'><p>{html.escape(line)}</p></div>")
    parsed = step_status(line)
    for t in (0, 3, 40):
        shown = page.evaluate(SHOWS_STEP, [t, STEP_STATUS.pattern])
        assert shown == (parsed is not None and parsed[0] == t), (line, t, parsed)
