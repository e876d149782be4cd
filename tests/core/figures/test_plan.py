"""A pasted or linked config's name reaches plotly titles as text, never as markup (plotly draws
<b>, <a href> and friends in titles, so a shared link could otherwise plant a clickable link)."""

from __future__ import annotations

import json
from pathlib import Path

from core.figures.plan import context_figure, memory_figure
from core.plan import PlanInputs, parse, plan

LLAMA = Path(__file__).resolve().parents[3] / "assets" / "configs" / "llama3_1_8b.json"


def test_a_config_name_with_markup_is_shown_as_text_in_every_title():
    data = json.loads(LLAMA.read_text())
    data["_name_or_path"] = '<a href="https://evil.example">click</a><b>bold</b>'
    model = parse(data)
    one = plan(model, PlanInputs(context=4096, card="h100_80gb"))
    for fig in (memory_figure(one), context_figure([one])):
        title = fig.layout.title.text
        assert "<a" not in title and "<b>" not in title
        assert "&lt;a href=" in title  # still there, as text the reader can read
