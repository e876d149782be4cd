"""The GPT-2 and KV cache pages in Chromium on a GPT-2 checkpoint in Hugging Face format, as a reader with released
weights sees them: the model switch, BPE tokens, the top-5 table, the KV cache page's cache size and its
cached == uncached check; desktop and phone screenshots go to artifacts/screenshots/gpt2_checkpoint/.

The checkpoint is a tiny random GPT-2 built here (bench/hf_tiny_gpt2.py), offered through
COURSE_GPT2_PATH to one server of its own, with the Hub switched off and an empty HF cache.
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import (
    GPT2_CHECKPOINT,
    SCREENSHOTS,
    click_when_ready,
    new_context,
    save_whole_page,
    wait_for_app,
)
from ui.course import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FOLDER_NAME = GPT2_CHECKPOINT
SHOTS = SCREENSHOTS / "gpt2_checkpoint"
PHONE = {"width": 390, "height": 844}

# What each lesson must show once the checkpoint runs (text of the main pane).
EXPECTED = {
    "gpt2": ["As tokens (", "What the model expected next", "Positions run this step", "matches the count"],
    "kv_cache": [
        "As tokens (",
        "What the model expected next",
        "Live cache size, from the model",
        "Same output as without a cache?",
        "Rows in the cache",
    ],
}


@pytest.fixture()
def checkpoint_url(gpt2_checkpoint_url):
    return gpt2_checkpoint_url  # the session's one server with the tiny GPT-2 (conftest.py)


def _open_on_checkpoint(page, url: str, slug: str) -> None:
    """Open a lesson, switch its model to the checkpoint and step three times."""
    page.goto(
        f"{url}/{lesson(slug).url_path}?depth=engineer"
    )  # the live cache size and top-5 are the engineers'
    wait_for_app(page)
    choice = page.locator("[data-testid='stRadio'] label", has_text=f"local checkpoint ({FOLDER_NAME})")
    click_when_ready(page, choice.first)
    step = page.locator("[data-testid='stButton'] button", has_text="Step")
    for _ in range(3):
        click_when_ready(page, step.first)


def _assert_reads_right(page, slug: str) -> None:
    """No exception or error box, the checkpoint's pieces on screen, and the live check agreeing."""
    main = page.locator("[data-testid='stMain']")
    assert not page.locator("[data-testid='stException']").count(), f"exception on {slug}"
    errors = page.locator("[data-testid='stAlertContentError']")
    assert not errors.count(), f"error on {slug}: {errors.first.inner_text()}"
    text = main.inner_text()
    assert "3 of" in text, "Step did not advance"
    missing = [want for want in EXPECTED[slug] if want not in text]
    assert not missing, f"{slug} does not show {missing}"
    assert page.locator(f".st-key-{'gpt2' if slug == 'gpt2' else 'kv'}_top5 .js-plotly-plot").count() == 1
    if slug == "kv_cache":
        same = page.locator("[data-testid='stMetric']", has_text="Same output as without a cache?")
        assert same.locator("[data-testid='stMetricValue']").inner_text().strip() == "yes"


@pytest.mark.parametrize("slug", ["gpt2", "kv_cache"])
def test_checkpoint_runs_in_the_lesson(page, checkpoint_url, slug):
    _open_on_checkpoint(page, checkpoint_url, slug)
    _assert_reads_right(page, slug)
    save_whole_page(page, SHOTS / f"{lesson(slug).number:02d}_{slug}.png")


@pytest.mark.parametrize("slug", ["kv_cache"])  # the KV cache page holds the GPT-2 page's parts and more
def test_checkpoint_on_a_phone(browser, checkpoint_url, slug):
    context = new_context(browser, viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1)
    page = context.new_page()
    try:
        _open_on_checkpoint(page, checkpoint_url, slug)
        _assert_reads_right(page, slug)
        save_whole_page(page, SHOTS / "phone" / f"{lesson(slug).number:02d}_{slug}.png", width=PHONE["width"])
    finally:
        context.close()
