"""tests/browser/checks.Findings: every failed check of a page load is reported, none hides the next, and an
error that is not a failed check still ends the test, naming the failures before it."""

from __future__ import annotations

import pytest

from tests.browser.checks import Findings


def test_every_failed_check_is_reported_and_the_rest_still_run():
    ran = []
    with pytest.raises(pytest.fail.Exception) as failure:
        with Findings("a page") as findings:
            with findings.check("first"):
                assert 1 == 2, "one is not two"
            with findings.check("second"):
                ran.append("second")
            with findings.check("third"):
                pytest.fail("three went wrong")
    text = str(failure.value)
    assert ran == ["second"]
    assert text.startswith("2 check(s) failed on a page:")
    assert "- first: one is not two" in text and "- third: three went wrong" in text
    assert "second" not in text


def test_no_failed_check_passes():
    with Findings("a page") as findings:
        with findings.check("fine"):
            assert True
    assert findings.failed == []


def test_an_error_ends_the_test_with_the_failures_before_it():
    with pytest.raises(pytest.fail.Exception) as failure:
        with Findings("a page") as findings:
            with findings.check("first"):
                raise AssertionError("cut label")
            raise TimeoutError("the page never settled")
    text = str(failure.value)
    assert "- first: cut label" in text and "TimeoutError: the page never settled" in text


def test_an_error_with_no_failed_check_is_left_as_it_is():
    with pytest.raises(TimeoutError):
        with Findings("a page"):
            raise TimeoutError("the page never settled")
