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


@pytest.fixture(autouse=True)
def own_cache_dir(tmp_path_factory, monkeypatch):
    """Each test gets an empty COURSE_CACHE_DIR: Your GPU's stored last run never leaks between tests
    or from the reader's own ~/.cache."""
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path_factory.mktemp("course_cache")))


def pytest_configure(config) -> None:
    """`COURSE_EXTRA_RULE=name`: register the delta rule under a new key before collection, so the
    rule-parametrised tests run for it too (tests/core/test_mechanisms.py proves a new rule is covered)."""
    import os
    import tempfile

    # servers the browser tests start inherit this: an empty cache, not the reader's own
    os.environ.setdefault("COURSE_CACHE_DIR", tempfile.mkdtemp(prefix="course_cache_"))
    name = os.environ.get("COURSE_EXTRA_RULE")
    if name:
        from dataclasses import replace

        from core import mechanisms

        mechanisms.register(
            replace(mechanisms.get("delta"), key=name, label=f"DeltaNet ({name})", color="#5c940d")
        )


def tracked_asset(relative: str):
    """A file the repository ships (tracked in git): a test that needs it fails when it is gone,
    never skips — a missing checkpoint is a broken checkout, not an optional extra."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / relative
    assert path.is_file(), (
        f"{relative} is tracked in git and missing: restore it (git checkout -- {relative}) or rebuild it "
        "(python -m core.train --help)"
    )
    return path


@pytest.fixture
def gpt2_checkpoint():
    return tracked_asset("assets/gpt2/model.pt")


@pytest.fixture
def mini_k3_checkpoint():
    return tracked_asset("assets/mini_k3/model.pt")
