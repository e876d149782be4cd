"""ui/gpu/words.py: the status lines the runner, NVML and a stored run keep in English (in its JSON, in the
CLI) read in Japanese on a Japanese page, and stay exactly as they are in English."""

from __future__ import annotations

import pytest

from core.gpu.decode.spill import check_host
from core.gpu.device import nvml
from core.gpu.serving import runner
from core.i18n import use_language
from tests.app.japanese import english_in, japanese_words
from ui.gpu.words import reader_line

LINES = {
    "no NVML bindings": nvml.NO_BINDINGS,
    "NVML not started": nvml.NOT_STARTED.format(error="NVMLError_Unknown"),
    "the GPU lost": nvml.LOST_MESSAGE.format(
        error=nvml.GONE.format(name="NVIDIA H200", reason=nvml.NO_GPU_LISTED)
    ),
    "the runner busy": runner.BUSY_MESSAGE,
    "the time limit": runner.LIMIT_REASON.format(minutes=10),
    "a series and its depth": "full attention: depth 2,048",
    "host RAM too small to spill": check_host(8 * 1024**3, 4 * 1024**3).message,
    "a batch that does not fit": "does not fit: room for 30 sequences at this depth",
    "no energy reading": "No energy reading: power is read through NVML, so only on an NVIDIA GPU.",
}
# lines whose Japanese is checked for English left in it too (the others quote a number or a name)
WHOLLY_JAPANESE = {"no NVML bindings", "NVML not started", "the GPU lost", "the runner busy", "the time limit",
                   "a series and its depth"}  # fmt: skip


@pytest.mark.parametrize("name", list(LINES))
def test_a_status_line_kept_in_english_reads_in_japanese(name):
    line = LINES[name]
    with use_language("en"):
        assert reader_line(line) == line  # English stays exactly as it is
    with use_language("ja"):
        shown = reader_line(line)
    assert japanese_words(shown), (line, shown)
    if name in WHOLLY_JAPANESE:
        assert english_in(shown) == [], (line, shown)


def test_the_time_limit_keeps_its_minutes():
    with use_language("ja"):
        assert "10" in reader_line(runner.LIMIT_REASON.format(minutes=10))
