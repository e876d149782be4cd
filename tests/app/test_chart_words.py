"""Every chart a lesson draws carries its text alternative (issue 14), computed from the chart shown.

`ui.charts.show_figure` puts a "Describe this chart" expander under each plotly chart; its words
must be those `core.figures.describe` computes from the very figure on screen, also after Steps.
"""

from __future__ import annotations

import pytest

from core.figures.describe import chart_title, describe
from core.figures.style import contrast_ratio
from tests.app import driver
from ui.charts import _escape_markdown

LABEL = "Describe this chart"


def _charts_and_words(at) -> list[tuple[dict, str]]:
    charts = driver.chart_specs(at)
    words = [e.markdown[0].value for e in at.expander if e.label == LABEL]
    assert len(words) == len(charts), f"{len(charts)} charts but {len(words)} descriptions"
    return list(zip(charts, words, strict=True))


def _check(at, where: str) -> int:
    pairs = _charts_and_words(at)
    for spec, shown in pairs:
        assert shown == _escape_markdown(describe(spec)), f"{where}: words differ from the chart shown"
        assert len(shown) > 30, f"{where}: a description too short to help: {shown!r}"
        title = chart_title(spec)  # moved out of the plot, shown as text above it (ui.lesson.untitled)
        if title:  # the words name the chart by its title
            assert describe({"data": [], "layout": {"title": title}}).removesuffix(".")[7:] in shown.replace(
                "\\", ""
            )
    return len(pairs)


@pytest.mark.parametrize("slug", ["map", "kv_cache", "primer", "deltanet", "kimi_k3", "what_changed"])
def test_every_chart_has_words_that_match_it(slug):
    at = driver.fresh(slug)
    assert _check(at, slug) >= 1


def test_the_words_follow_the_steps():
    at = driver.fresh("kv_cache")
    before = [words for _, words in _charts_and_words(at)]
    for _ in range(3):
        at.button(key="kv_t_step").click().run()
    driver.assert_clean(at, "three steps")
    after = [words for _, words in _charts_and_words(at)]
    assert before != after, "the descriptions did not change with the step"
    _check(at, "kv_cache after 3 steps")


def _text_colours(spec: dict) -> list[tuple[str, str]]:
    """(where, colour) for every text colour a chart sets: fonts, titles, ticks, legend, notes, labels."""
    layout = spec["layout"]
    found = [("font", (layout.get("font") or {}).get("color"))]
    title = layout.get("title")
    if isinstance(title, dict):
        found.append(("title", (title.get("font") or {}).get("color")))
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            found.append((f"{name} ticks", (axis.get("tickfont") or {}).get("color")))
            axis_title = axis.get("title")
            if isinstance(axis_title, dict):
                found.append((f"{name} title", (axis_title.get("font") or {}).get("color")))
    found.append(("legend", ((layout.get("legend") or {}).get("font") or {}).get("color")))
    for note in layout.get("annotations", []):
        found.append((f"note {note.get('text', '')[:30]!r}", (note.get("font") or {}).get("color")))
    for trace in spec["data"]:
        colour = (trace.get("textfont") or {}).get("color")
        found.append((f"labels of {trace.get('name', '')!r}", colour if isinstance(colour, str) else None))
    return [(where, colour) for where, colour in found if isinstance(colour, str) and colour.startswith("#")]


@pytest.mark.parametrize(
    "slug", ["map", "gpt2", "kv_cache", "collisions", "kimi_k3", "your_gpu", "what_changed"]
)
def test_every_text_on_a_chart_reads_at_aa_contrast(slug):
    """Ticks, legends, titles, notes and value labels: 4.5 : 1 on the white plot (WCAG 1.4.3)."""
    at = driver.fresh(slug)
    specs = driver.chart_specs(at)
    assert specs
    for spec in specs:
        assert spec["layout"].get("plot_bgcolor", "white") in ("white", "#ffffff", "#fff")
        low = [(w, c, round(contrast_ratio(c), 2)) for w, c in _text_colours(spec) if contrast_ratio(c) < 4.5]
        assert not low, f"{slug}: text below 4.5 : 1: {low}"
