"""Timing decode steps: Stop is checked inside a repetition, and a CPU run says why it has no graph."""

from __future__ import annotations

import pytest
import torch

from core.gpu.decode.models import build
from core.gpu.presets import PRESETS
from core.gpu.timing import decode_timer
from core.gpu.timing.steps import Stopped

TINY = PRESETS["tiny"]
pytestmark = pytest.mark.usefixtures("one_thread")


def test_stop_is_checked_inside_a_repetition():
    model = build("attention", TINY, "cpu", torch.float32)
    model.allocate(64)
    model.fill(8)
    calls = []
    real = model.step
    model.step = lambda t: (calls.append(1), real(t))[1]
    tokens = decode_timer.random_tokens(TINY, torch.device("cpu"))
    with pytest.raises(Stopped):
        decode_timer.time_decode(
            model, 8, tokens, 16, 0, 3, lambda: None, should_stop=lambda: len(calls) >= 5
        )
    assert len(calls) == 5  # stopped after the fifth step, not at the end of the repetition


def test_cpu_timing_says_why_there_is_no_graph(env):
    model = build("state", TINY, "cpu", torch.float32)
    tokens = decode_timer.random_tokens(TINY, torch.device("cpu"))
    measured = decode_timer.time_at_depth(model, "state", TINY, env, tokens, 16)
    assert measured.graphed is None and measured.best is measured.eager and not measured.capped
    assert len(measured.eager.samples_tokens_per_s) == TINY.repeats
