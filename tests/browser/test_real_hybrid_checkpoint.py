"""The A real hybrid lesson in Chromium on a Qwen3.5 checkpoint in Hugging Face format, as a reader with
weights on disk sees it at Engineer depth (every picture): the layer map, Steps that move the board, α / β, cache and memory charts,
no exception, axe clean; desktop and phone screenshots go to artifacts/screenshots/real_hybrid/.

The checkpoint is a tiny random Qwen3.5 built here (bench/hf_tiny_qwen35.py), offered through
COURSE_QWEN35_PATH to one server of its own, with the Hub switched off and an empty HF cache.
"""

from __future__ import annotations

import pytest

from tests.browser.axe import assert_accessible
from tests.browser.conftest import (
    SCREENSHOTS,
    click_when_ready,
    link,
    new_context,
    save_whole_page,
    settle_layout,
    step_position,
    streamlit_server,
    wait_for_app,
)
from ui.course import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = SCREENSHOTS / "real_hybrid"
PHONE = {"width": 390, "height": 844}
CHARTS = ("rh_map", "rh_board", "rh_cache", "rh_fade", "rh_memory")


@pytest.fixture(scope="module")
def qwen_url(tmp_path_factory):
    pytest.importorskip("transformers")
    from bench.hf_tiny_qwen35 import make_checkpoint

    root = tmp_path_factory.mktemp("qwen35-checkpoint")
    folder = make_checkpoint(root / "tiny-random-qwen35")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("COURSE_QWEN35_PATH", str(folder))
        env.setenv("HF_HUB_OFFLINE", "1")
        env.setenv("HF_HOME", str(root / "hf-home"))
        env.delenv("HF_HUB_CACHE", raising=False)
        env.delenv("COURSE_PUBLIC", raising=False)
        with streamlit_server("streamlit-real-hybrid.log") as url:
            yield url


def _open_and_step(page, url: str) -> None:
    page.goto(url + link(lesson("real_hybrid")) + "?depth=engineer")  # the cache picture is an engineer's
    wait_for_app(page)
    page.wait_for_selector("h1", timeout=60_000)
    assert step_position(page) == 0  # the whole run before the first Step
    step = page.locator("[data-testid='stButton'] button", has_text="Step")
    for _ in range(4):
        click_when_ready(page, step.first)
    assert step_position(page) == 4, "Step did not advance four tokens"
    assert not page.locator("[data-testid='stException']").count(), "exception on real_hybrid"
    errors = page.locator("[data-testid='stAlertContentError']")
    assert not errors.count(), f"error on real_hybrid: {errors.first.inner_text()}"
    for key in CHARTS:
        assert page.locator(f".st-key-{key} .js-plotly-plot").count() == 1, f"{key} not drawn"
    text = page.locator("[data-testid='stMain']").inner_text()
    assert (
        "The layer map" in text and "released weights" in text and "What to see:" in text and "4 rows" in text
    )


def test_the_lesson_runs_the_checkpoint(page, qwen_url):
    _open_and_step(page, qwen_url)
    assert_accessible(page, "real_hybrid-checkpoint-stepped")
    settle_layout(page)  # plotly redraws the stepped charts a moment after Streamlit settles
    save_whole_page(page, SHOTS / "desktop.png")


def test_the_lesson_on_a_phone(browser, qwen_url):
    context = new_context(browser, viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1)
    page = context.new_page()
    try:
        _open_and_step(page, qwen_url)
        save_whole_page(page, SHOTS / "phone.png", width=PHONE["width"])
    finally:
        context.close()
