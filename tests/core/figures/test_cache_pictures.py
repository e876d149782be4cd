"""The GPT-2 and KV cache pages' cache heatmaps (core/figures/cache_pictures.py): they outline the row each step
appends, with channel ticks that cannot run into the next panel's."""

from __future__ import annotations

import pytest

from core.figures import cache_pictures as fc
from core.generation import Sampling, run_generation
from core.models.gpt2 import GPT2
from core.tokenizer import encode

PROMPT = "One day, "
N_STEPS = 30


@pytest.fixture(scope="module")
def runs():
    """The cached run only (the grid's tests also run without a cache), keyed as there."""
    return {True: run_generation(GPT2.load(), encode(PROMPT), N_STEPS, use_cache=True, sampling=Sampling())}


def test_cache_heatmaps_outline_the_newest_row_and_keep_ticks_apart(runs):
    run = runs[True]
    final = run.traces[-1].layers[0]
    ids = run.prompt_ids + run.new_ids
    width = final.keys.shape[2]
    fig = fc.cache_heatmaps_figure(fc.HeadCache(final.keys, final.values, 0, ids), 15)
    outlines = [s for s in fig.layout.shapes if s.visible is not False]
    assert len(outlines) == 2 and {s.y0 for s in outlines} == {13.5}  # row 14, the newest of 15
    for axis in (fig.layout.xaxis, fig.layout.xaxis2):
        assert max(axis.tickvals) <= width * 0.75 and axis.tickangle == 0  # none at the panel's edge
    assert len(fig.layout.yaxis.title.text) <= 26  # "cached row (one per token)" fits a phone's ~300 px plot
    # each panel's title centred over its panel (plotly's "auto" anchor pushed them together on a phone)
    titles = fig.layout.annotations
    assert [a.xanchor for a in titles] == ["center", "center"]
    assert [a.x for a in titles] == [sum(fig.layout.xaxis.domain) / 2, sum(fig.layout.xaxis2.domain) / 2]
    empty = fc.cache_heatmaps_figure(fc.HeadCache(final.keys, final.values, 0, ids), 0)
    assert all(s.visible is False for s in empty.layout.shapes)
