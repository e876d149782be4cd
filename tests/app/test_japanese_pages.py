"""Every page in Japanese under AppTest, as `?lang=ja` opens it: no exception, the header in Japanese,
and no English sentence left in anything the reader sees (tests/app/japanese.py). The pages'
interactions in Japanese are driven by tests/app/test_japanese_<part>.py."""

from __future__ import annotations

import pytest

from core.i18n import use_language
from tests.app.japanese import english_left, japanese
from ui.course import LESSONS, lesson

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("slug", [item.slug for item in LESSONS])
def test_page_reads_in_japanese(slug):
    at = japanese(slug)
    with use_language("ja"):
        title = lesson(slug).label
    assert at.title[0].value == title
    left = english_left(at)
    assert not left, f"{slug}: {len(left)} English sentences left, e.g. {left[:12]}"


def test_the_sidebar_reads_in_japanese():
    at = japanese("app.py")
    left = english_left(at)
    assert not left, f"router and sidebar: English left: {left[:12]}"
