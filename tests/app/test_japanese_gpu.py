"""The Your GPU page in Japanese, on a machine without an NVIDIA GPU and in public mode: the page
renders with no exception and no English sentence left (tests/app/japanese.py) with its answers,
formula and the checkpoint picker open, and the committed run's charts speak Japanese. The status
lines the runner and NVML keep in English (ui/gpu/words.py) read in Japanese on the page."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.gpu.device import nvml
from core.gpu.serving import runner
from core.i18n import use_language
from tests.app.driver import assert_clean, chart_spec, page_path
from tests.app.japanese import KANA_OR_KANJI, no_english
from ui.gpu.words import reader_line

pytestmark = pytest.mark.slow


def japanese(page: str, timeout: float = 300, depth: str = "engineer") -> AppTest:
    """The page in Japanese at `depth` (Engineer unless told: it has every control to open)."""
    at = AppTest.from_file(page_path(page), default_timeout=timeout)
    at.query_params["lang"] = "ja"
    at.query_params["depth"] = depth
    at.run()
    assert_clean(at, f"first run of {page} in Japanese at {depth} depth")
    return at


def test_your_gpu_reads_in_japanese_without_a_gpu():
    with use_language("ja"):
        at = japanese("your_gpu", timeout=300)
        no_english(at, "first run")
        for key in (
            "gpu_notice_depth_reveal",
            "gpu_notice_spill_reveal",
            "gpu_notice_moe_reveal",
            "gpu_formula",
        ):
            at.toggle(key=key).set_value(True).run()
        at.toggle(key="gpu_ckpt_open").set_value(True).run()
        no_english(at, "answers, formula and the checkpoint picker open")
        at.selectbox(key="gpu_preset").set_value("tiny").run()
        no_english(at, "the tiny preset")


def test_the_committed_run_charts_are_japanese():
    with use_language("ja"):
        at = japanese("your_gpu", timeout=300)
        spec = chart_spec(at, "gpu_committed_context_fig")
        axes = [spec["layout"][axis]["title"]["text"] for axis in ("yaxis", "xaxis2")]
        assert all(KANA_OR_KANJI.search(text) for text in axes), axes
        names = [trace["name"] for trace in spec["data"] if trace.get("name")]
        assert names and all(KANA_OR_KANJI.search(name) for name in names), names
        story = japanese("your_gpu", timeout=300, depth="story")  # Story's two pictures
        no_english(story, "Story")
        depth = chart_spec(story, "gpu_committed_depth_fig")
        axes = [depth["layout"][axis]["title"]["text"] for axis in ("xaxis", "yaxis")]
        assert all(KANA_OR_KANJI.search(text) for text in axes), axes
        assert all(KANA_OR_KANJI.search(t["name"]) for t in depth["data"])
        moe = chart_spec(story, "gpu_committed_moe_story_fig")
        titles = [a["text"] for a in moe["layout"]["annotations"]]  # the two panels' titles
        assert len(titles) == 2 and all(KANA_OR_KANJI.search(t) for t in titles), titles
        assert all(KANA_OR_KANJI.search(x) for t in moe["data"] for x in t["x"])


def test_public_mode_reads_in_japanese(monkeypatch):
    monkeypatch.setenv("COURSE_PUBLIC", "1")
    with use_language("ja"):
        for depth in ("story", "engineer"):
            at = japanese("your_gpu", timeout=300, depth=depth)
            no_english(at, f"public mode at {depth} depth")


def test_status_lines_kept_in_english_read_in_japanese():
    lines = (
        nvml.NO_BINDINGS,
        nvml.NOT_STARTED.format(error="NVMLError_Unknown"),
        nvml.LOST_MESSAGE.format(error=nvml.GONE.format(name="NVIDIA H200", reason=nvml.NO_GPU_LISTED)),
        runner.BUSY_MESSAGE,
        runner.LIMIT_REASON.format(minutes=10),
        "full attention: depth 2,048",
    )
    with use_language("en"):
        assert [reader_line(line) for line in lines] == list(lines)  # English stays exactly as it is
    with use_language("ja"):
        for line in lines:
            shown = reader_line(line)
            assert KANA_OR_KANJI.search(shown) and english_left_in(shown) == [], (line, shown)
        assert "10" in reader_line(runner.LIMIT_REASON.format(minutes=10))


def english_left_in(text: str) -> list[str]:
    from tests.app.japanese import english_in

    return english_in(text)
