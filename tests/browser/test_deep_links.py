"""A lesson's own link works on a freshly started server: the lesson, and no "Page not found" dialog.

Streamlit learns an `st.navigation` app's pages only when `app.py` first runs. If the page files
sat in a folder named `pages/`, it would first take them for an old-style page folder and tell
the very first reader of a deep link that the page does not exist (a dialog over the lesson).
The lessons live in `lessons/` for that reason; this test keeps it so.
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import streamlit_server, wait_for_app
from ui.course import COURSE, available

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# A fresh server per link costs ~8 s, so a sample: slugs whose link differs from the file name
# (kv_cache → kv-cache, kimi_k3 → kimi-k3), one that does not, and the last page of the outline.
SAMPLE = ("kv_cache", "deltanet", "kimi_k3", available()[-1].slug)
DEEP = [item for item in available() if item != COURSE.start and item.slug in SAMPLE]


@pytest.mark.parametrize("item", DEEP, ids=lambda item: item.slug)
def test_deep_link_on_a_fresh_server_shows_the_lesson(browser, item):
    with streamlit_server() as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        try:
            page.goto(f"{url}/{item.url_path}")
            wait_for_app(page)
            assert item.title in page.locator("h1").first.inner_text()
            dialogs = page.locator("[role='dialog']")
            texts = [dialogs.nth(i).inner_text() for i in range(dialogs.count())]
            assert not texts, f"{item.slug}: a dialog covers the lesson: {texts}"
        finally:
            context.close()
