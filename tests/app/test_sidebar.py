"""The router's sidebar says where the live models compute, and which machine the Your GPU page measures."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app import driver
from ui.course import lesson, lesson_ref


def sidebar_text() -> str:
    at = AppTest.from_file(str(driver.ROOT / "app.py"), default_timeout=120)
    at.run()
    driver.assert_clean(at, "router start")
    return " ".join(c.value for c in at.sidebar.caption)


def test_sidebar_says_where_the_models_compute_and_what_the_gpu_page_measures():
    text = sidebar_text()
    # the models run on the serving machine: the reader's own only when they run the course themselves
    assert "compute live on the server that sends you this page" in text
    assert "your own machine when you start it yourself with ./run.sh" in text
    gpu = lesson("your_gpu")
    assert f"The {gpu.title} page ({lesson_ref('your_gpu')}) measures the machine that server runs on" in text
    assert "for your session" not in text  # the old wording read as if each reader had a machine of their own
