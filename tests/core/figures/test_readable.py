"""Charts readable at a glance (issue 10): marks equal the counts shown, every byte labelled,
the right cell outlined on readback heatmaps, a legend for the map's bar colours."""

from __future__ import annotations

import numpy as np
import pytest

from core.figures import board as fb
from core.figures import chunks as fc
from core.figures.expert_routing import router_heatmap_figure
from core.figures.specs import memory_per_token_figure
from core.ops import forms
from core.specs import SPECS
from core.tokenizer import encode


@pytest.mark.parametrize(("T", "C"), [(32, 8), (30, 8), (8, 1), (64, 64), (13, 4)])
def test_hand_over_marks_equal_the_counts_shown(T, C):
    fig = fc.timeline_figure(T, C)
    steps, waits = forms.waits_in_line(T, C)
    top = [s for s in fig.layout.shapes if s.y0 > 0.5]
    bottom = [s for s in fig.layout.shapes if s.y0 < 0.5]
    assert (len(top), len(bottom)) == (steps, waits)


def test_router_heatmap_labels_every_byte_with_characters():
    text = encode("cat 猫")
    fig = router_heatmap_figure(np.zeros((len(text), 8)), text, 2, 1.0)
    labels = list(fig.data[0].y)
    assert len(labels) == len(text) and not any("xE" in label for label in labels)
    assert labels[0].startswith("1:") and labels[-1] == f"{len(text)}:猫 3/3"  # bytes count from 1, like Steps
    assert fig.layout.yaxis.dtick == 1


def test_readbacks_outline_the_right_value():
    readback = np.eye(3, 4, dtype=np.float32)
    fig = fb.compare_readbacks_figure(
        {"a": readback, "b": readback},
        ["k0", "k1", "k2"],
        value_names=["red", "blue", "green"],
        targets=[0, 2, 5],
    )
    outlines = [t for t in fig.data if t.type == "scatter"]
    assert len(outlines) == 2  # one per panel
    assert list(outlines[0].y) == ["k0", "k1"]  # value 5 owns no column: nothing to outline


def test_the_map_chart_has_a_legend_for_its_colours():
    fig = memory_per_token_figure(list(SPECS.values()))
    names = [t.name for t in fig.data if t.showlegend is not False]
    assert len(names) == 2 and any("MLA" in n for n in names) and any("GQA" in n for n in names)
