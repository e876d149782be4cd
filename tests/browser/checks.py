"""The checks run on one page load, collected: a lesson is loaded once per language, depth and width, and
every check of that load runs on it, so one failing check must not hide the others behind it."""

from __future__ import annotations

import contextlib

import pytest


class Findings:
    """Failed checks of one page load. `with findings.check("what"):` records a failed assertion (or
    pytest.fail) under that name and goes on; `report()` fails the test listing them all. An error
    that is not a failed check (a timeout, a crash) ends the test at once, with the failures so far."""

    def __init__(self, where: str):
        self.where = where
        self.failed: list[str] = []

    @contextlib.contextmanager
    def check(self, what: str):
        try:
            yield
        except (AssertionError, pytest.fail.Exception) as failure:
            self.failed.append(f"{what}: {str(failure).strip()}")

    def __enter__(self) -> Findings:
        return self

    def __exit__(self, kind, error, _traceback) -> None:
        if error is not None and self.failed and not isinstance(error, pytest.skip.Exception):
            pytest.fail(f"{self._summary()}\nand then {kind.__name__}: {error}", pytrace=True)
        if error is None:
            self.report()

    def report(self) -> None:
        if self.failed:
            pytest.fail(self._summary())

    def _summary(self) -> str:
        lines = "\n".join(f"- {failure}" for failure in self.failed)
        return f"{len(self.failed)} check(s) failed on {self.where}:\n{lines}"


def assert_no_exception(page, where: str) -> None:
    """No Streamlit exception box on the page (its text, up to 2,000 characters, in the failure)."""
    boxes = page.locator("[data-testid='stException']")
    if boxes.count():
        pytest.fail(f"Streamlit exception on {where}: {boxes.first.inner_text()[:2000]}")
