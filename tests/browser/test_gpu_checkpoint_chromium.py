"""Your GPU's "your own checkpoint" section in Chromium: a tiny random GPT-2 offered through
COURSE_GPT2_PATH to a server of its own (Hub off, empty HF cache) is picked, run on the CPU, and its
chart and table appear; the section's screenshot goes to artifacts/screenshots/gpu_checkpoint.png."""

from __future__ import annotations

import pytest

from tests.browser.conftest import (
    GPT2_CHECKPOINT,
    SCREENSHOTS,
    click_when_ready,
    save_whole_page,
    wait_for_app,
)
from ui.course import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FOLDER_NAME = GPT2_CHECKPOINT


@pytest.fixture()
def checkpoint_url(gpt2_checkpoint_url):
    return gpt2_checkpoint_url  # the session's one server with the tiny GPT-2 (conftest.py)


def test_the_tiny_checkpoint_runs_to_a_chart(page, checkpoint_url):
    page.goto(f"{checkpoint_url}/{lesson('your_gpu').url_path}?depth=engineer")  # the section is Engineer's
    wait_for_app(page)
    section = page.locator(".st-key-gpu_ckpt_open")
    click_when_ready(page, section.locator("label").first)  # the toggle
    main = page.locator("[data-testid='stMain']")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=stMain]').innerText.includes('Depths to time')",
        timeout=60_000,
    )
    assert f"{FOLDER_NAME}: gpt2," in main.inner_text()  # the caption of the checked folder
    click_when_ready(page, page.locator("[data-testid='stButton'] button", has_text="Run: my checkpoint"))
    chart = page.locator(".st-key-gpu_ckpt_fig .js-plotly-plot")
    chart.wait_for(timeout=120_000)
    wait_for_app(page)
    assert not page.locator("[data-testid='stException']").count()
    errors = page.locator("[data-testid='stAlertContentError']")
    assert not errors.count(), errors.first.inner_text()
    text = main.inner_text()
    assert "measured vs roofline" in text and "tokens per second" in chart.inner_text()
    assert "% of roofline" in text and "Checked: the cache tensors" in text
    chart.scroll_into_view_if_needed()
    save_whole_page(page, SCREENSHOTS / "10_your_gpu_checkpoint_full.png")
    heading = page.locator("[data-testid='stMarkdownContainer'] h4", has_text="Your own checkpoint")
    top = heading.bounding_box()["y"]
    end = page.locator(".st-key-gpu_ckpt_json").bounding_box()
    height = end["y"] + end["height"] - top + 60
    page.screenshot(
        path=str(SCREENSHOTS / "gpu_checkpoint.png"),
        clip={"x": 0, "y": max(0, top - 20), "width": 1400, "height": height},
    )
