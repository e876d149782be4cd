"""Graphed timing on the CPU: a stand-in graph that replays the same steps eagerly shows one warm
replay, then one replay per repetition, the time cap and Stop."""

from __future__ import annotations

import pytest
import torch

from core.gpu.decode.models import build
from core.gpu.presets import PRESETS
from core.gpu.timing import decode_timer
from core.gpu.timing.steps import Stopped

TINY = PRESETS["tiny"]
pytestmark = pytest.mark.usefixtures("one_thread")


class EagerGraph:
    """Stands in for a captured CUDA graph on the CPU: replay() runs the same steps eagerly."""

    def __init__(self, model, depth, tokens, n_steps):
        self.args, self.replays = (model, depth, tokens, n_steps), 0

    def replay(self):
        from core.gpu.timing.graphs import _run_steps

        self.replays += 1
        _run_steps(*self.args)


def test_graphed_timing_replays_once_per_repetition(monkeypatch):
    from core.gpu.timing import graphs

    made = []
    monkeypatch.setattr(graphs, "capture", lambda *a: made.append(EagerGraph(*a)) or made[-1])
    model = build("attention", TINY, "cpu", torch.float32)
    model.allocate(64)
    model.fill(8)
    tokens = decode_timer.random_tokens(TINY, torch.device("cpu"))
    timed = graphs.time_graphed(model, 8, tokens, 16, 3, should_stop=lambda: False)
    assert timed.method == "CUDA graph" and len(timed.samples_tokens_per_s) == 3 and not timed.capped
    assert made[0].replays == 1 + 3 and model.pos == 8  # one warm replay, then one per repetition
    capped = graphs.time_graphed(model, 8, tokens, 16, 3, should_stop=lambda: False, deadline=0.0)
    assert capped.capped and len(capped.samples_tokens_per_s) == 1
    with pytest.raises(Stopped):
        graphs.time_graphed(model, 8, tokens, 16, 3, should_stop=lambda: True)
