"""Test-wide settings: one torch thread (the tiny models are overhead-bound, and CI has 2 cores)."""

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture
def one_thread():
    """One torch thread for the test, and the count it found put back after — so a test that
    changes the thread count cannot leak it. Use with `pytestmark = pytest.mark.usefixtures("one_thread")`
    (tiny tensors on a shared 2-core machine: one thread is faster and steadier)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def pytest_configure(config) -> None:
    """`COURSE_EXTRA_RULE=name`: register the delta rule under a new key before collection, so the
    rule-parametrised tests run for it too (tests/test_mechanisms.py proves a new rule is covered)."""
    import os

    name = os.environ.get("COURSE_EXTRA_RULE")
    if name:
        from dataclasses import replace

        from core import mechanisms

        mechanisms.register(
            replace(mechanisms.get("delta"), key=name, label=f"DeltaNet ({name})", color="#5c940d")
        )
