"""A figure as a plain dict (core/figures/figure_dict.py): its words are read from the dict before
its arrays are encoded, and say the same as the figure's."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.figures import generation as fg
from core.figures.describe import describe
from core.figures.figure_dict import as_dict, encoded


def test_the_words_are_read_from_the_dict_before_it_is_encoded():
    """The plain dict keeps numpy arrays (nothing to decode), and says what the figure says."""
    fig = go.Figure(go.Heatmap(z=np.arange(6, dtype=np.float32).reshape(2, 3), zmin=0, zmax=5))
    plain = as_dict(fig)
    assert isinstance(plain["data"][0]["z"], np.ndarray)
    assert encoded(plain) == fig.to_dict() and isinstance(plain["data"][0]["z"], np.ndarray)  # not mutated
    assert describe(plain) == describe(fig)
    step = fg.top_next_step(as_dict(fg.top_next_figure([(0, 0.0)] * 2)), [(97, 0.75), (98, 0.25)])
    assert isinstance(step, dict) and describe(step) == describe(fg.top_next_figure([(97, 0.75), (98, 0.25)]))
