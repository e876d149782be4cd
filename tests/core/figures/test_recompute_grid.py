"""The GPT-2 and KV cache pages' "which positions ran" grid (core/figures/recompute_grid.py): it frames a dozen
steps, a triangle without a cache and a diagonal with one."""

from __future__ import annotations

import numpy as np
import pytest

from core.figures import recompute_grid as fg
from core.figures.recompute_grid import GRID_STEPS, NEW, NOT_RUN, RECOMPUTED, GridFrame, grid_counts
from core.generation import Sampling, run_generation
from core.models.gpt2 import GPT2
from core.tokenizer import encode

PROMPT = "One day, "
N_STEPS = 30


@pytest.fixture(scope="module")
def runs():
    model = GPT2.load()
    ids = encode(PROMPT)
    return {
        cache: run_generation(model, ids, N_STEPS, use_cache=cache, sampling=Sampling())
        for cache in (False, True)
    }


def grid_of(fig) -> tuple[np.ndarray, np.ndarray]:
    trace = fig.data[0]
    return np.asarray(trace.z, dtype=float), np.asarray(trace.y)


def test_frame_is_the_first_dozen_then_follows_the_newest_step():
    assert GridFrame.at(30, 0) == GridFrame(1, GRID_STEPS, GRID_STEPS)  # the untouched default: all filled
    assert GridFrame.at(30, 3) == GridFrame(1, GRID_STEPS, 3)  # fills downwards in a fixed frame
    assert GridFrame.at(30, 20) == GridFrame(20 - GRID_STEPS + 1, 20, 20)  # the newest dozen
    assert GridFrame.at(5, 0) == GridFrame(1, 5, 5)  # a short run: all of it
    assert GridFrame.at(0, 0).filled == 0


def test_default_view_without_cache_is_the_whole_triangle(runs):
    run = runs[False]
    p = len(run.prompt_ids)
    fig = fg.recompute_grid_figure(run.traces, 0, p, "title")
    z, y = grid_of(fig)
    assert z.shape[0] >= 12 and list(y) == list(range(1, GRID_STEPS + 1))
    assert tuple(fig.layout.yaxis.range) == (GRID_STEPS + 0.5, 0.5)  # the frame holds exactly these rows
    for row, step in enumerate(y):
        newest = p + step - 2  # the position read at this step
        ran = z[row] != NOT_RUN
        assert ran[: newest + 1].all() and not ran[newest + 1 :].any()  # every position <= newest ran
        assert z[row, newest] == NEW
    assert (z == RECOMPUTED).sum() > (z == NEW).sum()  # mostly work done again
    assert "steps 1–12 of 30" in fig.layout.title.text


def test_default_view_with_cache_is_the_diagonal(runs):
    run = runs[True]
    p = len(run.prompt_ids)
    z, y = grid_of(fg.recompute_grid_figure(run.traces, 0, p, ""))
    assert z.shape[0] >= 12
    assert (z[0, :p] == NEW).all() and (z[0, p:] == NOT_RUN).all()  # step 1 reads the prompt
    for row in range(1, len(y)):
        assert np.flatnonzero(z[row] != NOT_RUN).tolist() == [p + row - 1]  # then one new position a step
    assert not (z == RECOMPUTED).any()


def test_past_a_dozen_the_frame_slides_and_the_counts_follow(runs):
    run = runs[False]
    p = len(run.prompt_ids)
    fig = fg.recompute_grid_figure(run.traces, 20, p, "")
    z, y = grid_of(fig)
    assert list(y) == list(range(9, 21)) and z.shape[1] == p + 19  # columns up to the newest position
    counts = grid_counts(run.traces, 20)
    assert counts.new == GRID_STEPS and counts.total == sum(p + s - 1 for s in range(9, 21))
    cached = grid_counts(runs[True].traces, 0)
    assert cached.recomputed == 0 and cached.new == p + GRID_STEPS - 1
