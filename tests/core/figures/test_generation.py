"""The GPT-2 and KV cache pages' charts (core/figures/generation.py) are built once per run and patched per step:
each patched step is the figure a fresh build at that step gives (cheaper Step clicks, nothing a
reader sees changes)."""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio

from core.figures import generation as fg
from core.figures.figure_dict import encoded


def _spec(fig) -> dict:
    """What the reader gets: a step is the patched dict, sent encoded (ui.charts.show_figure)."""
    return json.loads(pio.to_json(encoded(fig) if isinstance(fig, dict) else fig, validate=False))


def test_work_and_time_charts_patched_per_step_equal_a_fresh_build():
    steps = list(range(1, 31))
    counted = [s * (s + 1) // 2 for s in steps]
    formula = list(counted)
    cached = list(steps)
    rng = np.random.default_rng(0)
    plain_ms, cached_ms = list(rng.random(30) * 10), list(rng.random(30))
    for with_cache in (None, cached):
        base = fg.work_figure(steps, counted, formula, with_cache, shown=30).to_dict()
        for t in range(31):
            assert _spec(fg.work_step(base, steps, counted, with_cache, t)) == _spec(
                fg.work_figure(steps, counted, formula, with_cache, shown=t)
            )
    for other in (None, cached_ms):
        base = fg.ms_per_token_figure(steps, plain_ms, other, shown=30).to_dict()
        for t in range(31):
            assert _spec(fg.ms_per_token_step(base, steps, plain_ms, other, t)) == _spec(
                fg.ms_per_token_figure(steps, plain_ms, other, shown=t)
            )


def test_top_next_chart_patched_per_step_equals_a_fresh_build():
    base = fg.top_next_figure([(0, 0.0)] * 5).to_dict()
    for top in (
        [(97, 0.5), (98, 0.2), (99, 0.1), (100, 0.05), (101, 0.01)],
        [(65, 0.9), (10, 0.05)] * 2 + [(0, 0.0)],
    ):
        assert _spec(fg.top_next_step(base, top)) == _spec(fg.top_next_figure(top))
