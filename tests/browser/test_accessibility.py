"""WCAG 2.1 A/AA in a real Chromium (issue 14): the rules and the framework's exemptions are in
tests/browser/axe.py, and each is checked on a page load that a sweep makes anyway: every lesson as loaded
and after Steps, and what a reader opens (answers, formulas, code, every chart's words) together with the
charts as readers with a colour-vision deficiency see them, in test_pages_in_chromium.py; every page in
Japanese (test_japanese_in_chromium.py) and at Engineer depth (test_depths_in_chromium.py). Here: that each
exemption says what it lets through, and why.
"""

from __future__ import annotations

import pytest

from tests.browser.axe import FRAMEWORK_ONLY

pytestmark = [pytest.mark.browser]


def test_framework_exemptions_name_a_rule_a_place_and_a_reason():
    for item in FRAMEWORK_ONLY:
        assert item.rule and "[data-testid=" in item.inside and len(item.why) > 40
