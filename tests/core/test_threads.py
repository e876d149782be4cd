"""torch's process-wide thread count (core/threads.py): the app sets it once, at start-up, and no page
or request changes it again; `threads(n)` changes it only when asked for another count."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

import core.threads
from core.models.gpt2 import GPT2, GPT2Config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def set_calls(monkeypatch):
    """Every torch.set_num_threads call made from now on (any thread), passed through to torch."""
    calls: list[int] = []
    real = torch.set_num_threads

    def spy(n: int) -> None:
        calls.append(n)
        real(n)

    before = torch.get_num_threads()
    monkeypatch.setattr(torch, "set_num_threads", spy)
    yield calls
    real(before)


def test_the_app_sets_the_thread_count_once_and_pages_never_change_it(monkeypatch, set_calls):
    monkeypatch.setattr(core.threads, "_fixed", None)  # as in a fresh server process
    torch.set_num_threads(2)  # what torch starts with on this machine
    set_calls.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    for page in ("lessons/gpt2.py", "lessons/linear_attention.py", "lessons/chunks.py"):
        at.switch_page(page).run()  # run_generation(threads=1), core.board and the forms' one_thread
        assert not at.exception, (page, at.exception)
    at.run()
    assert set_calls == [1], "the app may set torch's thread count once, at start-up, and never again"


def test_threads_changes_the_count_only_when_asked_for_another(set_calls):
    from core.generation import run_generation
    from core.ops.forms import one_thread

    torch.set_num_threads(1)
    set_calls.clear()
    with one_thread(), core.threads.threads(1), core.threads.threads(None):
        pass
    assert set_calls == []  # the app's case: already one thread
    torch.manual_seed(0)
    gpt2 = GPT2(GPT2Config(n_layer=1, n_head=2, d_model=16, block_size=32)).eval()
    run_generation(gpt2, list(b"ab"), 2, threads=1)
    assert set_calls == []
    with core.threads.threads(2):  # a command line's --threads 2
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == 1 and set_calls == [2, 1]
    with pytest.raises(ValueError, match="at least 1"):
        core.threads.set_once(0)
