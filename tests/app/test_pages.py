"""Every lesson page runs under AppTest and survives a reader poking every widget."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app import driver
from ui.course import LESSONS, available

PAGES = [pytest.param(item.file, id=item.slug) for item in available()]


def test_router_lists_exactly_the_existing_lessons():
    at = AppTest.from_file(str(driver.ROOT / "app.py"), default_timeout=120)
    at.run()
    driver.assert_clean(at, "router start")
    assert available(), "no lesson pages exist"
    assert all(item.exists == (item in available()) for item in LESSONS)


@pytest.mark.parametrize("path", PAGES)
def test_router_opens_page(path):
    at = AppTest.from_file(str(driver.ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(path).run()
    driver.assert_clean(at, f"switching to {path}")
    assert at.title, f"{path} shows no title"


@pytest.mark.slow
@pytest.mark.parametrize("path", PAGES)
def test_page_survives_a_curious_reader(path):
    at = driver.fresh(path)
    driver.type_text(at)
    driver.try_selectboxes(at)
    driver.sweep_sliders(at)
    driver.click_steps(at, times=20)
